// kiln-simplify: kiln folders and canonicalizations, algebra and layout sinking, then CSE.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNSIMPLIFYPASS
#include "passes/Passes.h.inc"

namespace {

// The shape-only op (transpose or reshape) defining `v`, if `v` is its only use.
Operation *singleUseLayoutOp(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !isa<TransposeOp, ReshapeOp>(def) || !v.hasOneUse())
    return nullptr;
  return def;
}

// Whether two layout ops do the same thing to operands of the same shape.
bool sameLayout(Operation *a, Operation *b) {
  return a->getName() == b->getName() && a->getAttrs() == b->getAttrs() &&
         a->getOperand(0).getType() == b->getOperand(0).getType();
}

// Rebuilds the elementwise `op` on `operands` (which share one shape) and
// applies `layout` to its result: f(layout(x)) -> layout(f(x)).
void sinkLayout(Operation *op, Operation *layout, ValueRange operands,
                PatternRewriter &rewriter) {
  auto sourceType = cast<RankedTensorType>(operands.front().getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  OperationState state(op->getLoc(), op->getName(), operands,
                       RankedTensorType::get(sourceType.getShape(),
                                             resultType.getElementType()),
                       op->getAttrs());
  Operation *inner = rewriter.create(state);
  IRMapping mapping;
  mapping.map(layout->getOperand(0), inner->getResult(0));
  Operation *outer = rewriter.clone(*layout, mapping);
  outer->getResult(0).setType(resultType);
  rewriter.replaceOp(op, outer->getResults());
}

// f(transpose(x)) -> transpose(f(x)), and the same for reshape, for every
// elementwise op f whose operands all come from the same kind of layout op.
// Sinking lets elementwise chains meet (and fuse) and layout ops meet (and
// compose or cancel). A layout op with other users stays where it is.
struct SinkLayoutBelowElementwise
    : OpTraitRewritePattern<OpTrait::Elementwise> {
  using OpTraitRewritePattern::OpTraitRewritePattern;
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (op->getDialect() != op->getContext()->getLoadedDialect<KilnDialect>() ||
        op->getNumResults() != 1 || op->getNumOperands() == 0)
      return failure();
    Operation *first = singleUseLayoutOp(op->getOperand(0));
    if (!first)
      return failure();
    SmallVector<Value> sources{first->getOperand(0)};
    for (Value operand : op->getOperands().drop_front()) {
      Operation *layout = singleUseLayoutOp(operand);
      if (!layout || !sameLayout(first, layout))
        return rewriter.notifyMatchFailure(op, "operands differ in layout");
      sources.push_back(layout->getOperand(0));
    }
    sinkLayout(op, first, sources, rewriter);
    return success();
  }
};

// x + neg(y) -> x - y, neg(x) + y -> y - x
struct AddOfNeg : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [kept, negated] : {std::pair(op.getLhs(), op.getRhs()),
                                 std::pair(op.getRhs(), op.getLhs())}) {
      if (auto neg = negated.getDefiningOp<NegOp>()) {
        rewriter.replaceOpWithNewOp<SubOp>(op, kept, neg.getX());
        return success();
      }
    }
    return failure();
  }
};

// x - neg(y) -> x + y
struct SubOfNeg : OpRewritePattern<SubOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SubOp op,
                                PatternRewriter &rewriter) const override {
    auto neg = op.getRhs().getDefiningOp<NegOp>();
    if (!neg)
      return failure();
    rewriter.replaceOpWithNewOp<AddOp>(op, op.getLhs(), neg.getX());
    return success();
  }
};

// x / broadcast(s) -> x * broadcast(1 / s), for f32 and f64, when the broadcast repeats each
// element of s: one division per element of s instead of one per element of x (softmax
// divides each row by its sum). x * (1/s) may differ from x / s in the last bit (at most
// 1.5 ulp against 0.5), and for a subnormal s, whose reciprocal overflows to inf; PyTorch's
// own CPU softmax multiplies by the reciprocal the same way.
struct DivByBroadcast : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp op,
                                PatternRewriter &rewriter) const override {
    auto broadcast = op.getRhs().getDefiningOp<BroadcastInDimOp>();
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!broadcast || !type)
      return failure();
    // f32 and f64 only: in f16/bf16 the rounded reciprocal would add an error of the
    // same size as the result's own rounding.
    Type element = type.getElementType();
    if (!element.isF32() && !element.isF64())
      return failure();
    auto divisorType = cast<RankedTensorType>(broadcast.getX().getType());
    if (!divisorType.hasStaticShape() || !type.hasStaticShape() ||
        divisorType.getNumElements() >= type.getNumElements())
      return rewriter.notifyMatchFailure(op, "the broadcast repeats nothing");
    Location loc = op.getLoc();
    Value one = ConstantOp::create(
        rewriter, loc,
        cast<ElementsAttr>(DenseElementsAttr::get(
            divisorType, rewriter.getFloatAttr(element, 1.0))));
    Value reciprocal = DivOp::create(rewriter, loc, one, broadcast.getX());
    Value spread = BroadcastInDimOp::create(rewriter, broadcast.getLoc(), reciprocal,
                                            broadcast.getDims(), broadcast.getShape());
    rewriter.replaceOpWithNewOp<MulOp>(op, op.getLhs(), spread);
    return success();
  }
};

// Whether `transpose` swaps the last two dims and keeps the others (batch) in place:
// the transpose a matmul's transpose_a/transpose_b flags express.
bool swapsLastTwo(TransposeOp transpose) {
  ArrayRef<int64_t> perm = transpose.getPermutation();
  int64_t n = perm.size();
  if (n < 2 || perm[n - 2] != n - 1 || perm[n - 1] != n - 2)
    return false;
  for (int64_t i = 0; i < n - 2; ++i)
    if (perm[i] != i)
      return false;
  return true;
}

// matmul(transpose(x), b) -> matmul(x, b) transpose_a (and likewise for b): the
// library reads x in either order, so no transposed copy is needed.
struct MatmulOfTranspose : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto ta = op.getA().getDefiningOp<TransposeOp>();
    auto tb = op.getB().getDefiningOp<TransposeOp>();
    bool foldA = ta && swapsLastTwo(ta), foldB = tb && swapsLastTwo(tb);
    if (!foldA && !foldB)
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(
        op, op.getType(), foldA ? ta.getX() : op.getA(),
        foldB ? tb.getX() : op.getB(), op.getTransposeA() != foldA,
        op.getTransposeB() != foldB);
    return success();
  }
};

// transpose(matmul(a, b)) -> matmul(b, a) with both operands read transposed
// ((AB)^T = B^T A^T), when the transpose is the product's only user: the product
// is then computed in the layout its users read (a weight gradient straight into
// the .grad buffer, rather than a copy of it transposed).
struct TransposeOfMatmul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto mm = op.getX().getDefiningOp<MatmulOp>();
    if (!mm || !mm->hasOneUse() || !swapsLastTwo(op))
      return failure();
    rewriter.replaceOpWithNewOp<MatmulOp>(op, op.getType(), mm.getB(), mm.getA(),
                                          !mm.getTransposeB(), !mm.getTransposeA());
    return success();
  }
};

// relu?(matmul(a, b) + broadcast(bias)) -> addmm(a, b, bias) [relu], for a 2-d float
// product whose only user is the add, and a bias of one value per column: the library
// call then adds the bias (and applies the relu) as its epilogue, instead of a fused
// kernel reading the product back (oneDNN's post-ops, docs/ARCHITECTURE.md §6). The relu joins when
// it is the add's only user. Waits for MatmulOfTranspose, so transposes are flags.
struct MatmulBiasToAddmm : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    MatmulOp mm;
    BroadcastInDimOp bias;
    for (auto [x, y] : {std::pair(add.getLhs(), add.getRhs()),
                        std::pair(add.getRhs(), add.getLhs())}) {
      mm = x.getDefiningOp<MatmulOp>();
      bias = y.getDefiningOp<BroadcastInDimOp>();
      if (mm && bias)
        break;
    }
    if (!mm || !bias || !mm->hasOneUse())
      return failure();
    auto type = cast<RankedTensorType>(mm.getType());
    auto biasType = cast<RankedTensorType>(bias.getX().getType());
    if (type.getRank() != 2 || !isa<FloatType>(type.getElementType()) ||
        biasType.getRank() != 1 || bias.getDims() != ArrayRef<int64_t>{1} ||
        biasType.getDimSize(0) != type.getDimSize(1) ||  // not a [1] broadcast (217693)
        biasType.getElementType() != type.getElementType())
      return failure();
    for (Value operand : {mm.getA(), mm.getB()})
      if (auto t = operand.getDefiningOp<TransposeOp>(); t && swapsLastTwo(t))
        return failure();
    auto relu = add->hasOneUse() ? dyn_cast<ReluOp>(*add->user_begin()) : ReluOp();
    Operation *root = relu ? relu.getOperation() : add.getOperation();
    rewriter.replaceOpWithNewOp<AddmmOp>(root, type, mm.getA(), mm.getB(),
                                         bias.getX(), mm.getTransposeA(),
                                         mm.getTransposeB(), bool(relu));
    return success();
  }
};

// relu(conv2d(...)) -> conv2d(...) relu, when the relu is the convolution's only user:
// the library call applies it as an epilogue after the bias, instead of a kernel reading
// the output back.
struct ReluOfConv2d : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReluOp relu,
                                PatternRewriter &rewriter) const override {
    auto conv = relu->getOperand(0).getDefiningOp<Conv2dOp>();
    if (!conv || !conv->hasOneUse() || conv.getRelu())
      return failure();
    rewriter.replaceOpWithNewOp<Conv2dOp>(
        relu, conv.getType(), conv.getX(), conv.getW(), conv.getBias(),
        conv.getStrideAttr(), conv.getPaddingAttr(), conv.getDilationAttr(),
        conv.getGroupsAttr(), rewriter.getUnitAttr());
    return success();
  }
};

struct KilnSimplifyPass : impl::KilnSimplifyPassBase<KilnSimplifyPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    auto *kiln = context->getLoadedDialect<KilnDialect>();
    for (RegisteredOperationName name : context->getRegisteredOperations())
      if (&name.getDialect() == kiln)
        name.getCanonicalizationPatterns(set, context);
    populateSimplifyAlgebraPatterns(set);
    patterns = std::move(set);
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    // Rewrites expose common subexpressions and CSE exposes rewrites
    // (x - neg(y) once both negs are one); a handful of rounds reach the end.
    for (int round = 0; round < 4; ++round) {
      bool rewritten = false;
      if (failed(applyPatternsGreedily(func, patterns,
                                       GreedyRewriteConfig(), &rewritten)))
        return signalPassFailure();
      bool eliminated = false;
      DominanceInfo dominance(func);
      eliminateCommonSubExpressions(rewriter, dominance, func, &eliminated);
      if (!rewritten && !eliminated)
        return;
    }
  }

  FrozenRewritePatternSet patterns;
};

} // namespace

void populateSimplifyAlgebraPatterns(RewritePatternSet &patterns) {
  patterns.add<AddOfNeg, DivByBroadcast, MatmulBiasToAddmm, MatmulOfTranspose,
               ReluOfConv2d, SinkLayoutBelowElementwise, SubOfNeg, TransposeOfMatmul>(
      patterns.getContext());
}

} // namespace mlir::kiln
