// The kiln dialect's op classes, generated from KilnOps.td.

#ifndef KILN_DIALECT_KILNOPS_H
#define KILN_DIALECT_KILNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/KilnDialect.h"

namespace mlir::kiln {

// Constant folding stops at results of more elements than this, unless every
// operand is a splat: folding copies every element into the context.
inline constexpr int64_t kFoldElementLimit = 1024;

// Verifies an op with its type inference, which checks the operands and
// attributes (KilnOps.cpp), then compares the inferred result types with the
// op's. Listed before InferTypeOpInterface, whose own check would report a
// failure twice (the reason, then "failed to infer returned types").
template <typename ConcreteOp>
class VerifiedByInference
    : public OpTrait::TraitBase<ConcreteOp, VerifiedByInference> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    auto concrete = cast<ConcreteOp>(op);
    SmallVector<Type> inferred;
    if (failed(ConcreteOp::inferReturnTypes(
            op->getContext(), op->getLoc(),
            typename ConcreteOp::Adaptor(concrete), inferred)))
      return failure();
    for (auto [i, want, got] : llvm::enumerate(inferred, op->getResultTypes()))
      if (want != got)
        return op->emitOpError("result ")
               << i << " has type " << got
               << " but its operands and attributes give " << want;
    return success();
  }
};

} // namespace mlir::kiln

#define GET_OP_CLASSES
#include "dialect/KilnOps.h.inc"

#endif // KILN_DIALECT_KILNOPS_H
