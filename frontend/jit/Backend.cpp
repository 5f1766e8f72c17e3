#include "frontend/jit/Backend.h"

#include <cstdlib>
#include <iostream>
#include <string_view>

#include "runtime/Executable.h"

namespace kiln::jit {

BackendChoice selectedBackend(std::string_view op, const SourceLoc& loc) {
  const char* env = std::getenv("KILN_JIT_BACKEND");
  std::string_view value = env ? env : "";
  if (value.empty()) return {Backend::Mlir, false};
  if (value == "MLIR") return {Backend::Mlir, true};
  if (value == "INTERP") return {Backend::Interp, true};
  if (value == "HALIDE" || value == "NVRTC")
    throw CompileError::make(loc, op, "KILN_JIT_BACKEND=", value,
                             " is not available yet: the CPU code generator (MLIR) and the "
                             "reference interpreter (INTERP) are. Unset KILN_JIT_BACKEND or set "
                             "it to MLIR or INTERP");
  throw Error::make(loc, op, "KILN_JIT_BACKEND must be INTERP, MLIR, HALIDE or NVRTC, got '",
                    value, "'");
}

std::shared_ptr<const runtime::Executable> compileFor(const BackendChoice& choice,
                                                      mlir::func::FuncOp main,
                                                      const interp::CallbackTable* callbacks,
                                                      std::string_view op, std::string_view what,
                                                      const SourceLoc& loc,
                                                      const CompileOptions& options) {
  if (choice.backend != Backend::Mlir) return nullptr;
  if (options.fuse_max_inputs < 2)
    throw Error::make(loc, op, "CompileOptions::fuse_max_inputs must be at least 2, got ",
                      options.fuse_max_inputs);
  try {
    return runtime::Executable::compile(
        main, callbacks, op, loc, /*cache=*/nullptr,
        {.fuse = options.fuse, .fuseMaxInputs = unsigned(options.fuse_max_inputs)});
  } catch (const CompileError& error) {
    if (choice.requested) throw;
    std::cerr << "kiln: " << what << " runs in the reference interpreter because it did not "
              << "compile: " << error.what()
              << "\nkiln: set KILN_JIT_BACKEND=MLIR to make this an error, or INTERP to "
                 "interpret without trying\n";
    return nullptr;
  }
}

}  // namespace kiln::jit
