// kiln-gpu-pipeline's PTX assembles: the lit inputs (elementwise, softmax, column sum,
// i64 abs and f64 exp)
// compiled for sm_80 and sm_90 in a context holding only what
// registerGpuPipelineDependencies registers (as the runtime's will), every gpu.binary's
// PTX handed to ptxas for its chip, 0 errors. SKIPPED without ptxas; no GPU needed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "dialect/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::kiln {
namespace {

std::string ptxas() {
  for (const char *env : {"KILN_CUDA_HOME", "CUDA_HOME"})
    if (const char *dir = std::getenv(env); dir && *dir)
      return std::string(dir) + "/bin/ptxas";
  return "/usr/local/cuda/bin/ptxas";
}

std::filesystem::path input(const std::string &name) {
  const char *root = std::getenv("TEST_SRCDIR");
  const char *workspace = std::getenv("TEST_WORKSPACE");
  return std::filesystem::path(root ? root : ".") / (workspace ? workspace : "kiln") /
         "test/Pipelines" / name;
}

// Runs `command`, returning its exit status and appending its output to `log`.
int run(const std::string &command, std::string &log) {
  FILE *pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return -1;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe))
    log.append(buffer, n);
  return ::pclose(pipe);
}

class GpuPipelinePtxas : public ::testing::TestWithParam<const char *> {};

TEST_P(GpuPipelinePtxas, AssemblesForSm80AndSm90) {
  if (!std::filesystem::exists(ptxas()))
    GTEST_SKIP() << "SKIPPED: no ptxas at " << ptxas()
                 << " (set KILN_CUDA_HOME to the CUDA toolkit)";
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "kiln-gpu-pipeline-ptx";
  std::filesystem::create_directories(dir);
  for (const char *chip : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(chip);
    DialectRegistry registry;
    registry.insert<KilnDialect, func::FuncDialect>();
    registerGpuPipelineDependencies(registry);
    MLIRContext context(registry);
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(input(GetParam()).string(), &context);
    ASSERT_TRUE(module) << "cannot parse " << input(GetParam());
    PassManager pm(&context);
    GpuPipelineOptions options;
    options.chip = chip;
    buildGpuPipeline(pm, options);
    ASSERT_TRUE(succeeded(pm.run(*module))) << "kiln-gpu-pipeline failed for " << chip;
    int assembled = 0;
    module->walk([&](gpu::BinaryOp binary) {
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        EXPECT_EQ(object.getFormat(), gpu::CompilationTarget::Assembly);
        const std::string ptx = object.getObject().getValue().str();
        EXPECT_NE(ptx.find(std::string(".target ") + chip), std::string::npos) << ptx;
        EXPECT_NE(ptx.find(".entry "), std::string::npos) << ptx;
        const std::filesystem::path file =
            dir / (binary.getSymName().str() + "_" + chip + ".ptx");
        std::ofstream(file) << ptx;
        std::string log;
        const int status = run(ptxas() + " -arch=" + chip + " -o " +
                                   (dir / "out.cubin").string() + " " + file.string(),
                               log);
        EXPECT_EQ(status, 0) << binary.getSymName().str() << " for " << chip << ":\n"
                             << log;
        ++assembled;
      }
    });
    EXPECT_GT(assembled, 0) << "no gpu.binary in the output";
    std::printf("%s: %d kernels assembled for %s\n", GetParam(), assembled, chip);
  }
}

INSTANTIATE_TEST_SUITE_P(LitInputs, GpuPipelinePtxas,
                         ::testing::Values("gpu-pipeline-elementwise.mlir",
                                           "gpu-pipeline-row.mlir",
                                           "gpu-pipeline-reduction.mlir",
                                           "gpu-pipeline-math.mlir"));

} // namespace
} // namespace mlir::kiln
