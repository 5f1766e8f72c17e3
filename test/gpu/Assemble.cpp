// Shared pieces of the GPU assembly tests (see Assemble.h).
#include "test/gpu/Assemble.h"

#include <cstdio>
#include <cstdlib>

#include "dialect/KilnDialect.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/OperationSupport.h"

namespace kiln::gpu_test {

std::string ptxas() {
  for (const char* env : {"KILN_CUDA_HOME", "CUDA_HOME"})
    if (const char* dir = std::getenv(env); dir && *dir) return std::string(dir) + "/bin/ptxas";
  return "/usr/local/cuda/bin/ptxas";
}

int run(const std::string& command, std::string& log) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) log.append(buffer, n);
  return ::pclose(pipe);
}

bool writesInPlace(mlir::ModuleOp planned, mlir::func::FuncOp kernel) {
  bool inPlace = false;
  planned.walk([&](mlir::func::CallOp call) {
    if (call.getCallee() != kernel.getSymName()) return;
    if (auto offsets = call->getAttrOfType<mlir::DenseI64ArrayAttr>(mlir::kiln::KilnDialect::getOffsetsAttrName()))
      for (int64_t offset : offsets.asArrayRef()) inPlace = inPlace || offset == -2;
  });
  return inPlace;
}

std::string keyOf(mlir::func::FuncOp kernel, bool inPlace) {
  std::string text = inPlace ? "in place\n" : "\n";
  llvm::raw_string_ostream out(text);
  out << kernel.getFunctionType() << "\n";
  for (mlir::Operation& op : kernel.getBody().front())
    op.print(out, mlir::OpPrintingFlags().printGenericOpForm().elideLargeElementsAttrs(0));
  return text;
}

}  // namespace kiln::gpu_test
