// Dynamic shapes (docs/ARCHITECTURE.md, "Dynamic shapes"): a kiln program whose arguments
// have `?` dims, made static for the shapes of one call.
#ifndef KILN_PASSES_SPECIALIZESHAPES_H
#define KILN_PASSES_SPECIALIZESHAPES_H

#include <cstdint>
#include <string>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::kiln {

// Whether an argument or a value of `func` has a `?` dim.
bool hasDynamicShapes(func::FuncOp func);

// Infers `op`'s result types again from its operands and attributes and sets them; ops
// without type inference must already have static result types. Fails (with the op's
// diagnostic) when its operands and attributes do not fit.
LogicalResult refineResultTypes(Operation *op);

// Rewrites `func` in place for arguments of `shapes` (one per argument): the argument
// types become static, `tensor.dim` and index arithmetic fold to numbers, the dynamic
// size operands of reshape, broadcast_in_dim, rng and scatter_add become static entries
// of their attributes, a `kiln.iota` becomes a dense constant (as a trace records arange),
// and every result type is inferred again; the index ops are erased. Ops that had no dynamic
// sizes are kept as they are apart from their types. Fails with a diagnostic at the op
// when a shape does not fit its argument (rank, a static dim) or the sizes do not fit an
// op (a reshape's element count, a negative size, operands that disagree).
//
// `func` may also be a host function whose kernels kiln-outline-kernels outlined: each
// kernel it calls is specialized to the call's operand shapes (a kernel called more than
// once is first copied, one copy per further call, named apart), and the sizes the call
// passed as index operands become constants in the kernel and leave both signatures.
// `kernels`, if given, receives per called kernel (by its name after copying) the kernel
// it was copied from and those sizes, in order: what a kernel compiled once for `?` dims
// is called with.
struct SpecializedKernel {
  std::string origin;
  SmallVector<int64_t> sizes;
};
using SpecializedKernels = llvm::StringMap<SpecializedKernel>;
LogicalResult specializeShapes(func::FuncOp func, ArrayRef<SmallVector<int64_t>> shapes,
                               SpecializedKernels *kernels = nullptr);

} // namespace mlir::kiln

#endif // KILN_PASSES_SPECIALIZESHAPES_H
