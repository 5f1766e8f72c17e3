// Kiln's compiler passes: declarations for mlir-tblgen (GEN_PASS_DECL / GEN_PASS_DEF_*).

#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Graph rewriting
//===----------------------------------------------------------------------===//

def KilnFusePass : Pass<"kiln-fuse", "func::FuncOp"> {
  let summary = "group elementwise, broadcast and reduction ops into kiln.fusion regions";
  let description = [{
    Walks the function from its last op to its first. Every elementwise or
    reduction op not yet grouped starts a group (its root) and pulls in its
    producers while they are elementwise ops or broadcasts whose other users
    come after the root (they become extra results of the group). A reduction
    only ends a group: it can be a root, never a producer. A producer that is
    cheap to recompute (no transcendental, no division) and is also needed
    before the root is duplicated into the group; splat constants always are.
    Library ops (matmul, conv2d, pool2d), data movement (reshape, transpose,
    slice, concat, gather), rng and callbacks are never fused. A group stops
    before it would take more than `max-inputs` inputs.

    With `report`, every group gets a remark on its root listing its size and,
    for each producer it did not take, why (`kiln-opt --kiln-fuse-report`).
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
  let options = [
    Option<"maxInputs", "max-inputs", "unsigned", /*default=*/"16",
           "most inputs a fusion may take">,
    Option<"report", "report", "bool", /*default=*/"false",
           "remark on each group why it stopped growing">,
  ];
}

def KilnSimplifyPass : Pass<"kiln-simplify", "func::FuncOp"> {
  let summary = "fold constants, apply algebraic identities, sink layout ops, CSE";
  let description = [{
    Runs the kiln folders and canonicalization patterns together with the
    simplifications that are not canonical forms: transposes and reshapes
    sink below the elementwise unary ops that consume them (so chains of
    elementwise ops meet and transposes meet and cancel), `x - neg(y)` becomes
    `x + y` and `x + neg(y)` becomes `x - y`. Then it removes common
    subexpressions, and repeats both until nothing changes.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_PASSES_TD
