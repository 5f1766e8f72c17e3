// kiln-collapse-dims: an elementwise kernel's loops over dims that every operand stores
// contiguously become one loop, so the innermost loop is long enough to vectorize. On
// buffers, after the results became out-parameters: the collapsed shapes are views of
// the same memory, and the kernel still writes where the host planned.
#include "passes/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNCOLLAPSEDIMSPASS
#include "passes/Passes.h.inc"

namespace {

// A generic on buffers of the default (row-major, contiguous) layout whose loops are all
// parallel and that writes each output at the loops' own index.
bool isElementwiseGeneric(linalg::GenericOp op) {
  auto rowMajor = [](Value value) {
    auto type = dyn_cast<MemRefType>(value.getType());
    return type && type.getLayout().isIdentity();
  };
  return op.hasPureBufferSemantics() && op.isAllParallelLoops() &&
         llvm::all_of(op->getOperands(), rowMajor) &&
         llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
           return op.getMatchingIndexingMap(&init).isIdentity();
         });
}

// A broadcast reads its operand's size-1 dims at the constant index 0
// (kiln-convert-to-linalg); such an input is collapsed to the dims the map names, so
// that every indexing map of the generic is a projected permutation.
struct DropBroadcastUnitDims : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (!isElementwiseGeneric(op))
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<std::pair<OpOperand *, SmallVector<ReassociationIndices>>> collapses;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      auto type = cast<MemRefType>(input->get().getType());
      if (map.isProjectedPermutation() || !map.isProjectedPermutation(/*allowZeroInResults=*/true))
        continue;
      // Each kept dim takes the dropped unit dims before it; the last also those after.
      // A constant index into a dim longer than 1 is not a broadcast: left as it is.
      SmallVector<int64_t> dropped;
      SmallVector<ReassociationIndices> groups;
      ReassociationIndices pending;
      bool broadcast = true;
      for (auto [i, expr] : llvm::enumerate(map.getResults())) {
        pending.push_back(i);
        if (isa<AffineConstantExpr>(expr)) {
          broadcast = broadcast && type.getDimSize(i) == 1;
          dropped.push_back(i);
          continue;
        }
        groups.push_back(std::move(pending));
        pending.clear();
      }
      if (!broadcast)
        continue;
      if (!groups.empty())
        groups.back().append(pending.begin(), pending.end());
      maps[input->getOperandNumber()] = map.dropResults(dropped);
      collapses.emplace_back(input, std::move(groups));
    }
    if (collapses.empty())
      return failure();
    SmallVector<Value> views;
    for (auto &[input, groups] : collapses)
      views.push_back(memref::CollapseShapeOp::create(rewriter, op.getLoc(), input->get(), groups));
    rewriter.modifyOpInPlace(op, [&] {
      for (auto [collapse, view] : llvm::zip_equal(collapses, views))
        collapse.first->set(view);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

// Adjacent loops d, d + 1 that every map names next to each other, in that order, or
// not at all: one loop over both.
SmallVector<ReassociationIndices> collapsibleLoops(linalg::LinalgOp linalgOp) {
  auto op = dyn_cast<linalg::GenericOp>(linalgOp.getOperation());
  if (!op || !isElementwiseGeneric(op) || op.getNumLoops() < 2 ||
      !llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) { return map.isProjectedPermutation(); }))
    return {};
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices group{0};
  for (unsigned d = 1; d < op.getNumLoops(); ++d) {
    bool together = llvm::all_of(op.getIndexingMapsArray(), [&](AffineMap map) {
      return linalg::isDimSequencePreserved(map, {int64_t(d - 1), int64_t(d)});
    });
    if (!together) {
      if (group.size() > 1)
        groups.push_back(group);
      group.clear();
    }
    group.push_back(d);
  }
  if (group.size() > 1)
    groups.push_back(group);
  return groups;
}

struct KilnCollapseDimsPass : impl::KilnCollapseDimsPassBase<KilnCollapseDimsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Row kernels (a reduction and its users) are tiled by rows later, by shape.
    bool onlyElementwise = true;
    func.walk([&](linalg::LinalgOp op) {
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic || !isElementwiseGeneric(generic))
        onlyElementwise = false;
    });
    if (!onlyElementwise)
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<DropBroadcastUnitDims>(&getContext());
    linalg::populateCollapseDimensions(patterns, collapsibleLoops);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::kiln
