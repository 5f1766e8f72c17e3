// The code one thread block runs for a linalg generic on buffers (see GpuBlockCode.h).
#include "passes/GpuBlockCode.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::kiln::gpu_block {
namespace {

// The all-reduce kind of a combiner and its identity for `type`.
std::optional<std::pair<gpu::AllReduceOperation, TypedAttr>> combinerKind(Operation *op, Type type) {
  using K = gpu::AllReduceOperation;
  using Result = std::optional<std::pair<K, TypedAttr>>;
  if (auto f = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &sem = f.getFloatSemantics();
    auto of = [&](K kind, APFloat v) -> Result { return std::pair{kind, FloatAttr::get(type, v)}; };
    return llvm::TypeSwitch<Operation *, Result>(op)
        .Case([&](arith::AddFOp) { return of(K::ADD, APFloat::getZero(sem, /*Negative=*/true)); })
        .Case([&](arith::MulFOp) { return of(K::MUL, APFloat::getOne(sem)); })
        .Case([&](arith::MaximumFOp) { return of(K::MAXIMUMF, APFloat::getInf(sem, /*Negative=*/true)); })
        .Case([&](arith::MinimumFOp) { return of(K::MINIMUMF, APFloat::getInf(sem)); })
        .Case([&](arith::MaxNumFOp) { return of(K::MAXNUMF, APFloat::getQNaN(sem)); })
        .Case([&](arith::MinNumFOp) { return of(K::MINNUMF, APFloat::getQNaN(sem)); })
        .Default([](Operation *) { return std::nullopt; });
  }
  const unsigned bits = type.getIntOrFloatBitWidth();
  auto of = [&](K kind, APInt v) -> Result { return std::pair{kind, IntegerAttr::get(type, v)}; };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](arith::AddIOp) { return of(K::ADD, APInt::getZero(bits)); })
      .Case([&](arith::MulIOp) { return of(K::MUL, APInt(bits, 1)); })
      .Case([&](arith::MaxSIOp) { return of(K::MAXSI, APInt::getSignedMinValue(bits)); })
      .Case([&](arith::MinSIOp) { return of(K::MINSI, APInt::getSignedMaxValue(bits)); })
      .Case([&](arith::MaxUIOp) { return of(K::MAXUI, APInt::getZero(bits)); })
      .Case([&](arith::MinUIOp) { return of(K::MINUI, APInt::getAllOnes(bits)); })
      .Case([&](arith::AndIOp) { return of(K::AND, APInt::getAllOnes(bits)); })
      .Case([&](arith::OrIOp) { return of(K::OR, APInt::getZero(bits)); })
      .Case([&](arith::XOrIOp) { return of(K::XOR, APInt::getZero(bits)); })
      .Default([](Operation *) { return std::nullopt; });
}

// `select(linalg.index d == 0, constant, out)` with d the generic's only reduced dim:
// the constant, else null.
TypedAttr restartValue(arith::SelectOp select, Value out, unsigned reducedDim) {
  if (select.getFalseValue() != out)
    return nullptr;
  auto cmp = select.getCondition().getDefiningOp<arith::CmpIOp>();
  TypedAttr constant;
  if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::eq ||
      !matchPattern(select.getTrueValue(), m_Constant(&constant)))
    return nullptr;
  auto index = cmp.getLhs().getDefiningOp<linalg::IndexOp>();
  if (!index || index.getDim() != reducedDim || !matchPattern(cmp.getRhs(), m_Zero()))
    return nullptr;
  return constant;
}

// The indices `map` gives at the loop indices `ivs`.
SmallVector<Value> apply(OpBuilder &b, Location loc, AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), map.getNumSymbols(), expr), ivs));
  return indices;
}

// `ivs` with the entries the outputs' maps do not read (the reduced dims) set to `zero`.
SmallVector<Value> keptOnly(linalg::GenericOp op, ArrayRef<Value> ivs, Value zero) {
  SmallVector<Value> at(ivs);
  SmallVector<unsigned> reduced;
  op.getReductionDims(reduced);
  for (unsigned d : reduced)
    at[d] = zero;
  return at;
}

// The body of `op` at the loop indices `at`, its outputs' block arguments standing for
// `outs`: what it yields.
SmallVector<Value> cloneBody(OpBuilder &b, linalg::GenericOp op, ArrayRef<Value> at, ValueRange outs) {
  Location loc = op.getLoc();
  IRMapping map;
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (arg.use_empty())
      continue;
    Value source = input->get();
    if (!isa<MemRefType>(source.getType()))
      map.map(arg, source);
    else
      map.map(arg, memref::LoadOp::create(b, loc, source, apply(b, loc, op.getMatchingIndexingMap(input), at)));
  }
  for (auto [init, out] : llvm::zip(op.getDpsInitsMutable(), outs))
    map.map(op.getMatchingBlockArgument(&init), out);
  Block &body = *op.getBlock();
  for (Operation &bodyOp : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(bodyOp))
      map.map(index.getResult(), at[index.getDim()]);
    else
      b.clone(bodyOp, map);
  }
  SmallVector<Value> yielded;
  for (Value v : body.getTerminator()->getOperands())
    yielded.push_back(map.lookupOrDefault(v));
  return yielded;
}


int64_t product(ArrayRef<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

// A loop over `op`'s reduced elements (linearized) from `lower` by `step`, carrying `inits`
// (the outputs' running values) through the body at `ivs` with the reduced indices set.
scf::ForOp reducedLoop(OpBuilder &b, linalg::GenericOp op, ArrayRef<Value> ivs, Value lower, Value step,
                       ValueRange inits) {
  Location loc = op.getLoc();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<unsigned> reduced;
  op.getReductionDims(reduced);
  SmallVector<int64_t> reducedSizes;
  for (unsigned d : reduced)
    reducedSizes.push_back(sizes[d]);
  Value upper = arith::ConstantIndexOp::create(b, loc, product(reducedSizes));
  auto loop = scf::ForOp::create(b, loc, lower, upper, step, inits);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> at(ivs);
  for (auto [d, iv] : llvm::zip(reduced, delinearize(b, loc, loop.getInductionVar(), reducedSizes)))
    at[d] = iv;
  scf::YieldOp::create(b, loc, cloneBody(b, op, at, loop.getRegionIterArgs()));
  return loop;
}

} // namespace

std::optional<SmallVector<Fold>> foldsOf(linalg::GenericOp op) {
  SmallVector<unsigned> reduced;
  op.getReductionDims(reduced);
  Block &body = *op.getBlock();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<Fold> folds;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Value out = op.getMatchingBlockArgument(&init);
    Type type = out.getType();
    if (!type.isF32() && !type.isF64() && !type.isInteger(32) && !type.isInteger(64))
      return std::nullopt;
    // The output is indexed by kept dims alone.
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (unsigned d : reduced)
      if (map.isFunctionOfDim(d))
        return std::nullopt;
    if (!out.hasOneUse())
      return std::nullopt;
    Fold fold;
    Operation *user = *out.getUsers().begin();
    Value running = out;
    if (auto select = dyn_cast<arith::SelectOp>(user)) {
      if (reduced.size() != 1 || !select->hasOneUse())
        return std::nullopt;
      fold.start = restartValue(select, out, reduced.front());
      if (!fold.start)
        return std::nullopt;
      fold.overwrite = true;
      running = select.getResult();
      user = *select->getUsers().begin();
    }
    // The combiner takes the running value once and yields this result.
    if (user->getNumOperands() != 2 || user->getNumResults() != 1 || !user->hasOneUse() ||
        (user->getOperand(0) == running) == (user->getOperand(1) == running) ||
        yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs()) != user->getResult(0))
      return std::nullopt;
    auto kind = combinerKind(user, type);
    if (!kind)
      return std::nullopt;
    fold.combiner = user;
    fold.kind = kind->first;
    if (!fold.overwrite)
      fold.start = kind->second;
    folds.push_back(fold);
  }
  return folds;
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear, ArrayRef<int64_t> sizes) {
  SmallVector<Value> indices(sizes.size());
  for (int64_t i = int64_t(sizes.size()) - 1; i >= 0; --i) {
    if (i == 0) {
      indices[i] = linear;
      break;
    }
    Value size = arith::ConstantIndexOp::create(b, loc, sizes[i]);
    indices[i] = arith::RemUIOp::create(b, loc, linear, size);
    linear = arith::DivUIOp::create(b, loc, linear, size);
  }
  return indices;
}

gpu::ParallelLoopDimMappingAttr mapTo(MLIRContext *context, gpu::Processor processor) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  return gpu::ParallelLoopDimMappingAttr::get(context, processor, identity, identity);
}

int64_t threadsFor(int64_t work, int64_t most) {
  return std::min<int64_t>(most, std::max<int64_t>(32, llvm::PowerOf2Ceil(work)));
}

void emitBlockFold(OpBuilder &b, linalg::GenericOp op, ArrayRef<Fold> folds, ArrayRef<Value> ivs,
                   Value thread, int64_t threads) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  // Each thread folds elements thread, thread + threads, ... from the start values.
  SmallVector<Value> starts;
  for (const Fold &fold : folds)
    starts.push_back(arith::ConstantOp::create(b, loc, fold.start));
  scf::ForOp loop = reducedLoop(b, op, ivs, thread, index(threads), starts);

  // The block's threads combined (every thread takes part), then thread 0 writes.
  SmallVector<Value> totals;
  for (auto [fold, partial] : llvm::zip(folds, loop.getResults()))
    totals.push_back(gpu::AllReduceOp::create(b, loc, partial,
                                              gpu::AllReduceOperationAttr::get(context, fold.kind),
                                              b.getUnitAttr()));
  Value zero = index(0);
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, thread, zero);
  auto write = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(write.thenBlock());
  SmallVector<Value> at = keptOnly(op, ivs, zero);
  for (auto [init, fold, total] : llvm::zip(op.getDpsInitsMutable(), folds, totals)) {
    SmallVector<Value> indices = apply(b, loc, op.getMatchingIndexingMap(&init), at);
    Value result = total;
    if (!fold.overwrite) {
      Value old = memref::LoadOp::create(b, loc, init.get(), indices);
      // The combiner's operands in its own order: the running value where it was.
      IRMapping operands;
      Value running = op.getMatchingBlockArgument(&init);
      for (Value operand : fold.combiner->getOperands())
        operands.map(operand, operand == running ? old : total);
      result = b.clone(*fold.combiner, operands)->getResult(0);
    }
    memref::StoreOp::create(b, loc, result, init.get(), indices);
  }
}

void emitStrided(OpBuilder &b, linalg::GenericOp op, ArrayRef<unsigned> fixed, ArrayRef<Value> ivs,
                 Value thread, int64_t threads) {
  Location loc = op.getLoc();
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  SmallVector<unsigned> spread;
  SmallVector<int64_t> spreadSizes;
  for (auto [d, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if (type == utils::IteratorType::parallel && !llvm::is_contained(fixed, d))
      spread.push_back(d), spreadSizes.push_back(sizes[d]);
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  auto loop = scf::ForOp::create(b, loc, thread, index(product(spreadSizes)), index(threads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> at(ivs);
  for (auto [d, iv] : llvm::zip(spread, delinearize(b, loc, loop.getInductionVar(), spreadSizes)))
    at[d] = iv;
  Value zero = index(0);
  SmallVector<Value> kept = keptOnly(op, at, zero);
  // The outputs' values where the body reads them (else a placeholder it never reads).
  SmallVector<Value> outs;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (op.getMatchingBlockArgument(&init).use_empty())
      outs.push_back(arith::ConstantOp::create(b, loc, b.getZeroAttr(getElementTypeOrSelf(init.get()))));
    else
      outs.push_back(memref::LoadOp::create(b, loc, init.get(),
                                            apply(b, loc, op.getMatchingIndexingMap(&init), kept)));
  }
  SmallVector<Value> results;
  if (op.getNumReductionLoops() == 0) {
    results = cloneBody(b, op, at, outs);
  } else {
    scf::ForOp serial = reducedLoop(b, op, at, zero, index(1), outs);
    results.assign(serial.getResults().begin(), serial.getResults().end());
  }
  for (auto [init, result] : llvm::zip(op.getDpsInitsMutable(), results))
    memref::StoreOp::create(b, loc, result, init.get(), apply(b, loc, op.getMatchingIndexingMap(&init), kept));
}

} // namespace mlir::kiln::gpu_block
