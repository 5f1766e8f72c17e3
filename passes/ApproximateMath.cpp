// kiln-approximate-math: f32 transcendental math ops become polynomial approximations
// (arith and math.fma only), so the loops around them vectorize.
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNAPPROXIMATEMATHPASS
#include "passes/Passes.h.inc"

namespace {

// The math ops kiln-convert-to-linalg emits (and their relatives) whose upstream
// approximations stay within a few ulp on f32 over the whole range. Left to libm: powf
// (exp(y log x) loses accuracy as |y log x| grows), and sin and cos, whose range
// reduction is only good for small arguments (sin(1e30) would come out -inf).
bool isApproximated(StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases({"atan", "atan2", "erf", "erfc", "exp", "expm1", "log", "log1p", "log2",
              "tanh"},
             true)
      .Default(false);
}

// The log approximations read the exponent from the bits, which is wrong for subnormal
// inputs (log(1e-40) would be log(FLT_MIN)). Such inputs are scaled by 2^24 into the
// normal range first, and 24 ln 2 (24 for log2) subtracted after.
void scaleSubnormalLogInputs(func::FuncOp func) {
  SmallVector<Operation *> logs;
  func.walk([&](Operation *op) {
    if (isa<math::LogOp, math::Log2Op>(op) &&
        getElementTypeOrSelf(op->getResult(0).getType()).isF32())
      logs.push_back(op);
  });
  for (Operation *op : logs) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Type type = op->getResult(0).getType();
    auto constant = [&](float value) -> Value {
      TypedAttr attr = b.getF32FloatAttr(value);
      if (auto shaped = dyn_cast<ShapedType>(type))
        attr = SplatElementsAttr::get(shaped, attr);
      return arith::ConstantOp::create(b, loc, attr);
    };
    Value x = op->getOperand(0);
    Value tiny = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                       constant(0x1p-126f));
    Value scaled = arith::MulFOp::create(b, loc, x, constant(0x1p24f));
    op->setOperand(0, arith::SelectOp::create(b, loc, tiny, scaled, x));
    b.setInsertionPointAfter(op);
    float shift = isa<math::LogOp>(op) ? 24.0f * 0.693147180559945309f : 24.0f;
    Value result = op->getResult(0);
    Value corrected = arith::SubFOp::create(b, loc, result, constant(shift));
    Value fixed = arith::SelectOp::create(b, loc, tiny, corrected, result);
    SmallPtrSet<Operation *, 2> keep = {corrected.getDefiningOp(), fixed.getDefiningOp()};
    result.replaceAllUsesExcept(fixed, keep);
  }
}

struct KilnApproximateMathPass
    : impl::KilnApproximateMathPassBase<KilnApproximateMathPass> {
  using Base::Base;
  void runOnOperation() override {
    // The divisions there before the rewrite are the user's: marked, so that
    // those the approximations add can be told apart after it (by attribute,
    // not by address: an op the driver erases frees memory a new one may take).
    constexpr StringLiteral kUsers = "kiln.users_division";
    if (approximateDivision)
      getOperation().walk([&](arith::DivFOp div) { div->setAttr(kUsers, UnitAttr::get(&getContext())); });
    scaleSubnormalLogInputs(getOperation());
    RewritePatternSet patterns(&getContext());
    populateKilnApproximateMathPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!approximateDivision)
      return;
    getOperation().walk([&](arith::DivFOp div) {
      if (div->removeAttr(kUsers))
        return;
      if (getElementTypeOrSelf(div.getType()).isF32())
        div.setFastmath(div.getFastmath() | arith::FastMathFlags::afn);
    });
  }
};

} // namespace

void populateKilnApproximateMathPatterns(RewritePatternSet &patterns) {
  populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
    return isApproximated(name.starts_with("math.") ? name.drop_front(5) : name);
  });
}

} // namespace mlir::kiln
