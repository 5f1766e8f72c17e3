// The MLIR context traced programs live in: the func and kiln dialects.
#pragma once

#include <memory>

#include "mlir/IR/MLIRContext.h"

namespace kiln::jit {

// A context with the func and kiln dialects loaded. Multithreading stays enabled: that is
// what makes MLIR lock its uniquers, and a traced function runs from several threads.
std::unique_ptr<mlir::MLIRContext> makeContext();

}  // namespace kiln::jit
