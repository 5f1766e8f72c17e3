#include "frontend/jit/Backend.h"

#include <cstdlib>
#include <string_view>

namespace kiln::jit {

Backend selectedBackend(std::string_view op, const SourceLoc& loc) {
  const char* env = std::getenv("KILN_JIT_BACKEND");
  std::string_view value = env ? env : "";
  if (value.empty() || value == "INTERP") return Backend::Interp;
  if (value == "MLIR") return Backend::Mlir;
  if (value == "HALIDE" || value == "NVRTC")
    throw CompileError::make(loc, op, "KILN_JIT_BACKEND=", value,
                             " is not available yet: the CPU code generator (MLIR) and the "
                             "reference interpreter (INTERP) are. Unset KILN_JIT_BACKEND or set "
                             "it to MLIR or INTERP");
  throw Error::make(loc, op, "KILN_JIT_BACKEND must be INTERP, MLIR, HALIDE or NVRTC, got '",
                    value, "'");
}

}  // namespace kiln::jit
