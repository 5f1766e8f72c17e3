// Dynamic shapes from two recordings (docs/ARCHITECTURE.md, "Dynamic shapes"): one
// function recorded at two sizes becomes one program with `?` dims.
#pragma once

#include <string>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace kiln::jit {

struct Generalized {
  // The program with `?` dims (a copy of `b` whose sizes are computed from its inputs'
  // dims), or null when the recordings are not one program at two sizes.
  mlir::OwningOpRef<mlir::ModuleOp> module;
  // Per tensor input, per dim, the symbol of that dim (dims that share a symbol had equal
  // sizes at both calls and must be equal at later calls), or -1 for a static dim.
  std::vector<std::vector<int>> symbols;
  std::string why;  // why not, when module is null
};

// `a` and `b` recorded from one function at input sizes that differ in some dims (each
// at least 2 at both calls). Each input dim that differs becomes `?`. A size in the
// program that differs between the two recordings must be c x a product of the input
// dims that differ (up to three), fitting both calls; it is computed from the inputs'
// dims (tensor.dim, arith.muli) at run time. Splat constants of such sizes become a
// broadcast of the splat, arange constants a kiln.iota. The two recordings must
// otherwise be the same ops on the same operands with the same attributes and source
// lines, and the result must give back `a` and `b` exactly when specialized to their
// sizes (mlir::kiln::specializeShapes); else `why` says what differs. `allowed`, if not
// empty, lists per input the dims that may become dynamic.
Generalized generalize(mlir::func::FuncOp a, mlir::func::FuncOp b, size_t numInputs,
                       const std::vector<std::vector<bool>>& allowed = {});

// "" if `dynamic` specialized to the argument shapes of `recorded` is `recorded` (up to
// how splat constants are spelled), else what differs. A dynamic trace checks each new
// size this way before it serves it: what else the C++ function does at that size (code
// that branches on a size) shows up as a difference.
std::string specializationDifference(mlir::func::FuncOp dynamic, mlir::func::FuncOp recorded);

// "" if `a` and `b` are the same program (argument types and attributes, ops, operands,
// attributes, result types and locations), else the first difference.
std::string programDifference(mlir::func::FuncOp a, mlir::func::FuncOp b);

}  // namespace kiln::jit
