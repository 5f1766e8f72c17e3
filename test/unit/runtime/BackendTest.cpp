// The backend seam: the registry, KILN_JIT_BACKEND read in one place, errors that list the
// available backends, the device check, and the default backend's fallback to INTERP.
#include "runtime/Backend.h"
#include "runtime/DynamicProgram.h"
#include "runtime/Executable.h"
#include "runtime/KernelCodegen.h"
#include "runtime/halide/HalideKernels.h"

#include <gtest/gtest.h>

#include <map>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "dialect/KilnDialect.h"
#include "kiln/core/Cuda.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/runtime/RuntimeTestSupport.h"

namespace kiln::runtime {
namespace {

constexpr const char* kNeg = R"mlir(
func.func @main(%x: tensor<2x3xf32> {kiln.input = 0 : i64}) -> tensor<2x3xf32> {
  %y = kiln.neg %x : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
})mlir";

constexpr const char* kDynamicNeg = R"mlir(
func.func @main(%x: tensor<?x3xf32> {kiln.input = 0 : i64}) -> tensor<?x3xf32> {
  %y = kiln.neg %x : tensor<?x3xf32>
  return %y : tensor<?x3xf32>
})mlir";

class BackendTest : public ::testing::Test {
 protected:
  BackendTest() {
    context.loadDialect<mlir::kiln::KilnDialect, mlir::func::FuncDialect>();
    unsetenv("KILN_JIT_BACKEND");
  }
  ~BackendTest() override { unsetenv("KILN_JIT_BACKEND"); }

  mlir::func::FuncOp parse(const char* source) {
    module = mlir::parseSourceString<mlir::ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    return *module->getOps<mlir::func::FuncOp>().begin();
  }

  std::shared_ptr<const Program> compile(const BackendSelection& selection, const char* source,
                                         Device device = {}) {
    return compileProgram(selection, parse(source), nullptr, {.device = device}, "test",
                          "the test program", SourceLoc::current());
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(BackendTest, TheRegistryListsEveryBuiltBackendOnce) {
  std::vector<std::string_view> names;
  for (const Backend* backend : backends()) names.push_back(backend->name());
  EXPECT_EQ(names, (std::vector<std::string_view>{"INTERP", "MLIR", "HALIDE", "NVRTC"}));
  // Which devices each serves: NVRTC only CUDA, the others both.
  const std::map<std::string_view, std::pair<bool, bool>> serves = {
      {"INTERP", {true, true}}, {"MLIR", {true, true}}, {"HALIDE", {true, true}}, {"NVRTC", {false, true}}};
  for (std::string_view name : names) {
    ASSERT_NE(findBackend(name), nullptr) << name;
    EXPECT_EQ(findBackend(name)->name(), name);
    EXPECT_EQ(findBackend(name)->serves(DeviceType::CPU), serves.at(name).first) << name;
    EXPECT_EQ(findBackend(name)->serves(DeviceType::CUDA), serves.at(name).second) << name;
  }
  EXPECT_EQ(findBackend("mlir"), nullptr);  // names are exact, as KILN_JIT_BACKEND spells them
  for (std::string_view unbuilt : unbuiltBackends()) EXPECT_EQ(findBackend(unbuilt), nullptr);
}

TEST_F(BackendTest, AnExplicitNameWinsOverTheEnvironmentWhichWinsOverTheDefault) {
  BackendSelection chosen = selectBackend("", "test", SourceLoc::current());
  EXPECT_EQ(chosen.backend->name(), "MLIR");
  EXPECT_FALSE(chosen.requested);
  setenv("KILN_JIT_BACKEND", "INTERP", 1);
  chosen = selectBackend("", "test", SourceLoc::current());
  EXPECT_EQ(chosen.backend->name(), "INTERP");
  EXPECT_TRUE(chosen.requested);
  chosen = selectBackend("MLIR", "test", SourceLoc::current());
  EXPECT_EQ(chosen.backend->name(), "MLIR");
  EXPECT_TRUE(chosen.requested);
  setenv("KILN_JIT_BACKEND", "", 1);  // empty is unset
  EXPECT_FALSE(selectBackend("", "test", SourceLoc::current()).requested);
}

TEST_F(BackendTest, AnUnknownOrUnbuiltBackendIsACompileErrorListingTheAvailableOnes) {
  setenv("KILN_JIT_BACKEND", "TPU", 1);
  EXPECT_KILN_ERROR_HAS(selectBackend("", "trace", SourceLoc::current()), CompileError,
                        "trace: KILN_JIT_BACKEND=TPU names no backend; available: INTERP "
                        "(reference interpreter");
  EXPECT_KILN_ERROR_HAS(selectBackend("", "trace", SourceLoc::current()), CompileError,
                        "MLIR (code generator: kiln-cpu-pipeline, LLVM ORC JIT; cpu; "
                        "kiln-gpu-pipeline (NVPTX) on cuda)");
  EXPECT_KILN_ERROR_HAS(selectBackend("", "trace", SourceLoc::current()), CompileError,
                        "HALIDE (fused kernels by Halide 14 (JIT on the CPU, PTX on CUDA), the rest as "
                        "MLIR; cpu, cuda), "
                        "NVRTC (fused kernels as CUDA C");
  EXPECT_TRUE(unbuiltBackends().empty());
}

// A backend asked for a device it does not serve is a CompileError listing those that do.
TEST_F(BackendTest, ABackendForAnotherDeviceIsACompileErrorListingTheOnesForThisDevice) {
  EXPECT_KILN_ERROR_HAS(compile({findBackend("NVRTC"), true}, kNeg), CompileError,
                        "backend NVRTC does not run programs on cpu; backends for cpu: INTERP (");
  EXPECT_KILN_ERROR_HAS(compile({findBackend("NVRTC"), true}, kNeg), CompileError,
                        "), MLIR (code generator: kiln-cpu-pipeline");
  EXPECT_KILN_ERROR_HAS(compile({findBackend("NVRTC"), true}, kNeg), CompileError,
                        "), HALIDE (fused kernels by Halide 14");
}

TEST_F(BackendTest, EachBackendRunsTheProgramAndSaysWhetherItIsCompiled) {
  Tensor x = arange(0.0, 6.0, 1.0, kFloat32).reshape({2, 3});
  for (const Backend* backend : backends()) {
    if (!backend->serves(DeviceType::CPU)) continue;
    auto program = compile({backend, true}, kNeg);
    EXPECT_EQ(program->backend(), backend->name());
    EXPECT_EQ(program->compiled(), backend->name() != "INTERP");
    std::vector<Tensor> results = program->run(std::vector<Tensor>{x});
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(equal(results[0], neg(x))) << backend->name();
  }
}

// HALIDE compiles the fused kernels it can translate and leaves the others to MLIR, and
// KILN_LOG=compile says which: both programs run and give the eager values.
TEST_F(BackendTest, HalideTakesTheKernelsItTranslatesAndMlirTheOthers) {
  auto run = [&](const char* source, const std::vector<Tensor>& args, std::string* log) {
    setenv("KILN_LOG", "compile", 1);
    setenv("KILN_CACHE_DIR", "off", 1);
    ::testing::internal::CaptureStderr();
    auto program = compile({findBackend("HALIDE"), true}, source);
    *log = ::testing::internal::GetCapturedStderr();
    unsetenv("KILN_LOG");
    EXPECT_EQ(program->backend(), "HALIDE");
    EXPECT_TRUE(program->compiled());
    return program->run(args);
  };
  std::string log;
  Tensor x = arange(0.0, 6.0, 1.0, kFloat32).reshape({2, 3});
  EXPECT_TRUE(equal(run(kNeg, {x}, &log)[0], neg(x)));
  EXPECT_NE(log.find("1 fused kernels by HALIDE"), std::string::npos) << log;

  constexpr const char* kGelu64 = R"mlir(
func.func @main(%x: tensor<2x3xf64> {kiln.input = 0 : i64}) -> tensor<2x3xf64> {
  %y = kiln.gelu %x : tensor<2x3xf64>
  return %y : tensor<2x3xf64>
})mlir";
  Tensor x64 = arange(0.0, 6.0, 1.0, kFloat64).reshape({2, 3});
  EXPECT_TRUE(allclose(run(kGelu64, {x64}, &log)[0], gelu(x64), 1e-12, 1e-12));
  EXPECT_NE(log.find("0 fused kernels by HALIDE"), std::string::npos) << log;
  EXPECT_NE(log.find("HALIDE declined @main_kernel_0 (MLIR compiles it): kiln.gelu on other "
                     "than f32 math"),
            std::string::npos)
      << log;
}

// SGD with momentum as one fused kernel of two results, each written over its state by
// MLIR. HALIDE on the CPU declines that kernel (Halide takes buffers not to alias) and MLIR
// compiles it in place; a generator that says so (severalResultsInPlace() false: HALIDE's
// for CUDA) has neither result planned in place and takes the kernel. All give the eager
// values: in place, in the states' own storage; out of place, in results of their own (the
// caller writes them into the states), the states untouched.
TEST_F(BackendTest, AKernelOfSeveralStateUpdatesIsPlannedOutOfPlaceForAGeneratorThatAsks) {
  constexpr const char* kMomentum = R"mlir(
func.func @main(%g: tensor<2x3xf32> {kiln.input = 0 : i64}, %w: tensor<2x3xf32> {kiln.state = "w"},
                %v: tensor<2x3xf32> {kiln.state = "v"})
    -> (tensor<2x3xf32> {kiln.state_update = "w"}, tensor<2x3xf32> {kiln.state_update = "v"}) {
  %mu = kiln.constant dense<0.5> : tensor<2x3xf32>
  %lr = kiln.constant dense<0.25> : tensor<2x3xf32>
  %a = kiln.mul %v, %mu : tensor<2x3xf32>
  %nv = kiln.add %a, %g : tensor<2x3xf32>
  %s = kiln.mul %nv, %lr : tensor<2x3xf32>
  %nw = kiln.sub %w, %s : tensor<2x3xf32>
  return %nw, %nv : tensor<2x3xf32>, tensor<2x3xf32>
})mlir";
  // HALIDE's CPU generator, asking for kernels of several results out of place.
  struct OutOfPlaceHalide final : KernelCodegen {
    std::string_view name() const override { return "HALIDE"; }
    std::shared_ptr<const ExternalKernel> compile(mlir::func::FuncOp kernel, bool inPlace, const DiskCache& cache,
                                                  std::string& why) const override {
      return halide::halideKernels().compile(kernel, inPlace, cache, why);
    }
    bool severalResultsInPlace() const override { return false; }
  } outOfPlace;
  Tensor g = arange(0.0, 6.0, 1.0, kFloat32).reshape({2, 3});
  Tensor w0 = arange(1.0, 7.0, 1.0, kFloat32).reshape({2, 3});
  Tensor v0 = arange(-3.0, 3.0, 1.0, kFloat32).reshape({2, 3});
  Tensor wantV = v0 * 0.5 + g;
  Tensor wantW = w0 - wantV * 0.25;
  setenv("KILN_CACHE_DIR", "off", 1);
  for (const char* variant : {"MLIR", "HALIDE", "HALIDE out of place"}) {
    const bool apart = std::string_view(variant) == "HALIDE out of place";
    setenv("KILN_LOG", "compile", 1);
    ::testing::internal::CaptureStderr();
    std::shared_ptr<const Program> program =
        apart ? std::shared_ptr<const Program>(Executable::compile(parse(kMomentum), nullptr, "test",
                                                                   SourceLoc::current(), nullptr, {}, &outOfPlace))
              : compile({findBackend(variant), true}, kMomentum);
    const std::string log = ::testing::internal::GetCapturedStderr();
    unsetenv("KILN_LOG");
    Tensor w = w0.clone(), v = v0.clone();
    std::vector<Tensor> results = program->run(std::vector<Tensor>{g, w, v});
    ASSERT_EQ(results.size(), 2u) << variant;
    EXPECT_TRUE(equal(results[0], wantW)) << variant;
    EXPECT_TRUE(equal(results[1], wantV)) << variant;
    EXPECT_EQ(results[0].rawData() == w.rawData(), !apart) << variant;
    EXPECT_EQ(results[1].rawData() == v.rawData(), !apart) << variant;
    if (apart) {
      EXPECT_TRUE(equal(w, w0));
      EXPECT_TRUE(equal(v, v0));
      EXPECT_NE(log.find("1 fused kernels by HALIDE"), std::string::npos) << log;
      EXPECT_EQ(log.find("declined"), std::string::npos) << log;
    } else if (std::string_view(variant) == "HALIDE") {
      EXPECT_NE(log.find("0 fused kernels by HALIDE"), std::string::npos) << log;
      EXPECT_NE(log.find("HALIDE declined @main_kernel_0 (MLIR compiles it): several results with one "
                         "written over an operand"),
                std::string::npos)
          << log;
    }
  }
}

// KILN_DUMP_IR covers HALIDE: beside the MLIR stages, each Halide kernel's lowered statement.
TEST_F(BackendTest, KilnDumpIrWritesHalidesLoweredStatement) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "halide-dump";
  std::filesystem::remove_all(dir);
  setenv("KILN_DUMP_IR", dir.c_str(), 1);
  setenv("KILN_CACHE_DIR", "off", 1);
  auto program = compile({findBackend("HALIDE"), true}, kNeg);
  unsetenv("KILN_DUMP_IR");
  std::string stmt;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().string().ends_with("-HALIDE-main_kernel_0.stmt")) {
      std::ifstream in(entry.path());
      stmt.assign(std::istreambuf_iterator<char>(in), {});
    }
  EXPECT_NE(stmt.find("kiln_halide_main_kernel_0"), std::string::npos) << stmt;
}

// A backend that serves CUDA, asked to compile for a device that is not there, says why.
TEST_F(BackendTest, CompilingForAMissingCudaDeviceSaysWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "SKIPPED: this machine has a CUDA device";
  for (const char* name : {"MLIR", "HALIDE", "NVRTC"})
    EXPECT_KILN_ERROR_HAS(compile({findBackend(name), true}, kNeg, Device(kCUDA, 0)), Error,
                          "no CUDA device: ");
}

// A backend with a limitation: MLIR-like, but it takes nothing.
class LimitedBackend final : public Backend {
 public:
  std::string_view name() const override { return "LIMITED"; }
  std::string_view summary() const override { return "takes nothing"; }
  bool serves(DeviceType) const override { return true; }
  std::string unsupported(mlir::func::FuncOp) const override { return "a limitation of the test"; }
  std::shared_ptr<const Program> compile(mlir::func::FuncOp, const CallbackTable*,
                                         const CompileRequest&, std::string_view op,
                                         const SourceLoc& loc) const override {
    throw CompileError::make(loc, op, "unreachable");
  }
};

TEST_F(BackendTest, WhatTheDefaultCannotCompileRunsOnTheInterpreterAndANamedOneFails) {
  LimitedBackend limited;
  auto program = compile({&limited, /*requested=*/false}, kNeg);
  EXPECT_EQ(program->backend(), "INTERP");
  Tensor x = arange(0.0, 6.0, 1.0, kFloat32).reshape({2, 3});
  EXPECT_TRUE(equal(program->run(std::vector<Tensor>{x})[0], neg(x)));
  EXPECT_KILN_ERROR_HAS(compile({&limited, /*requested=*/true}, kNeg), CompileError,
                        "the test program: a limitation of the test; unset KILN_JIT_BACKEND");
}

// A program with ? dims runs at every shape that fits with the backend named: MLIR compiles
// it once for all sizes on the CPU, other backends are given it specialized to each call's
// shapes, one compile per shape; shapes that do not fit are a ShapeError naming the op.
TEST_F(BackendTest, DynamicProgramsRunAtEveryShapeOnTheNamedBackend) {
  for (const char* name : {"MLIR", "INTERP"}) {
    SCOPED_TRACE(name);
    auto program = compile({findBackend(name), /*requested=*/true}, kDynamicNeg);
    EXPECT_EQ(program->backend(), name);
    for (int64_t rows : {4, 7, 4, 1}) {
      Tensor x = arange(0.0, double(rows * 3), 1.0, kFloat32).reshape({rows, 3});
      EXPECT_TRUE(equal(program->run(std::vector<Tensor>{x})[0], neg(x))) << rows;
    }
    auto dynamic = std::dynamic_pointer_cast<const DynamicProgram>(program);
    ASSERT_TRUE(dynamic);
    // MLIR: one program for all sizes. INTERP: 4, 7 and 1; the second 4 is cached.
    EXPECT_EQ(dynamic->numCompiled(), std::string_view(name) == "MLIR" ? 1u : 3u);
    EXPECT_KILN_ERROR_HAS(program->run(std::vector<Tensor>{ones({4, 2})}), ShapeError,
                          "the test program: the arguments' shapes ([4, 2]) do not fit the "
                          "program: ");
  }
}

}  // namespace
}  // namespace kiln::runtime
