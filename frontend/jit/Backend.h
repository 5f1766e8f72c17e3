// KILN_JIT_BACKEND: which engine runs traced and loaded programs (docs/ARCHITECTURE.md §6).
#pragma once

#include <memory>
#include <string_view>

#include "kiln/core/Error.h"
#include "kiln/jit/Trace.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace kiln::runtime {
class Executable;
}
namespace kiln::interp {
class CallbackTable;
}

namespace kiln::jit {

enum class Backend { Interp, Mlir };

struct BackendChoice {
  Backend backend;
  bool requested;  // named by KILN_JIT_BACKEND rather than the default
};

// The backend KILN_JIT_BACKEND selects: MLIR (kiln-cpu-pipeline, runtime::Executable; the
// default when unset) or INTERP (the reference interpreter). HALIDE and NVRTC are
// CompileErrors saying they are not built yet, any other value an Error listing the valid
// ones; `op` and `loc` name the trace or load call.
BackendChoice selectedBackend(std::string_view op, const SourceLoc& loc);

// `main` compiled for `choice`, or null where it runs in the interpreter: with INTERP, and
// with the default MLIR where the compiler fails on it (then the reason goes to stderr,
// once per program, and the interpreter runs it). A requested MLIR propagates the
// CompileError. `what` names the program in the message ("trace 'step'").
std::shared_ptr<const runtime::Executable> compileFor(const BackendChoice& choice,
                                                      mlir::func::FuncOp main,
                                                      const interp::CallbackTable* callbacks,
                                                      std::string_view op, std::string_view what,
                                                      const SourceLoc& loc,
                                                      const CompileOptions& options = {});

}  // namespace kiln::jit
