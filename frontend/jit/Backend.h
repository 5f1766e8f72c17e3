// The frontend's side of the backend seam (runtime/Backend.h): CompileOptions in the
// runtime's terms. Trace, load, nn::Graph and check mode compile through these two calls.
#pragma once

#include <memory>
#include <string_view>

#include "kiln/core/Device.h"
#include "kiln/core/Error.h"
#include "kiln/jit/Trace.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "runtime/Backend.h"

namespace kiln::jit {

// The backend `options.backend` names, else KILN_JIT_BACKEND, else MLIR
// (runtime::selectBackend); `op` and `loc` name the trace or load call.
runtime::BackendSelection selectedBackend(const CompileOptions& options, std::string_view op,
                                          const SourceLoc& loc);

// `main` made runnable by `selection` for `device` (runtime::compileProgram): compiled, or
// interpreted where the default backend cannot compile it. `options` are validated here
// (an Error naming `op` for a bad one). `what` names the program in messages.
std::shared_ptr<const runtime::Program> compileFor(const runtime::BackendSelection& selection,
                                                   mlir::func::FuncOp main,
                                                   const runtime::CallbackTable* callbacks,
                                                   std::string_view op, std::string_view what,
                                                   const SourceLoc& loc,
                                                   const CompileOptions& options = {},
                                                   Device device = {});

}  // namespace kiln::jit
