// kiln-opt: the mlir-opt of Kiln. Parses kiln (and upstream) IR, runs passes, prints IR.
#include "dialect/KilnDialect.h"
#include "passes/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include <cstdlib>
#include <unistd.h>

int main(int argc, char **argv) {
  // `bazel run` starts tools in their runfiles tree; resolve the user's relative paths
  // from the directory they ran bazel in.
  if (const char *dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir && chdir(dir) != 0)
    return EXIT_FAILURE;
  // Upstream dialects and passes are registered so kiln-opt can run every stage of the
  // pipelines (linalg, bufferization, vector, gpu, LLVM) on dumped kiln graphs.
  mlir::registerAllPasses();
  mlir::kiln::registerPassesAndPipelines();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary (kiln-gpu-pipeline's last pass) translates each gpu.module
  // to LLVM IR, as upstream mlir-opt registers it.
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  registry.insert<mlir::kiln::KilnDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
