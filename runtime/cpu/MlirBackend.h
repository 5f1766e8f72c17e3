// MLIR on the CPU as a backend (runtime/Backend.h): kiln-cpu-pipeline lowers the program
// to LLVM, the ORC JIT links it, and runtime::Executable runs it.
#pragma once

#include "runtime/Backend.h"

namespace kiln::runtime::cpu {

const Backend& mlirBackend();

}  // namespace kiln::runtime::cpu
