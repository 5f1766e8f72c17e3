// KILN_JIT_BACKEND: which engine runs traced and loaded programs (DESIGN.md §6).
#pragma once

#include "kiln/core/Error.h"

namespace kiln::jit {

enum class Backend { Interp, Mlir };

// The backend KILN_JIT_BACKEND selects: INTERP (the reference interpreter, the default
// until every traced program compiles) or MLIR (kiln-cpu-pipeline, runtime::Executable).
// HALIDE and NVRTC are CompileErrors saying they are not built yet, any other value an
// Error listing the valid ones; `op` and `loc` name the trace or load call.
Backend selectedBackend(std::string_view op, const SourceLoc& loc);

}  // namespace kiln::jit
