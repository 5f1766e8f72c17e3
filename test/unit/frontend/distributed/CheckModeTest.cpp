// Check mode (KILN_CHECK, TraceOptions::check) on programs with collectives, under mpirun
// with 2 and 3 ranks: checked calls agree and return the reduced values; a compiler that
// is wrong on one rank only is named on that rank, while the others, which run the same
// probe's collectives, return their results and reach the next collective: nobody waits
// for a probe that only one rank runs (which would end in the timeout).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "frontend/jit/Check.h"
#include "frontend/jit/Context.h"
#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"
#include "kiln/jit/Trace.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "test/unit/jit/WrongCompiler.h"

namespace kiln {
namespace {

namespace dist = distributed;

std::vector<double> values(const Tensor& t) {
  Tensor d = t.detach().to(kFloat64).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

// A traced step with a blocking and a started all-reduce, checked on every call.
TEST(CheckModeTest, CheckedCallsWithCollectivesAgree) {
  const int n = dist::world_size(), r = dist::rank();
  jit::TraceOptions options{.symbolic = true};
  options.compile.backend = "MLIR";
  options.check.enabled = true;
  auto step = jit::trace(
      [](Tensor x) {
        Tensor sum = x * 2;
        dist::all_reduce(sum);
        Tensor mean = x.exp();
        dist::all_reduce_async(mean, dist::ReduceOp::Mean).wait();
        return cat({sum, mean.log()}, 0);
      },
      options);
  for (int call = 0; call < 3; ++call) {
    std::vector<double> got = values(step(full({2}, double(r + call))));
    const double sum = double(n) * (n - 1) + 2.0 * n * call;
    EXPECT_EQ(got[0], sum);
    EXPECT_EQ(got[1], sum);
    double mean = 0;
    for (int k = 0; k < n; ++k) mean += std::exp(double(k + call)) / n;
    EXPECT_NEAR(got[2], std::log(mean), 1e-5) << "call " << call;
  }
}

constexpr const char* kProgram = R"mlir(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %s = kiln.all_reduce_start sum %x : tensor<4xf32> loc("step.cpp":5:3)
  %w = kiln.wait %s : tensor<4xf32> loc("step.cpp":6:3)
  %b = kiln.all_reduce max %w : tensor<4xf32> loc("step.cpp":7:3)
  %e = kiln.exp %b : tensor<4xf32> loc("step.cpp":8:3)
  %c = kiln.add %e, %x : tensor<4xf32> loc("step.cpp":9:3)
  return %c : tensor<4xf32>
}
)mlir";

TEST(CheckModeTest, ADifferenceOnOneRankIsNamedThereWithoutHangingTheOthers) {
  const int n = dist::world_size(), r = dist::rank();
  if (n < 2) GTEST_SKIP() << "needs 2 ranks";
  auto context = jit::makeContext();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(kProgram, context.get());
  ASSERT_TRUE(module);
  auto main = *module->getOps<mlir::func::FuncOp>().begin();
  const bool wrong = r == 1;
  auto exe = testing::compileExpAsSin(main, wrong);
  jit::CheckedProgram program{main, nullptr, "program 'step'", {},
                              [wrong](mlir::func::FuncOp probe) {
                                return testing::compileExpAsSin(probe, wrong);
                              }};
  Tensor x = full({4}, double(r) * 0.1);
  std::string message;
  std::vector<Tensor> got;
  try {
    got = jit::runChecked(program, std::vector<Tensor>{x},
                          [&](std::span<const Tensor> args) { return exe->run(args); },
                          SourceLoc::current());
  } catch (const CheckError& e) {
    message = e.what();
  }
  if (wrong) {
    EXPECT_NE(message.find("'kiln.exp' at step.cpp:8:3 computes another value compiled than in "
                           "the reference interpreter"),
              std::string::npos)
        << message;
  } else {
    // Rank 1's exp (after the collectives) was wrong, not this rank's: its checked call
    // returns the compiled result, having run the probe's collectives with rank 1.
    EXPECT_EQ(message, "");
    ASSERT_EQ(got.size(), 1u);
    const double sum = n * (n - 1) / 2 * 0.1;
    for (double v : values(got[0])) EXPECT_NEAR(v, std::exp(sum) + r * 0.1, 1e-4);
  }
  // Every rank gets here: the probes' collectives ran on all of them.
  Tensor after = full({1}, 1.0);
  dist::all_reduce(after);
  EXPECT_EQ(values(after), std::vector<double>{double(n)});
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!kiln::distributed::is_available()) return RUN_ALL_TESTS();
  kiln::distributed::init();
  const int status = RUN_ALL_TESTS();
  kiln::distributed::finalize();
  return status;
}
