#include "frontend/jit/Backend.h"

namespace kiln::jit {

runtime::BackendSelection selectedBackend(const CompileOptions& options, std::string_view op,
                                          const SourceLoc& loc) {
  return runtime::selectBackend(options.backend, op, loc);
}

std::shared_ptr<const runtime::Program> compileFor(const runtime::BackendSelection& selection,
                                                   mlir::func::FuncOp main,
                                                   const runtime::CallbackTable* callbacks,
                                                   std::string_view op, std::string_view what,
                                                   const SourceLoc& loc,
                                                   const CompileOptions& options, Device device) {
  if (options.fuse_max_inputs < 2)
    throw Error::make(loc, op, "CompileOptions::fuse_max_inputs must be at least 2, got ",
                      options.fuse_max_inputs);
  const runtime::CompileRequest request{.fuse = options.fuse,
                                        .fuseMaxInputs = unsigned(options.fuse_max_inputs),
                                        .device = device};
  return runtime::compileProgram(selection, main, callbacks, request, op, what, loc);
}

}  // namespace kiln::jit
