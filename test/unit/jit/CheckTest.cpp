// Check mode (KILN_CHECK, TraceOptions::check): a compiled call that agrees with the
// interpreter returns its results; one that does not is a CheckError naming the first op
// whose result differs. A compiler that is wrong on purpose (it rewrites kiln.exp into
// kiln.sin before compiling) stands in for a compiler bug.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "frontend/jit/Check.h"
#include "frontend/jit/Context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kiln/kiln.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "runtime/Executable.h"
#include "test/unit/jit/WrongCompiler.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

// The largest |a - b| over elements of equal shapes (infinity where the shapes differ).
double maxDiff(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return INFINITY;
  return max(abs(sub(a.to(kFloat64), b.to(kFloat64)))).item<double>();
}

constexpr const char* kProgram = R"mlir(
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = kiln.tanh %x : tensor<4x8xf32> loc("model.cpp":10:3)
  %b = kiln.exp %a : tensor<4x8xf32> loc("model.cpp":11:3)
  %c = kiln.add %b, %x : tensor<4x8xf32> loc("model.cpp":12:3)
  return %c : tensor<4x8xf32>
}
)mlir";

class CheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_ = jit::makeContext();
    module_ = mlir::parseSourceString<mlir::ModuleOp>(kProgram, context_.get());
    ASSERT_TRUE(module_);
    main_ = *module_->getOps<mlir::func::FuncOp>().begin();
    manual_seed(7);
    x_ = randn({4, 8});
  }

  // The compiler under test: right, or wrong at every kiln.exp.
  static std::shared_ptr<const runtime::Executable> compile(mlir::func::FuncOp func, bool wrong) {
    return testing::compileExpAsSin(func, wrong);
  }

  jit::CheckedProgram program(bool wrongProbe) const {
    return {main_, nullptr, "program 'test'", {},
            [wrongProbe](mlir::func::FuncOp probe) { return compile(probe, wrongProbe); }};
  }

  std::string checkError(const jit::CheckedProgram& checked,
                         const std::function<std::vector<Tensor>(std::span<const Tensor>)>& run) {
    try {
      jit::runChecked(checked, std::vector<Tensor>{x_}, run, SourceLoc::current());
    } catch (const CheckError& e) {
      return e.what();
    }
    return "";
  }

  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::func::FuncOp main_;
  Tensor x_;
};

TEST_F(CheckTest, AgreeingCompiledRunReturnsItsResults) {
  auto exe = compile(main_, /*wrong=*/false);
  std::vector<Tensor> got = jit::runChecked(
      program(false), std::vector<Tensor>{x_},
      [&](std::span<const Tensor> args) { return exe->run(args); }, SourceLoc::current());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LT(maxDiff(got[0], add(exp(tanh(x_)), x_)), 1e-5);
}

TEST_F(CheckTest, NamesTheFirstOpWhoseResultDiffers) {
  auto exe = compile(main_, /*wrong=*/true);
  std::string message = checkError(program(/*wrongProbe=*/true), [&](std::span<const Tensor> args) {
    return exe->run(args);
  });
  EXPECT_THAT(message, HasSubstr("kiln::check: program 'test': 'kiln.exp' at model.cpp:11:3"));
  EXPECT_THAT(message, HasSubstr("computes another value compiled than in the reference interpreter"));
  // Where the first differing element is, and both values (sin and exp of the same
  // tanh differ everywhere: sin is below 1 and exp of a value in (-1, 1) above 1/e).
  EXPECT_THAT(message, HasSubstr("at [0, 0] of float32 [4, 8]: compiled "));
  EXPECT_THAT(message, HasSubstr(", interpreter "));
  EXPECT_THAT(message, HasSubstr("(32 of 32 elements differ"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("kiln.tanh")));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("kiln.add")));
}

TEST_F(CheckTest, ADifferenceTheProbeDoesNotShowNamesTheResult) {
  auto exe = compile(main_, /*wrong=*/false);
  std::string message = checkError(program(/*wrongProbe=*/false), [&](std::span<const Tensor> args) {
    std::vector<Tensor> out = exe->run(args);
    out[0] = add(out[0], 1.0);
    return out;
  });
  EXPECT_THAT(message, HasSubstr("result 0 (which comes from 'kiln.add' at model.cpp:12:3)"));
  EXPECT_THAT(message, HasSubstr("32 of 32 elements differ"));
  EXPECT_THAT(message, HasSubstr("how the compiler combined ops"));
}

TEST_F(CheckTest, DifferencesWithinToleranceAgree) {
  auto exe = compile(main_, /*wrong=*/false);
  auto scaledBy = [&](double factor) {
    return [&, factor](std::span<const Tensor> args) {
      std::vector<Tensor> out = exe->run(args);
      out[0] = mul(out[0], factor);
      return out;
    };
  };
  EXPECT_EQ(checkError(program(false), scaledBy(1 + 2e-5)), "");
  EXPECT_THAT(checkError(program(false), scaledBy(1 + 1e-3)), HasSubstr("result 0"));
  jit::CheckedProgram loose = program(false);
  loose.options.rtol = 1e-2;
  EXPECT_EQ(checkError(loose, scaledBy(1 + 1e-3)), "");
}

// A float64 value computed from float32 ones carries float32's rounding, so it is held to
// float32's tolerance (kiln-fuzz seed 109737: a float32 batch_norm converted to float64
// was reported at float64's).
TEST(CheckTolerance, FollowsTheLoosestDTypeAValueIsComputedFrom) {
  auto context = jit::makeContext();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
func.func @main(%x: tensor<6xf32>, %y: tensor<6xf64>) -> (tensor<6xf64>, tensor<6xf64>) {
  %a = kiln.convert %x : tensor<6xf32> to f64
  %b = kiln.exp %a : tensor<6xf64>
  %c = kiln.exp %y : tensor<6xf64>
  return %b, %c : tensor<6xf64>, tensor<6xf64>
}
)mlir", context.get());
  ASSERT_TRUE(module);
  auto main = *module->getOps<mlir::func::FuncOp>().begin();
  auto exe = runtime::Executable::compile(main, nullptr, "test", SourceLoc::current());
  const jit::CheckedProgram program{main, nullptr, "program 'mixed'", {},
                                    [](mlir::func::FuncOp) { return nullptr; }};
  manual_seed(11);
  const std::vector<Tensor> args{randn({6}), randn({6}, kFloat64)};
  auto scaled = [&](size_t k, double factor) {
    return [&, k, factor](std::span<const Tensor> in) {
      std::vector<Tensor> out = exe->run(in);
      out[k] = mul(out[k], factor);
      return out;
    };
  };
  auto error = [&](auto run) {
    try {
      jit::runChecked(program, args, run, SourceLoc::current());
    } catch (const CheckError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error(scaled(0, 1 + 1e-6)), "");  // float32-sized, from float32 data
  EXPECT_THAT(error(scaled(0, 1 + 1e-3)), HasSubstr("result 0"));
  EXPECT_THAT(error(scaled(1, 1 + 1e-6)), HasSubstr("result 1"));  // float64 throughout
}

TEST(CheckTolerance, ByDType) {
  EXPECT_EQ(jit::toleranceFor(kFloat32, {}).rtol, 1e-4);
  EXPECT_EQ(jit::toleranceFor(kFloat64, {}).rtol, 1e-9);
  EXPECT_EQ(jit::toleranceFor(kInt64, {.rtol = 0.5, .atol = 0.5}).atol, 0);
  EXPECT_EQ(jit::toleranceFor(kFloat32, {.rtol = 0.5}).rtol, 0.5);
}

// The issue-19 case-1 program under check mode on the real compiler: it agrees now, by
// value and symbolic, and the results are the compiled ones.
TEST(CheckModeTrace, TracedProgramAgreesAndReturnsItsResults) {
  for (bool symbolic : {false, true}) {
    auto fn = [](const Tensor& x0, const Tensor& x1) {
      return layer_norm(add(x1, add(mul(x0, -1.5), 0.25)), {20});
    };
    auto traced = jit::trace(fn, {.symbolic = symbolic, .check = {.enabled = true}});
    manual_seed(3);
    Tensor x0 = randn({5, 1, 20}), x1 = randn({5, 20});
    for (int call = 0; call < 3; ++call) {
      Tensor got = traced(x0, x1);
      EXPECT_LT(maxDiff(got, fn(x0, x1)), 1e-4) << "symbolic " << symbolic;
    }
  }
}

// Check mode runs a compiled call beside the interpreter, so a host callback in the program
// runs twice per compiled call (once compiled, once interpreted); without it, once.
TEST(CheckModeTrace, CompiledCallsRunBesideTheInterpreter) {
  for (bool check : {false, true}) {
    int count = 0;
    auto traced = jit::trace(
        [&count](const Tensor& x) {
          Tensor y = jit::exclude_from_trace(
              [&count](const Tensor& t) {
                ++count;
                return mul(t, 2.0);
              },
              exp(x));
          return add(y, 1.0);
        },
        {.check = {.enabled = check}});
    Tensor x = ones({3});
    for (int call = 0; call < 4; ++call)
      EXPECT_LT(maxDiff(traced(x), full({3}, 2 * std::exp(1.0) + 1)), 1e-5);
    // The first call runs eagerly while it records; the other three run compiled.
    EXPECT_EQ(count, check ? 1 + 3 * 2 : 4) << "check " << check;
  }
}

TEST(CheckModeTrace, KilnCheckMustBeZeroOrOne) {
  ::setenv("KILN_CHECK", "yes", 1);
  try {
    auto traced = jit::trace([](const Tensor& x) { return x; });
    ADD_FAILURE() << "KILN_CHECK=yes was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("KILN_CHECK must be 0 or 1, got 'yes'"));
  }
  ::unsetenv("KILN_CHECK");
}

// KILN_CHECK=1 also checks a loaded graph's compiled calls (kiln-run).
TEST(CheckModeLoad, LoadedGraphIsCheckedAndAgrees) {
  auto traced = jit::trace([](const Tensor& x) { return softmax(mul(x, 3.0), 1); },
                           {.capture_as_const = true});
  Tensor x = randn({3, 7});
  Tensor want = traced(x);
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "check_mode_graph.mlirbc").string();
  traced.dump(path);
  ::setenv("KILN_CHECK", "1", 1);
  jit::LoadedGraph graph = jit::load(path);
  ::unsetenv("KILN_CHECK");
  std::vector<Tensor> got = graph({x});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LT(maxDiff(got[0], want), 1e-6);
}

}  // namespace
}  // namespace kiln
