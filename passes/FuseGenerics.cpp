// kiln-fuse-generics: linalg's elementwise fusion, except where it would recompute a
// producer for every element of a broadcast, and also into a generic that reads a
// producer through several operands, each element once.
#include "dialect/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNFUSEGENERICSPASS
#include "passes/Passes.h.inc"

namespace {

// How many times the generic that owns `use` reads the operand: its iterations (a
// loop the operand's map does not name is a broadcast: the operand is read again on
// each of its steps). Nothing when a size is unknown.
std::optional<int64_t> readings(OpOperand *use) {
  auto consumer = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!consumer)
    return std::nullopt;
  int64_t iterations = 1;
  for (int64_t range : consumer.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    iterations *= range;
  }
  return iterations;
}

// Whether `use`'s producer may be fused into the generic that owns it by upstream's
// pattern: the producer has no other use (upstream's rule) and, without `broadcasts`,
// the generic does not read it more often than it has elements: through a
// broadcast, it would compute each of its elements once per reading (BatchNorm's
// per-channel scale, rsqrt(var + eps) * gamma, once per pixel). With a size unknown,
// a sole use is fused.
bool mayFuseSoleUse(OpOperand *use, bool broadcasts) {
  Operation *producer = use->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  auto type = dyn_cast<RankedTensorType>(use->get().getType());
  if (broadcasts || !type || !type.hasStaticShape())
    return true;
  std::optional<int64_t> n = readings(use);
  return !n || *n <= type.getNumElements();
}

// A producer used several times by one generic and by nothing else, fused into each
// of those uses at once, when together they read each of its elements at most once:
// a float32 sum reads its input through 32 operands, one per element of a block of
// pairs, and BatchNorm's (x - mean)^2 is then computed in the sum's loop instead of
// stored to a scratch and read back. (Upstream's pattern, allowed to, would fuse one
// use at a time, rebuilding the generic 32 times: the MobileNetV2 step's MLIR lowering
// took 1.6x as long.) Reads that overlap would compute an element twice: left.
// Only producers that are all-parallel, write with a permutation, and neither read
// their output nor their indices (linalg.index) in the body.
struct FuseIntoEveryUse : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *use : consumer.getDpsInputOperands()) {
      auto producer = use->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->hasOneUse() || !readsEachElementOnce(use) ||
          !linalg::areElementwiseOpsFusable(use) || producer.hasIndexSemantics() ||
          llvm::any_of(producer.getDpsInitsMutable(), [&](OpOperand &init) {
            return producer.payloadUsesValueFromOperand(&init);
          }))
        continue;
      fuse(consumer, producer, rewriter);
      return success();
    }
    return failure();
  }

  // All uses of the producer are this generic's, and they read no more elements in
  // all than the producer has.
  static bool readsEachElementOnce(OpOperand *use) {
    auto type = dyn_cast<RankedTensorType>(use->get().getType());
    if (!type || !type.hasStaticShape() || use->get().getDefiningOp()->getNumResults() != 1)
      return false;
    int64_t uses = 0;
    for (Operation *user : use->get().getUsers()) {
      if (user != use->getOwner())
        return false;
      ++uses;
    }
    std::optional<int64_t> n = readings(use);  // the same for each use: one generic
    return n && *n * uses <= type.getNumElements();
  }

  static void fuse(linalg::GenericOp consumer, linalg::GenericOp producer,
                   PatternRewriter &rewriter) {
    Value produced = producer->getResult(0);
    AffineMap toProducerLoops =
        inversePermutation(producer.getIndexingMapMatchingResult(producer->getResult(0)));
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *in : consumer.getDpsInputOperands()) {
      AffineMap map = consumer.getMatchingIndexingMap(in);
      if (in->get() != produced) {
        inputs.push_back(in->get());
        maps.push_back(map);
        continue;
      }
      for (OpOperand *p : producer.getDpsInputOperands()) {
        inputs.push_back(p->get());
        maps.push_back(
            producer.getMatchingIndexingMap(p).compose(toProducerLoops).compose(map));
      }
    }
    for (OpOperand &init : consumer.getDpsInitsMutable())
      maps.push_back(consumer.getMatchingIndexingMap(&init));

    auto fused = linalg::GenericOp::create(
        rewriter, consumer.getLoc(), consumer->getResultTypes(), inputs,
        consumer.getDpsInits(), maps, consumer.getIteratorTypesArray());
    Block *body = rewriter.createBlock(&fused.getRegion());
    for (Value v : inputs)
      body->addArgument(getElementTypeOrSelf(v.getType()), consumer.getLoc());
    for (Value v : consumer.getDpsInits())
      body->addArgument(getElementTypeOrSelf(v.getType()), consumer.getLoc());

    // The consumer's body, each argument that read the producer replaced by a copy
    // of the producer's body on that use's share of the new arguments.
    IRMapping mapping;
    Block &consumerBody = *consumer.getBlock();
    Block &producerBody = *producer.getBlock();
    rewriter.setInsertionPointToStart(body);
    unsigned next = 0;
    for (OpOperand *in : consumer.getDpsInputOperands()) {
      BlockArgument arg = consumerBody.getArgument(in->getOperandNumber());
      if (in->get() != produced) {
        mapping.map(arg, body->getArgument(next++));
        continue;
      }
      IRMapping copy;
      for (OpOperand *p : producer.getDpsInputOperands())
        copy.map(producerBody.getArgument(p->getOperandNumber()), body->getArgument(next++));
      for (Operation &op : producerBody.without_terminator())
        rewriter.clone(op, copy);
      auto yield = cast<linalg::YieldOp>(producerBody.getTerminator());
      mapping.map(arg, copy.lookupOrDefault(yield.getOperand(0)));
    }
    for (OpOperand &init : consumer.getDpsInitsMutable())
      mapping.map(consumerBody.getArgument(init.getOperandNumber()), body->getArgument(next++));
    for (Operation &op : consumerBody)
      rewriter.clone(op, mapping);

    rewriter.replaceOp(consumer, fused->getResults());
    rewriter.eraseOp(producer);
  }
};

// With `recompute`, in a row kernel: each all-parallel producer (a permutation written,
// its output and indices unread) that several generics read gets a copy for each
// generic after the first, so each can fuse one (kiln-gpu-row-kernels' blocks then read
// no full-size scratch of it: softmax's exps were written to one and read back twice).
// Returns whether it copied one. A copy is made only of a producer whose operands are
// not results of producers copied this round, so a chain is copied once, not once per
// path through it.
bool copyProducers(func::FuncOp func) {
  if (!func->hasAttr(KilnDialect::getRowDimsAttrName()))
    return false;
  SmallVector<linalg::GenericOp> producers;
  func.walk([&](linalg::GenericOp op) {
    if (op->getNumResults() == 1 && op.getNumParallelLoops() == op.getNumLoops() &&
        !op.hasIndexSemantics() && op.getIndexingMapsArray().back().isPermutation() &&
        !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
      producers.push_back(op);
  });
  DenseSet<Operation *> copied;
  OpBuilder b(func.getContext());
  for (linalg::GenericOp producer : producers) {
    SmallVector<Operation *> consumers;
    for (Operation *user : producer->getResult(0).getUsers())
      if (isa<linalg::GenericOp>(user) && !llvm::is_contained(consumers, user))
        consumers.push_back(user);
    if (consumers.size() < 2 || llvm::any_of(producer->getOperands(), [&](Value v) {
          return copied.contains(v.getDefiningOp());
        }))
      continue;
    copied.insert(producer);
    b.setInsertionPointAfter(producer);
    for (Operation *consumer : llvm::drop_begin(consumers)) {
      Operation *copy = b.clone(*producer);
      consumer->replaceUsesOfWith(producer->getResult(0), copy->getResult(0));
    }
  }
  return !copied.empty();
}

struct KilnFuseGenericsPass : impl::KilnFuseGenericsPassBase<KilnFuseGenericsPass> {
  using KilnFuseGenericsPassBase::KilnFuseGenericsPassBase;
  void runOnOperation() override {
    // Each round fuses what the last copied; what a fusion builds may be read by several.
    for (int round = 0; round < 4; ++round) {
      if (failed(fuse()))
        return signalPassFailure();
      if (!recompute || !copyProducers(getOperation()))
        return;
    }
    if (failed(fuse()))
      signalPassFailure();
  }

  LogicalResult fuse() {
    MLIRContext *context = &getContext();
    linalg::ControlFusionFn control = [broadcasts = bool(broadcasts)](OpOperand *use) {
      return mayFuseSoleUse(use, broadcasts);
    };
    // The patterns of upstream's linalg-fuse-elementwise-ops, with that rule, and
    // fusion into every use of a producer one generic reads several times.
    RewritePatternSet patterns(context);
    patterns.add<FuseIntoEveryUse>(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    return applyPatternsGreedily(getOperation(), std::move(patterns),
                                 GreedyRewriteConfig().setUseTopDownTraversal());
  }
};

} // namespace
} // namespace mlir::kiln
