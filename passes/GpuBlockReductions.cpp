// kiln-gpu-block-reductions: a reduction's output elements one thread block each, the
// block's threads folding the reduced elements together (see Passes.td).
#include "passes/GpuBlockCode.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNGPUBLOCKREDUCTIONSPASS
#include "passes/Passes.h.inc"

namespace {

using namespace gpu_block;

struct GpuBlockReductions : impl::KilnGpuBlockReductionsPassBase<GpuBlockReductions> {
  using KilnGpuBlockReductionsPassBase::KilnGpuBlockReductionsPassBase;

  // Whether an input reads the reduced elements along its innermost dim.
  static bool rowReduction(linalg::GenericOp op, ArrayRef<unsigned> reduced) {
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      if (map.getNumResults() == 0)
        continue;
      AffineExpr last = map.getResults().back();
      if (llvm::any_of(reduced, [&](unsigned d) { return last.isFunctionOfDim(d); }))
        return true;
    }
    return false;
  }

  // The thread count for `op`, or 0 where it stays one thread per output.
  int64_t threadsOf(linalg::GenericOp op) {
    if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0 ||
        op.getNumLoops() != op.getNumParallelLoops() + op.getNumReductionLoops())
      return 0;
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    if (llvm::any_of(sizes, ShapedType::isDynamic))
      return 0;
    SmallVector<unsigned> reduced;
    op.getReductionDims(reduced);
    int64_t outputs = 1, elements = 1;
    for (auto [d, size] : llvm::enumerate(sizes))
      (llvm::is_contained(reduced, d) ? elements : outputs) *= size;
    if (elements < 32 || (outputs >= fewOutputs && !rowReduction(op, reduced)))
      return 0;
    return threadsFor(elements, blockSize);
  }

  // One block per output element (the kept dims linearized on blocks x), `threads`
  // threads folding its reduced elements.
  void rewrite(IRRewriter &rewriter, linalg::GenericOp op, ArrayRef<Fold> folds, int64_t threads) {
    MLIRContext *context = op.getContext();
    Location loc = op.getLoc();
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    SmallVector<unsigned> kept;
    op.getParallelDims(kept);
    SmallVector<int64_t> keptSizes;
    int64_t outputs = 1;
    for (unsigned d : kept)
      keptSizes.push_back(sizes[d]), outputs *= sizes[d];
    rewriter.setInsertionPoint(op);
    auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(rewriter, loc, v); };
    Value zero = index(0), one = index(1);
    auto blocks = scf::ParallelOp::create(rewriter, loc, ValueRange{zero}, ValueRange{index(outputs)},
                                          ValueRange{one});
    rewriter.setInsertionPointToStart(blocks.getBody());
    auto threadLoop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero}, ValueRange{index(threads)},
                                              ValueRange{one});
    (void)gpu::setMappingAttr(blocks, {mapTo(context, gpu::Processor::BlockX)});
    (void)gpu::setMappingAttr(threadLoop, {mapTo(context, gpu::Processor::ThreadX)});
    rewriter.setInsertionPointToStart(threadLoop.getBody());
    SmallVector<Value> ivs(sizes.size());
    for (auto [d, iv] : llvm::zip(kept, delinearize(rewriter, loc, blocks.getInductionVars()[0], keptSizes)))
      ivs[d] = iv;
    emitBlockFold(rewriter, op, folds, ivs, threadLoop.getInductionVars()[0], threads);
    rewriter.eraseOp(op);
  }

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      int64_t threads = threadsOf(op);
      if (threads == 0)
        continue;
      std::optional<SmallVector<Fold>> folds = foldsOf(op);
      if (!folds)
        continue;
      rewrite(rewriter, op, *folds, threads);
    }
  }
};

} // namespace
} // namespace mlir::kiln
