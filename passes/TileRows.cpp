// kiln-tile-rows: a row fusion kernel computed one tile of rows at a time, its
// reductions fused into the tile loop (see Passes.td).
#include "dialect/KilnDialect.h"
#include "passes/Passes.h"

#include <cassert>
#include <limits>

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNTILEROWSPASS
#include "passes/Passes.h.inc"

namespace {

// Tile sizes for the root's loops: 1 for each row dim but the last, as many of
// the last as make about `tileBytes` of the result (at least 1, at most all of
// a static dim; a `?` dim's last tile is cut short at run time), 0 (untiled)
// for the dims a row spans.
SmallVector<int64_t> rowTileSizes(linalg::GenericOp root, int64_t rowDims,
                                  int64_t tileBytes) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
  const int64_t bits = resultType.getElementTypeBitWidth();
  int64_t rowBytes = bits == 1 ? 1 : std::max<int64_t>(1, bits / 8);
  for (int64_t d = rowDims; d < int64_t(ranges.size()); ++d)
    rowBytes *= ranges[d];
  SmallVector<int64_t> sizes(ranges.size(), 0);
  for (int64_t d = 0; d + 1 < rowDims; ++d)
    sizes[d] = 1;
  const int64_t rows = ranges[rowDims - 1];
  sizes[rowDims - 1] = std::clamp<int64_t>(
      tileBytes / rowBytes, 1,
      ShapedType::isDynamic(rows) ? std::numeric_limits<int64_t>::max() : rows);
  return sizes;
}

// The generic a row kernel returns, when it can be tiled along `rowDims`
// leading loops: all loops parallel, more loops than row dims, the dims a row
// spans static (they size the tiles; the row dims may be `?`).
linalg::GenericOp rowRoot(func::FuncOp kernel, int64_t rowDims) {
  auto ret = dyn_cast<func::ReturnOp>(kernel.getBody().front().getTerminator());
  if (!ret || ret.getNumOperands() != 1)
    return {};
  auto root = ret.getOperand(0).getDefiningOp<linalg::GenericOp>();
  if (!root || root->getNumResults() != 1 || root.getNumReductionLoops() != 0 ||
      rowDims < 1 || int64_t(root.getNumLoops()) <= rowDims ||
      !root.hasPureTensorSemantics() ||
      llvm::any_of(ArrayRef(root.getStaticLoopRanges()).drop_front(rowDims),
                   ShapedType::isDynamic))
    return {};
  return root;
}

// Whether `op` is an elementwise generic on tensors (all loops parallel, one result)
// whose result has several users: the producers fuseMultiUseProducers considers.
bool isElementwise(linalg::GenericOp op) {
  return op.getNumReductionLoops() == 0 && op->getNumResults() == 1 &&
         op.hasPureTensorSemantics() && !op->getResult(0).use_empty();
}
bool isMultiUseElementwise(linalg::GenericOp op) {
  return isElementwise(op) && !op->getResult(0).hasOneUse();
}

// Whether `op` is elementwise with its result in loop order: all loops parallel, one
// result through the identity map, whose initial value it does not read.
bool isElementwiseInLoopOrder(linalg::GenericOp op) {
  return op.getNumReductionLoops() == 0 && op->getNumResults() == 1 &&
         op.hasPureTensorSemantics() &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity() &&
         !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0));
}

// Whether a multi-use elementwise `op` costs less to compute again in each of its
// users than to store and read back: a payload of a few arith ops. (A
// transcendental is worth its store.)
bool isCheapToRecompute(linalg::GenericOp op) {
  constexpr int kMaxOps = 4;
  int ops = 0;
  for (Operation &inner : op.getRegion().front().without_terminator()) {
    if (!isa<arith::ArithDialect>(inner.getDialect()) || ++ops > kMaxOps)
      return false;
  }
  return true;
}

// Fuses each cheap elementwise producer with several users (layer_norm's x - mean
// feeds the variance and the normalisation) into every one of them, a copy each.
// Tiled as it is, such a producer is stored to a tile-sized scratch buffer and read
// back once per user; fused, each user recomputes it from inputs it reads anyway.
// One producer at a time, found afresh: fusing one replaces its users, which may be
// producers themselves (layer_norm's x - mean feeds (x - mean)^2).
void recomputeCheapProducers(func::FuncOp kernel, RewriterBase &rewriter) {
  llvm::SmallPtrSet<Operation *, 8> kept;  // producers that cannot be fused
  while (true) {
    linalg::GenericOp producer;
    kernel.walk([&](linalg::GenericOp op) {
      if (!kept.contains(op) && isElementwise(op) && isCheapToRecompute(op) &&
          llvm::all_of(op->getResult(0).getUsers(),
                       [](Operation *user) { return isa<linalg::GenericOp>(user); })) {
        producer = op;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (!producer)
      return;
    Value result = producer->getResult(0);
    if (!llvm::all_of(result.getUses(), [](OpOperand &use) {
          return linalg::areElementwiseOpsFusable(&use);
        })) {
      kept.insert(producer);
      continue;
    }
    // A copy of the producer for each use, so that fusing it keeps no result of
    // the producer alive for the others. One use at a time: a user may read the
    // producer twice (a float32 sum's pairs), and fusing replaces the user.
    while (!result.use_empty()) {
      OpOperand *use = &*result.getUses().begin();
      rewriter.setInsertionPoint(producer);
      Operation *copy = rewriter.clone(*producer);
      rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(copy->getResult(0)); });
      rewriter.setInsertionPoint(use->getOwner());  // the fused op replaces the user
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, use);
      if (failed(fused)) {
        kept.insert(copy);  // the user reads the copy's stored result, as it read the producer's
        continue;
      }
      Operation *consumer = use->getOwner();
      for (Value result : consumer->getResults())
        rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(copy);
    }
    rewriter.eraseOp(producer);
  }
}

// Whether the generic that owns `use` reads every element of the operand: its map is a
// projected permutation and the loops it names run over the operand's whole dims. A
// reduction that reads only part of a row (a float32 sum's unpaired middle, through a
// window map) would, fused with a producer, yield that producer's values for its part
// alone, and the producer's other users would read the rest uninitialized. (A loop
// that names a dim of an operand runs over all of it: linalg requires it, and checks
// it where both are static; a `?` one is taken at its word.)
bool readsWholeOperand(OpOperand *use) {
  auto user = cast<linalg::GenericOp>(use->getOwner());
  AffineMap map = user.getMatchingIndexingMap(use);
  if (!map.isProjectedPermutation())
    return false;
  SmallVector<int64_t> ranges = user.getStaticLoopRanges();
  auto type = cast<RankedTensorType>(use->get().getType());
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    int64_t range = ranges[cast<AffineDimExpr>(expr).getPosition()];
    if (!ShapedType::isDynamic(range) && !type.isDynamicDim(dim) &&
        range != type.getDimSize(dim))
      return false;
  }
  return true;
}

// Fuses each costly elementwise producer with several users, one of them a
// reduction (softmax's exp feeds the row sum and the division), into that reduction,
// which then also yields the producer's values for the other users: one loop computes
// the values, stores them and reduces them, where tiled as it is the reduction would
// read back a scratch tile the producer's loop had just written.
// The use through which a costly multi-use elementwise `op` would be fused into its one
// reduction user (see storeWhileReducing), or null.
OpOperand *storeWhileReducingUse(linalg::GenericOp op) {
  if (!isMultiUseElementwise(op) || isCheapToRecompute(op))
    return nullptr;
  Value result = op->getResult(0);
  OpOperand *reduction = nullptr;
  for (OpOperand &use : result.getUses()) {
    auto user = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!user || user.getNumReductionLoops() == 0)
      continue;
    if (reduction)
      return nullptr;  // two reductions: fuse into neither
    reduction = &use;
  }
  // The fused op stands where the reduction is, so it must come before the others.
  if (!reduction || !linalg::areElementwiseOpsFusable(reduction) ||
      !readsWholeOperand(reduction) ||
      llvm::any_of(result.getUsers(), [&](Operation *user) {
        return user != reduction->getOwner() &&
               (user->getBlock() != reduction->getOwner()->getBlock() ||
                user->isBeforeInBlock(reduction->getOwner()));
      }))
    return nullptr;
  return reduction;
}

// One fusion at a time, the candidates found afresh: a fusion erases its reduction,
// which may be another candidate's reduction or producer (a row op's backward, where
// two costly producers feed one reduction chain), so a list gathered up front would
// hold erased ops.
void storeWhileReducing(func::FuncOp kernel, RewriterBase &rewriter) {
  llvm::SmallPtrSet<Operation *, 8> failed;  // producers linalg would not fuse
  while (true) {
    linalg::GenericOp producer;
    OpOperand *use = nullptr;
    kernel.walk([&](linalg::GenericOp op) {
      if (failed.contains(op) || !(use = storeWhileReducingUse(op)))
        return WalkResult::advance();
      producer = op;
      return WalkResult::interrupt();
    });
    if (!producer)
      return;
    Operation *consumer = use->getOwner();
    rewriter.setInsertionPoint(consumer);
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, use);
    if (::mlir::failed(fused)) {
      failed.insert(producer);
      continue;
    }
    // The producer had other users, so the fused op keeps its values as a result.
    Value values = fused->replacements.lookup(producer->getResult(0));
    assert(values && "fusion dropped a producer result that has other users");
    for (Value result : consumer->getResults())
      rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
    rewriter.replaceAllUsesWith(producer->getResult(0), values);
    rewriter.eraseOp(consumer);
    rewriter.eraseOp(producer);
  }
}

// Row kernels: fuses producers with several users into them (see the two above),
// then drops results nobody reads: fusing into a reduction may keep a producer's
// values as an extra result (linalg keeps them when it cannot tell the operand is
// droppable), and unused they would still be stored.
// A cheap elementwise producer read through slices (a float32 row sum reads its
// pairs' first and second elements as two slices of a row) is computed on slices of
// its inputs instead, one copy per slice, which recomputeCheapProducers then fuses
// into the reader: layer_norm's (x - mean)^2 is computed inside the variance's loop,
// not stored to two tile-sized scratch buffers and read back.
void sliceCheapProducers(func::FuncOp kernel, RewriterBase &rewriter) {
  auto slicesOfCheapProducers = [&] {
    SmallVector<tensor::ExtractSliceOp> slices;
    kernel.walk([&](tensor::ExtractSliceOp slice) {
      auto producer = slice.getSource().getDefiningOp<linalg::GenericOp>();
      if (producer && isElementwiseInLoopOrder(producer) && isCheapToRecompute(producer) &&
          slice.getType().getRank() == slice.getSourceType().getRank() &&
          llvm::all_of(slice.getMixedStrides(),
                       [](OpFoldResult s) { return isConstantIntValue(s, 1); }) &&
          llvm::all_of(producer.getDpsInputOperands(), [&](OpOperand *in) {
            // (an input read twice is sliced once: through the same map)
            return producer.getMatchingIndexingMap(in).isProjectedPermutation(
                       /*allowZeroInResults=*/true) &&
                   llvm::all_of(producer.getDpsInputOperands(), [&](OpOperand *other) {
                     return other->get() != in->get() ||
                            producer.getMatchingIndexingMap(other) ==
                                producer.getMatchingIndexingMap(in);
                   });
          }))
        slices.push_back(slice);
    });
    return slices;
  };
  // Until none is left: a producer computed on slices reads its own producers
  // through slices.
  for (SmallVector<tensor::ExtractSliceOp> slices = slicesOfCheapProducers(); !slices.empty();
       slices = slicesOfCheapProducers()) {
    for (tensor::ExtractSliceOp slice : slices) {
      auto producer = slice.getSource().getDefiningOp<linalg::GenericOp>();
      rewriter.setInsertionPoint(slice);
      Location loc = slice.getLoc();
      SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
      SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
      IRMapping mapping;
      for (OpOperand *in : producer.getDpsInputOperands()) {
        auto type = cast<RankedTensorType>(in->get().getType());
        SmallVector<OpFoldResult> inOffsets, inSizes;
        for (auto [r, expr] :
             llvm::enumerate(producer.getMatchingIndexingMap(in).getResults())) {
          if (auto dim = dyn_cast<AffineDimExpr>(expr)) {  // loop d is result dim d
            inOffsets.push_back(offsets[dim.getPosition()]);
            inSizes.push_back(sizes[dim.getPosition()]);
          } else {  // a broadcast dim, read at 0
            inOffsets.push_back(rewriter.getIndexAttr(0));
            inSizes.push_back(tensor::getMixedSize(rewriter, loc, in->get(), r));
          }
        }
        SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
        mapping.map(in->get(), tensor::ExtractSliceOp::create(rewriter, loc, in->get(),
                                                              inOffsets, inSizes, strides));
      }
      mapping.map(producer.getDpsInits()[0],
                  tensor::EmptyOp::create(rewriter, loc, sizes,
                                          slice.getType().getElementType()));
      Operation *copy = rewriter.clone(*producer, mapping);
      copy->getResult(0).setType(slice.getType());
      rewriter.replaceOp(slice, copy->getResult(0));
      if (producer->use_empty())
        rewriter.eraseOp(producer);
    }
  }
}

void fuseMultiUseProducers(func::FuncOp kernel, RewriterBase &rewriter) {
  sliceCheapProducers(kernel, rewriter);
  recomputeCheapProducers(kernel, rewriter);
  storeWhileReducing(kernel, rewriter);
  RewritePatternSet patterns(kernel.getContext());
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  (void)applyPatternsGreedily(kernel, std::move(patterns));
}

// Where the slice `small` lies within the slice `large` of the same source, with
// the same strides, one static offset per dim (or 0 where both offsets are the
// same value, and the sizes too where they are `?`): nothing when it does not or
// cannot be told.
// Whether `offset` elements on, `small` elements fit in `large`: by their numbers, or
// at offset 0 as the same `?` size.
bool fitsAt(int64_t offset, OpFoldResult small, OpFoldResult large) {
  std::optional<int64_t> s = getConstantIntValue(small), l = getConstantIntValue(large);
  if (s && l)
    return offset >= 0 && offset + *s <= *l;
  return offset == 0 && isEqualConstantIntOrValue(small, large);
}

std::optional<SmallVector<int64_t>> offsetWithin(tensor::ExtractSliceOp small,
                                                 tensor::ExtractSliceOp large) {
  if (!small || !large || small.getSource() != large.getSource() ||
      small.getType().getRank() != large.getType().getRank() ||
      small.getSourceType().getRank() != small.getType().getRank() ||
      !isEqualConstantIntOrValueArray(small.getMixedStrides(), large.getMixedStrides()))
    return std::nullopt;
  SmallVector<int64_t> offsets;
  for (auto [s, l, ss, ls] :
       llvm::zip(small.getMixedOffsets(), large.getMixedOffsets(),
                 small.getMixedSizes(), large.getMixedSizes())) {
    std::optional<int64_t> sc = getConstantIntValue(s), lc = getConstantIntValue(l);
    int64_t offset;
    if (isEqualConstantIntOrValue(s, l))
      offset = 0;
    else if (sc && lc)
      offset = *sc - *lc;
    else
      return std::nullopt;
    if (!fitsAt(offset, ss, ls))
      return std::nullopt;
    offsets.push_back(offset);
  }
  return offsets;
}
// The sizes of an elementwise generic's result, as its init (a tensor.empty, or a
// static type) has them; none when they cannot be told.
SmallVector<OpFoldResult> initSizes(linalg::GenericOp op) {
  Value init = op.getDpsInits()[0];
  auto type = cast<RankedTensorType>(init.getType());
  if (auto empty = init.getDefiningOp<tensor::EmptyOp>())
    return empty.getMixedSizes();
  if (!type.hasStaticShape())
    return {};
  return getAsIndexOpFoldResult(op.getContext(), type.getShape());
}

// Tile-and-fuse computes a producer once per slice its users read, and a float32 row
// sum reads two overlapping slices of the row (its pairs' first and second elements):
// an elementwise op computed again on a part of another's operands becomes a slice of
// the other's result, so softmax's exp is computed once per tile, not three times.
// Both have the same maps and payload, their result dims are their loops (identity),
// and each input of the smaller is the larger's input or a slice of the same source
// lying the same distance along each loop dim within it.
void reuseLargerTiles(func::FuncOp kernel, RewriterBase &rewriter) {
  SmallVector<linalg::GenericOp> ops;
  kernel.walk([&](linalg::GenericOp op) {
    if (isElementwiseInLoopOrder(op))
      ops.push_back(op);
  });
  // The offset of `small`'s loops within `large`'s, if `small` computes a part of
  // `large`'s result.
  auto partOf = [](linalg::GenericOp small, linalg::GenericOp large)
      -> std::optional<SmallVector<int64_t>> {
    if (small.getIndexingMapsArray() != large.getIndexingMapsArray() ||
        small.getNumDpsInputs() != large.getNumDpsInputs() ||
        !OperationEquivalence::isRegionEquivalentTo(&small.getRegion(), &large.getRegion(),
                                                    OperationEquivalence::IgnoreLocations))
      return std::nullopt;
    SmallVector<int64_t> shift(small.getNumLoops(), 0);
    SmallVector<bool> known(small.getNumLoops(), false);
    for (OpOperand *in : small.getDpsInputOperands()) {
      Value s = in->get(), l = large.getDpsInputs()[in->getOperandNumber()];
      AffineMap map = small.getMatchingIndexingMap(in);
      if (!map.isProjectedPermutation(/*allowZeroInResults=*/true))
        return std::nullopt;
      std::optional<SmallVector<int64_t>> offsets;
      if (s != l) {
        offsets = offsetWithin(s.getDefiningOp<tensor::ExtractSliceOp>(),
                               l.getDefiningOp<tensor::ExtractSliceOp>());
        if (!offsets)
          return std::nullopt;
      }
      for (auto [r, expr] : llvm::enumerate(map.getResults())) {
        auto dim = dyn_cast<AffineDimExpr>(expr);
        if (!dim)
          continue;  // a broadcast dim: read at 0 by both
        const int64_t offset = offsets ? (*offsets)[r] : 0;
        const unsigned loop = dim.getPosition();
        if (known[loop] && shift[loop] != offset)
          return std::nullopt;
        known[loop] = true;
        shift[loop] = offset;
      }
    }
    return shift;
  };
  llvm::SmallPtrSet<Operation *, 8> erased;
  for (linalg::GenericOp large : ops) {
    for (linalg::GenericOp small : ops) {
      if (small == large || erased.contains(small) || erased.contains(large) ||
          small->getBlock() != large->getBlock() || !large->isBeforeInBlock(small))
        continue;
      auto type = cast<RankedTensorType>(small->getResult(0).getType());
      auto largeType = cast<RankedTensorType>(large->getResult(0).getType());
      std::optional<SmallVector<int64_t>> shift = partOf(small, large);
      if (!shift || type.getRank() != largeType.getRank())
        continue;
      // Sizes of the results: their inits' (`?` ones as the values they were made of).
      SmallVector<OpFoldResult> sizes = initSizes(small), largeSizes = initSizes(large);
      if (sizes.empty() || largeSizes.empty() ||
          llvm::any_of(llvm::seq<int64_t>(0, type.getRank()), [&](int64_t d) {
            return !fitsAt((*shift)[d], sizes[d], largeSizes[d]);
          }))
        continue;
      rewriter.setInsertionPoint(small);
      SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
      Value part = tensor::ExtractSliceOp::create(
          rewriter, small.getLoc(), type, large->getResult(0),
          getAsIndexOpFoldResult(kernel.getContext(), *shift), sizes, strides);
      rewriter.replaceOp(small, part);
      erased.insert(small);
    }
  }
}

// CSE, then folds of tensor.empty, extract_slice and tensor.dim. (The tile loop of a
// `?` row dim is bounded by tensor.dim of the root's first operand, which would keep
// that operand's untiled producer alive; folded, the bound is the size the kernel's
// tensors were made with.)
LogicalResult cleanUp(func::FuncOp kernel) {
  MLIRContext *context = kernel.getContext();
  IRRewriter rewriter(context);
  DominanceInfo dominance(kernel);
  eliminateCommonSubExpressions(rewriter, dominance, kernel);
  RewritePatternSet patterns(context);
  tensor::populateFoldTensorEmptyPatterns(patterns);
  tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, context);
  tensor::DimOp::getCanonicalizationPatterns(patterns, context);
  tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
  return applyPatternsGreedily(kernel, std::move(patterns));
}

// How many copies of its producers tiling `root` would fuse into the loop: upstream's
// tile-and-fuse fuses a producer once per path from it to the root (cleanUp merges the
// copies afterwards), so a DAG of many shared values (layer_norm over a broadcast chain,
// kiln-fuzz seed 9) makes exponentially many, and the fusion's greedy cleanups took 40 s
// and more on one small kernel.
uint64_t fusedCopies(func::FuncOp kernel, Operation *root) {
  llvm::DenseMap<Operation *, uint64_t> paths{{root, 1}};
  uint64_t total = 0;
  Block &body = kernel.getBody().front();
  for (Operation &op : llvm::reverse(body)) {
    if (&op == root || !isa<linalg::LinalgOp>(op))
      continue;
    uint64_t count = 0;
    for (Operation *user : op.getUsers())
      if (Operation *top = body.findAncestorOpInBlock(*user))
        count = std::min<uint64_t>(count + paths.lookup(top), uint64_t(1) << 40);
    paths[&op] = count;
    total = std::min<uint64_t>(total + count, uint64_t(1) << 40);
  }
  return total;
}

// Above this many fused copies a row kernel is left untiled (correct, computed whole). The
// row kernels of kiln-tile-rows.mlir count 16 to 1556 (a float32 softmax's pair sums);
// seed 9's layer_norm 104,765 (50 s in kiln-tile-rows in a fastbuild).
constexpr uint64_t kMaxFusedCopies = 8192;

struct KilnTileRowsPass : impl::KilnTileRowsPassBase<KilnTileRowsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp kernel = getOperation();
    auto rows =
        kernel->getAttrOfType<IntegerAttr>(KilnDialect::getRowDimsAttrName());
    if (!rows || kernel.isExternal())
      return;
    linalg::GenericOp root = rowRoot(kernel, rows.getInt());
    if (!root)
      return;
    // Linalg's TilingInterface is an external model the context must hold
    // (registerCpuPipelineDependencies): without it, fail loudly rather than
    // compile the kernel with a full-size scratch.
    auto tileable = dyn_cast<TilingInterface>(root.getOperation());
    if (!tileable) {
      root.emitError("kiln-tile-rows: linalg's TilingInterface models are not "
                     "registered in this context");
      return signalPassFailure();
    }
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);
    fuseMultiUseProducers(kernel, rewriter);
    root = rowRoot(kernel, rows.getInt());  // fusing into the root replaced it
    if (!root)
      return;
    tileable = cast<TilingInterface>(root.getOperation());
    if (fusedCopies(kernel, root) > kMaxFusedCopies)
      return;  // untiled is still correct
    scf::SCFTilingOptions tiling;
    tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    tiling.setTileSizes(getAsIndexOpFoldResult(
        context, rowTileSizes(root, rows.getInt(), tileBytes)));
    scf::SCFTileAndFuseOptions options;
    options.setTilingOptions(tiling);
    // A float32 row sum reads its producer through slices (its pairs' first and
    // second elements): merged with the tile's slice, they are slices of the
    // producer, which is then fused like any other.
    RewritePatternSet cleanup(context);
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(cleanup);
    options.cleanupPatterns = FrozenRewritePatternSet(std::move(cleanup));
    rewriter.setInsertionPoint(root);
    FailureOr<scf::SCFTileAndFuseResult> tiled =
        scf::tileConsumerAndFuseProducersUsingSCF(rewriter, tileable, options);
    if (failed(tiled))
      return;  // untiled is still correct
    rewriter.replaceOp(root, tiled->replacements.lookup(root->getResult(0)));

    // A producer reached along several paths (softmax's exp feeds the sum and
    // the division) was fused once per path: merge the copies, drop the
    // untiled originals, and size each tensor.empty to its tile; then make the
    // copies computed on a part of another's tile slices of it, and merge again.
    if (failed(cleanUp(kernel)))
      return signalPassFailure();
    reuseLargerTiles(kernel, rewriter);
    if (failed(cleanUp(kernel)))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::kiln
