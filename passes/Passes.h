// Kiln's compiler passes (DESIGN.md §6): declarations, registration and pattern sets.
#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace mlir::kiln {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

// Adds kiln-simplify's rewrites that are not canonicalizations: layout ops
// sunk below elementwise unary ops, additions and subtractions of negations.
void populateSimplifyAlgebraPatterns(RewritePatternSet &patterns);

// Registers every kiln pass, and the `kiln-fuse-report` pipeline (kiln-fuse
// with its report on), with the global pass registry.
void registerPassesAndPipelines();

} // namespace mlir::kiln

#endif // KILN_PASSES_PASSES_H
