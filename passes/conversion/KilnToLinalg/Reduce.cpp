// kiln→linalg for kiln.reduce: linalg.fill of the kind's neutral element, a
// linalg.generic with reduction iterators, then rounding (and mean's division).
// A float32 sum or mean forms the eager kernels' pairs first (see
// accumulatePairs).
#include "dialect/KilnOps.h"
#include "passes/Passes.h"
#include "passes/conversion/KilnToLinalg/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

#include <algorithm>
#include <limits>

namespace mlir::kiln {
namespace {

// The eager kernels sum and multiply floats in f64 and round once at the end,
// so the compiled reduction does too; integers wrap in their own width (the
// eager kernels' int64 accumulator truncated gives the same bits); max and
// min compare in the math type.
Type accumulatorTypeOf(ReduceKind kind, Type element) {
  bool extremum = kind == ReduceKind::max || kind == ReduceKind::min;
  if (isa<FloatType>(element) && !extremum)
    return Float64Type::get(element.getContext());
  return mathTypeOf(element);
}

TypedAttr neutralOf(OpBuilder &b, ReduceKind kind, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type)) {
    double inf = std::numeric_limits<double>::infinity();
    switch (kind) {
    case ReduceKind::sum:
    case ReduceKind::mean:
      return b.getFloatAttr(floatType, 0.0);
    case ReduceKind::prod:
      return b.getFloatAttr(floatType, 1.0);
    case ReduceKind::max:
      return b.getFloatAttr(floatType, -inf);
    case ReduceKind::min:
      return b.getFloatAttr(floatType, inf);
    }
  }
  unsigned width = type.getIntOrFloatBitWidth();
  switch (kind) {
  case ReduceKind::sum:
  case ReduceKind::mean:
    return b.getIntegerAttr(type, 0);
  case ReduceKind::prod:
    return b.getIntegerAttr(type, 1);
  case ReduceKind::max:
    return b.getIntegerAttr(type, APInt::getSignedMinValue(width));
  case ReduceKind::min:
    return b.getIntegerAttr(type, APInt::getSignedMaxValue(width));
  }
  llvm_unreachable("every reduce kind is handled");
}

// The accumulator after element `v`. Float max/min take a NaN and then keep
// it, as the eager kernels. Float sums and
// products may be reassociated: they accumulate in f64, where another order
// changes the f32 result by at most an ulp, and it lets LLVM vectorize them
// (the eager kernels' order is 16 interleaved lanes, not the index order).
Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value acc, Value v) {
  bool isFloat = isa<FloatType>(acc.getType());
  auto reassoc = arith::FastMathFlags::reassoc;
  switch (kind) {
  case ReduceKind::sum:
  case ReduceKind::mean:
    return isFloat ? arith::AddFOp::create(b, loc, acc, v, reassoc).getResult()
                   : arith::AddIOp::create(b, loc, acc, v).getResult();
  case ReduceKind::prod:
    return isFloat ? arith::MulFOp::create(b, loc, acc, v, reassoc).getResult()
                   : arith::MulIOp::create(b, loc, acc, v).getResult();
  case ReduceKind::max:
  case ReduceKind::min:
    break;
  }
  // maximumf/minimumf propagate NaN like the eager kernels and are reductions
  // LLVM vectorizes; they differ only in which of -0 and +0 wins a tie.
  bool max = kind == ReduceKind::max;
  if (!isFloat)
    return max ? arith::MaxSIOp::create(b, loc, acc, v).getResult()
               : arith::MinSIOp::create(b, loc, acc, v).getResult();
  return max ? arith::MaximumFOp::create(b, loc, acc, v).getResult()
             : arith::MinimumFOp::create(b, loc, acc, v).getResult();
}

// Elements per block of the float32 pairs, and the distance between the two
// elements of a pair (frontend/core/kernels/Reduce.h: PairFold).
constexpr int64_t kPairBlock = 32, kPairDistance = 16;

// The dims of the shape `accumulate` writes: for each dim of the reduction's
// input, a unit loop (with keep_dims) where reduced, else the loop of that kept
// dim. `keptLoops` are the kept dims' loops in order.
SmallVector<AffineExpr> resultExprs(OpBuilder &b, int64_t rank,
                                    ArrayRef<int64_t> dims, bool keep,
                                    ArrayRef<int64_t> keptLoops) {
  SmallVector<AffineExpr> exprs;
  int64_t unit = 0, kept = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(dims, d)) {
      if (keep)
        exprs.push_back(b.getAffineDimExpr(unit++));
      continue;
    }
    exprs.push_back(b.getAffineDimExpr(keptLoops[kept++]));
  }
  return exprs;
}

// acc combined by `kind` with element(inputs' elements), over the dims of the
// inputs (all of one shape, read in loop order) marked in `reduced`. acc has
// the result shape of a reduction over `dims` of an input of rank `inputRank`,
// whose kept dims are, in order, the unmarked dims. Loops: with keep_dims first
// one of extent 1 per reduced dim (the result's size-1 dims), then one per dim
// of the inputs. The result is written in its own shape, so no reshape stands
// between the reduction and its users, which kiln-tile-rows needs to fuse the
// reduction into their row loop.
Value accumulateAll(OpBuilder &b, Location loc, ReduceKind kind,
                    ValueRange inputs, ArrayRef<bool> reduced,
                    int64_t inputRank, ArrayRef<int64_t> dims, bool keep,
                    Value acc, ScalarBuilder element) {
  const int64_t rank = reduced.size();
  const int64_t units = keep ? int64_t(dims.size()) : 0;
  SmallVector<utils::IteratorType> iterators(units,
                                             utils::IteratorType::parallel);
  SmallVector<int64_t> keptLoops;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      keptLoops.push_back(iterators.size());
    iterators.push_back(reduced[d] ? utils::IteratorType::reduction
                                   : utils::IteratorType::parallel);
  }
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> maps(
      inputs.size(),
      AffineMap::getMultiDimIdentityMap(rank, context).shiftDims(units));
  maps.push_back(AffineMap::get(
      units + rank, 0, resultExprs(b, inputRank, dims, keep, keptLoops),
      context));
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, inputs, acc, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value v = element(nb, nloc, args.drop_back());
               linalg::YieldOp::create(
                   nb, nloc, combine(nb, nloc, kind, args.back(), v));
             })
      .getResult(0);
}

// The reduction's input seen so that the blocks of pairs lie along one of its
// dims, `pairDim`: the last reduced dim when its size is a multiple of the block,
// else the run of reduced dims it ends taken as one dim when that run's size is,
// else all reduced dims taken as one (moved last, unless they already are one
// run). `reduced` marks the reduced dims of the layout. The kept dims keep their
// order. Every layout pairs the same elements (32k + l with 32k + 16 + l, counted
// in the order of the reduced dims), they only read them in another order.
//
// Where the sizes are static and each block of 32 covers whole rows of the dims
// inside the outermost one of the pair dim (their product divides 32: a BatchNorm
// over 16x16, 8x8, 4x4, 2x2 or 1x1 planes), the input is read where it lies, each
// layout index turned into the input's by affine maps that stay linear (`groups`).
// Else it is reshaped: collapsed (a view), and transposed first where the reduced
// dims are moved (a copy). A reshape stands between the reduction and an
// elementwise producer, which is then materialized instead of fused (BatchNorm's
// (x - mean)^2, 6 MB stored and read back per call at MobileNetV2's sizes).
struct PairLayout {
  Value x;
  SmallVector<bool> reduced;
  int64_t pairDim;
  // Empty when x's dims are the layout's. Else, for each layout dim, the dims of
  // x (static sizes) it stands for: the pair dim's several, outermost first.
  SmallVector<ReassociationIndices> groups;

  // x's indices at the layout's indices `at`.
  SmallVector<AffineExpr> read(ArrayRef<AffineExpr> at) const {
    if (groups.empty())
      return SmallVector<AffineExpr>(at);
    ArrayRef<int64_t> shape = cast<RankedTensorType>(x.getType()).getShape();
    SmallVector<AffineExpr> exprs(shape.size());
    for (auto [index, group] : llvm::zip_equal(at, groups)) {
      int64_t stride = 1;
      for (int64_t d : llvm::reverse(ArrayRef(group).drop_front())) {
        exprs[d] = index.floorDiv(stride) % shape[d];
        stride *= shape[d];
      }
      exprs[group.front()] = index.floorDiv(stride);
    }
    return exprs;
  }

  // The size of layout dim `d`.
  OpFoldResult size(OpBuilder &b, Location loc, int64_t d) const {
    if (groups.empty())
      return dimSize(b, loc, x, d);
    int64_t product = 1;
    for (int64_t dim : groups[d])
      product *= cast<RankedTensorType>(x.getType()).getDimSize(dim);
    return b.getIndexAttr(product);
  }
};

PairLayout pairLayout(OpBuilder &b, Location loc, Value x,
                      ArrayRef<int64_t> dims) {
  auto type = cast<RankedTensorType>(x.getType());
  const int64_t rank = type.getRank();
  SmallVector<bool> reduced(rank, false);
  for (int64_t d : dims)
    reduced[d] = true;
  auto wholeBlocks = [](int64_t size) {
    return !ShapedType::isDynamic(size) && size % kPairBlock == 0;
  };
  int64_t last = dims.back();
  if (wholeBlocks(type.getDimSize(last)))
    return {x, reduced, last, {}};
  int64_t first = last, run = type.getDimSize(last);
  while (first > 0 && reduced[first - 1]) {
    int64_t size = type.getDimSize(--first);
    run = ShapedType::isDynamic(run) || ShapedType::isDynamic(size)
              ? ShapedType::kDynamic
              : run * size;
  }
  // x's dims in the layout's order, and the layout's dims [first, last] the
  // pair dim.
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  const bool moved = !wholeBlocks(run) && first != dims.front();
  if (moved) {
    perm.clear();
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        perm.push_back(d);
    llvm::append_range(perm, dims);
    first = rank - int64_t(dims.size());
    last = rank - 1;
  }
  if (!moved && first == last)
    return {x, reduced, last, {}};
  // The layout's dims as positions in `perm` (the reshape's reassociation), and as
  // dims of x.
  SmallVector<ReassociationIndices> collapsed;
  for (int64_t p = 0; p < rank; ++p) {
    if (p <= first || p > last)
      collapsed.push_back({p});
    else
      collapsed.back().push_back(p);
  }
  SmallVector<ReassociationIndices> groups = collapsed;
  for (ReassociationIndices &group : groups)
    for (int64_t &d : group)
      d = perm[d];
  SmallVector<bool> layoutReduced;
  for (const ReassociationIndices &group : groups)
    layoutReduced.push_back(reduced[group.front()]);

  int64_t inner = 1;
  bool known = true;
  for (int64_t d : groups[first]) {
    known = known && !type.isDynamicDim(d);
    if (d != groups[first].front() && known)
      inner *= type.getDimSize(d);
  }
  if (known && kPairBlock % inner == 0)
    return {x, layoutReduced, first, groups};

  if (moved) {
    SmallVector<OpFoldResult> shape;
    for (int64_t d : perm)
      shape.push_back(dimSize(b, loc, x, d));
    Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    x = linalg::TransposeOp::create(b, loc, x, init, perm)->getResult(0);
  }
  if (first < last)
    x = tensor::CollapseShapeOp::create(b, loc, x, collapsed);
  return {x, layoutReduced, first, {}};
}

// The operands of a generic that adds elements shift + 32k + l of `source` (a
// PairLayout's x or a slice of it), k < blocks and l < lanes, each with its
// partner 16 on when `paired`. Loops: `units` unit loops, then one per dim of
// the layout, two (k, l) for the pair dim, so the dims inside the pair dim (a
// column's) stay innermost; l is a reduction, or parallel when `laneLoop` (the
// results have a lane dim). A `window` operand, never read, gives k and l their
// extents, as linalg's pooling ops do.
struct PairOperands {
  SmallVector<utils::IteratorType> iterators;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> keptLoops;
  AffineExpr lane;
};
PairOperands pairOperands(OpBuilder &b, Location loc, const PairLayout &layout,
                          Value source, int64_t units, int64_t shift,
                          OpFoldResult blocks, OpFoldResult lanes, bool paired,
                          bool laneLoop) {
  PairOperands result;
  result.iterators.assign(units, utils::IteratorType::parallel);
  SmallVector<AffineExpr> first, second;
  AffineExpr block;
  for (int64_t d = 0; d < int64_t(layout.reduced.size()); ++d) {
    AffineExpr loop = b.getAffineDimExpr(result.iterators.size());
    if (d == layout.pairDim) {
      block = loop;
      result.lane = b.getAffineDimExpr(result.iterators.size() + 1);
      first.push_back(block * kPairBlock + result.lane + shift);
      second.push_back(block * kPairBlock + result.lane + shift +
                       kPairDistance);
      result.iterators.push_back(utils::IteratorType::reduction);
      result.iterators.push_back(laneLoop ? utils::IteratorType::parallel
                                          : utils::IteratorType::reduction);
      continue;
    }
    first.push_back(loop);
    second.push_back(loop);
    if (!layout.reduced[d])
      result.keptLoops.push_back(result.iterators.size());
    result.iterators.push_back(layout.reduced[d]
                                   ? utils::IteratorType::reduction
                                   : utils::IteratorType::parallel);
  }
  const int64_t loops = result.iterators.size();
  MLIRContext *context = b.getContext();
  result.maps.push_back(AffineMap::get(loops, 0, layout.read(first), context));
  result.inputs.push_back(source);
  if (paired) {
    result.maps.push_back(
        AffineMap::get(loops, 0, layout.read(second), context));
    result.inputs.push_back(source);
  }
  result.inputs.push_back(
      tensor::EmptyOp::create(b, loc, {blocks, lanes}, b.getIntegerType(8)));
  result.maps.push_back(
      AffineMap::get(loops, 0, {block, result.lane}, context));
  return result;
}

// A static row (the pair dim innermost) summed as the eager kernels' PairFold
// sums it, bit for bit: 16 f64 lanes starting at 0, lane l adding the pair sums
// x[32k + l] + x[32k + 16 + l] block after block (the blocks counted over the
// reduced dims, in order), then the last block's pairs and elements alone each
// added to its lane (l < 16), then the lanes combined by halving
// (kernels::combineLanes). The whole blocks are one generic with 16 results
// (wholeLanes below): each element is read once and no pair is computed to be
// dropped. The last block's pairs and its elements alone are generics over
// their lanes alone, and one generic adds them to the lanes and combines those
// (per result element, with a unit reduction loop so that it is not fused into
// elementwise users). No fast-math flags: the order is the eager one.
Value accumulateRowLanes(OpBuilder &b, Location loc, const PairLayout &layout,
                         int64_t inputRank, ArrayRef<int64_t> dims, bool keep,
                         Value acc, int64_t size) {
  const int64_t rank = layout.reduced.size();
  const int64_t units = keep ? int64_t(dims.size()) : 0;
  const int64_t blocks = size / kPairBlock, rest = size % kPairBlock;
  const int64_t paired = std::max<int64_t>(rest - kPairDistance, 0);
  const int64_t alone = std::min<int64_t>(rest, kPairDistance) - paired;
  auto accTensor = cast<RankedTensorType>(acc.getType());
  Type accType = accTensor.getElementType();
  const int64_t resultRank = accTensor.getRank();
  MLIRContext *context = b.getContext();
  SmallVector<OpFoldResult> resultSizes = tensor::getMixedSizes(b, loc, acc);
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(accType, 0.0));

  // [result..., lanes] f64: from 0, adds x[shift + 32k + l] (and its partner
  // x[shift + 32k + 16 + l] when `pairs`, in f32 first) over k < count into
  // lane l < lanes.
  auto lanesOf = [&](int64_t shift, int64_t count, int64_t lanes,
                     bool pairs) -> Value {
    SmallVector<OpFoldResult> shape = resultSizes;
    shape.push_back(b.getIndexAttr(lanes));
    Value init = tensor::EmptyOp::create(b, loc, shape, accType);
    Value filled = linalg::FillOp::create(b, loc, zero, init).getResult(0);
    PairOperands operands =
        pairOperands(b, loc, layout, layout.x, units, shift,
                     b.getIndexAttr(count), b.getIndexAttr(lanes), pairs,
                     /*laneLoop=*/true);
    SmallVector<AffineExpr> out =
        resultExprs(b, inputRank, dims, keep, operands.keptLoops);
    out.push_back(operands.lane);
    operands.maps.push_back(
        AffineMap::get(operands.iterators.size(), 0, out, context));
    return linalg::GenericOp::create(
               b, loc, TypeRange{filled.getType()}, operands.inputs, filled,
               operands.maps, operands.iterators,
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value v = args[0];
                 if (pairs)  // in f32, as the eager kernels
                   v = arith::AddFOp::create(nb, nloc, v, args[1]);
                 v = convertScalar(nb, nloc, v, accType);
                 Value sum = arith::AddFOp::create(nb, nloc, args.back(), v);
                 linalg::YieldOp::create(nb, nloc, sum);
               })
        .getResult(0);
  };

  // The whole blocks: 16 f64 results of the result's shape, lane c adding
  // x[32k + c] + x[32k + 16 + c] over k < count. One loop per dim of
  // layout.x, k for the pair dim, and the 16 lanes written out in the body
  // (32 operands reading x): an scf.for over k carrying 16 accumulators
  // (kiln-promote-accumulators), which LLVM vectorizes across the lanes with
  // contiguous loads. (A loop over the lanes left the accumulators in memory,
  // stored on every k.)
  auto wholeLanes = [&](int64_t count) -> SmallVector<Value> {
    // Not filled: the lanes start at 0 on the first step of the reduction
    // loops (in the body). Sixteen
    // fills would be sixteen more launches on the GPU, and, merged by CSE into
    // one, a copy of it into each lane's buffer on the CPU.
    SmallVector<Value> inits(
        kPairDistance, tensor::EmptyOp::create(b, loc, resultSizes, accType));
    SmallVector<utils::IteratorType> iterators(units,
                                               utils::IteratorType::parallel);
    SmallVector<AffineExpr> exprs;
    SmallVector<int64_t> keptLoops;
    AffineExpr block;
    int64_t pairPos = 0;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr loop = b.getAffineDimExpr(iterators.size());
      if (d == layout.pairDim) {
        block = loop;
        pairPos = exprs.size();
        exprs.push_back(loop);
        iterators.push_back(utils::IteratorType::reduction);
        continue;
      }
      exprs.push_back(loop);
      if (!layout.reduced[d])
        keptLoops.push_back(iterators.size());
      iterators.push_back(layout.reduced[d] ? utils::IteratorType::reduction
                                            : utils::IteratorType::parallel);
    }
    const int64_t loops = iterators.size();
    SmallVector<AffineMap> maps;
    SmallVector<Value> inputs;
    for (int64_t e = 0; e < kPairBlock; ++e) {
      SmallVector<AffineExpr> at = exprs;
      at[pairPos] = block * kPairBlock + e;
      maps.push_back(AffineMap::get(loops, 0, layout.read(at), context));
      inputs.push_back(layout.x);
    }
    // never read: gives k its extent
    inputs.push_back(tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{count}, b.getIntegerType(8)));
    maps.push_back(AffineMap::get(loops, 0, {block}, context));
    AffineMap out = AffineMap::get(
        loops, 0, resultExprs(b, inputRank, dims, keep, keptLoops), context);
    maps.append(kPairDistance, out);
    SmallVector<Type> types(kPairDistance, inits[0].getType());
    auto generic = linalg::GenericOp::create(
        b, loc, types, inputs, inits, maps, iterators,
        [&](OpBuilder &nb, Location nloc, ValueRange args) {
          // the first step of every reduction loop (batch_norm's N as
          // well as k: the lanes run on over the N)
          Value first;
          Value origin = arith::ConstantIndexOp::create(nb, nloc, 0);
          for (auto [loop, iterator] : llvm::enumerate(iterators)) {
            if (iterator != utils::IteratorType::reduction)
              continue;
            Value at = arith::CmpIOp::create(
                nb, nloc, arith::CmpIPredicate::eq,
                linalg::IndexOp::create(nb, nloc, loop), origin);
            first = first ? arith::AndIOp::create(nb, nloc, first, at) : at;
          }
          Value start = arith::ConstantOp::create(
              nb, nloc, nb.getFloatAttr(accType, 0.0));
          SmallVector<Value> lanes;
          for (int64_t c = 0; c < kPairDistance; ++c) {
            // in f32, as the eager kernels
            Value v = arith::AddFOp::create(nb, nloc, args[c],
                                            args[c + kPairDistance]);
            v = convertScalar(nb, nloc, v, accType);
            Value lane = arith::SelectOp::create(nb, nloc, first, start,
                                                 args[kPairBlock + 1 + c]);
            lanes.push_back(arith::AddFOp::create(nb, nloc, lane, v));
          }
          linalg::YieldOp::create(nb, nloc, lanes);
        });
    return SmallVector<Value>(generic->getResults());
  };

  // Lane c of each: an input of the combining generic read at (result..., c).
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<int64_t> base(kPairDistance, -1), last(kPairDistance, -1);
  auto readLane = [&](Value lanes, int64_t c) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < resultRank; ++d)
      exprs.push_back(b.getAffineDimExpr(d));
    exprs.push_back(b.getAffineConstantExpr(c));
    inputs.push_back(lanes);
    maps.push_back(AffineMap::get(resultRank, 0, exprs, context));
    return int64_t(inputs.size()) - 1;
  };
  if (blocks > 0) {
    SmallVector<Value> whole = wholeLanes(blocks);
    for (int64_t c = 0; c < kPairDistance; ++c) {
      SmallVector<AffineExpr> exprs;
      for (int64_t d = 0; d < resultRank; ++d)
        exprs.push_back(b.getAffineDimExpr(d));
      inputs.push_back(whole[c]);
      maps.push_back(AffineMap::get(resultRank, 0, exprs, context));
      base[c] = int64_t(inputs.size()) - 1;
    }
  }
  if (paired > 0) {
    Value pairs = lanesOf(blocks * kPairBlock, 1, paired, /*pairs=*/true);
    for (int64_t c = 0; c < paired; ++c)
      last[c] = readLane(pairs, c);
  }
  if (alone > 0) {
    Value elements =
        lanesOf(blocks * kPairBlock + paired, 1, alone, /*pairs=*/false);
    for (int64_t c = 0; c < alone; ++c)
      last[paired + c] = readLane(elements, c);
  }
  // One more loop, a reduction of extent 1 (a window operand gives it): an
  // elementwise generic would be fused into its users, each element of a
  // softmax's division combining the lanes again.
  inputs.push_back(tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{1},
                                           b.getIntegerType(8)));
  maps.push_back(AffineMap::get(resultRank + 1, 0,
                                {b.getAffineDimExpr(resultRank)}, context));
  for (AffineMap &map : maps)
    if (map.getNumDims() == unsigned(resultRank))
      map = AffineMap::get(resultRank + 1, 0, map.getResults(), context);
  maps.push_back(AffineMap::get(
      resultRank + 1, 0,
      AffineMap::getMultiDimIdentityMap(resultRank, context).getResults(),
      context));
  SmallVector<utils::IteratorType> iterators(resultRank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, inputs, acc, maps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value zero = arith::ConstantOp::create(
                   nb, nloc, nb.getFloatAttr(accType, 0.0));
               SmallVector<Value> l(kPairDistance);
               for (int64_t c = 0; c < kPairDistance; ++c) {
                 l[c] = base[c] >= 0 ? args[base[c]] : zero;
                 if (last[c] >= 0)
                   l[c] = arith::AddFOp::create(nb, nloc, l[c], args[last[c]]);
               }
               for (int64_t width = kPairDistance / 2; width >= 1; width /= 2)
                 for (int64_t c = 0; c < width; ++c)
                   l[c] = arith::AddFOp::create(nb, nloc, l[c], l[c + width]);
               linalg::YieldOp::create(nb, nloc, l[0]);
             })
      .getResult(0);
}

// Sums float32 `x` over `dims` into the f64 `acc` (of the reduction's result
// shape) as the eager kernels pair it: in each block of 32 elements, counted in
// the order of the reduced dims, element 32k + l and element 32k + 16 + l
// (l < 16) are added in f32 and the pair sum in f64; an element whose partner
// is past the end is added alone. The f64 adds may be reassociated (see
// combine), so the result differs from the eager one by f64 roundings only.
//
// When the pair dim is innermost (rows) and static: accumulateRowLanes, the
// eager order exactly. A `?` one: one generic adds x[i] + x[i + 16]
// wherever i % 32 < 16 (see below), then one the elements alone. Otherwise
// (columns: kept dims inside the pair dim, along which LLVM vectorizes): one
// generic over loops (k, l) for the whole blocks, one for the last, partial
// block's pairs and one for its elements alone. The indices 32k + l are not
// loops, so a `window` operand, never read, gives k and l their extents, as
// linalg's pooling ops do.
//
// A `?` pair dim has its whole blocks, last block and lone elements counted at
// run time (index floordiv and rem of its size): the same generics, with
// extents (and the last block's start, a slice of x) computed from the size,
// and none left out for being empty. So every size gets the pairs the static
// lowering of that size forms.
Value accumulatePairs(OpBuilder &b, Location loc, Value x,
                      ArrayRef<int64_t> dims, bool keep, Value acc) {
  const int64_t inputRank = cast<RankedTensorType>(x.getType()).getRank();
  PairLayout layout = pairLayout(b, loc, x, dims);
  const int64_t rank = layout.reduced.size();
  SizeBuilder sizes{b, loc};
  const OpFoldResult size = layout.size(b, loc, layout.pairDim);
  const int64_t units = keep ? int64_t(dims.size()) : 0;
  Type accType = cast<RankedTensorType>(acc.getType()).getElementType();
  MLIRContext *context = b.getContext();
  const bool rows = layout.pairDim == rank - 1;
  auto index = [&](int64_t value) -> OpFoldResult {
    return b.getIndexAttr(value);
  };
  // x from `start` along the pair dim (static starts are map offsets instead).
  auto from = [&](Value start) -> Value {
    assert(layout.groups.empty() && "a `?` pair dim is reshaped");
    SmallVector<OpFoldResult> offsets(rank, index(0)), strides(rank, index(1));
    SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, layout.x);
    offsets[layout.pairDim] = start;
    shape[layout.pairDim] = sizes.sub(size, start);
    return tensor::ExtractSliceOp::create(b, loc, layout.x, offsets, shape,
                                          strides);
  };

  // Adds elements offset + 32k + l, k < blocks and l < lanes, each with its
  // partner 16 on when `paired`, into `into` (see pairOperands).
  auto accumulate = [&](Value into, OpFoldResult offset, OpFoldResult blocks,
                        OpFoldResult lanes, bool paired) -> Value {
    Value source = layout.x;
    std::optional<int64_t> shift = getConstantIntValue(offset);
    if (!shift) {
      source = from(cast<Value>(offset));
      shift = 0;
    }
    PairOperands operands = pairOperands(b, loc, layout, source, units, *shift,
                                         blocks, lanes, paired,
                                         /*laneLoop=*/false);
    operands.maps.push_back(AffineMap::get(
        operands.iterators.size(), 0,
        resultExprs(b, inputRank, dims, keep, operands.keptLoops), context));
    return linalg::GenericOp::create(
               b, loc, TypeRange{into.getType()}, operands.inputs, into,
               operands.maps, operands.iterators,
               [&](OpBuilder &nb, Location nloc, ValueRange args) {
                 Value v = args[0];
                 if (paired)  // in f32, as the eager kernels: no fast-math
                   v = arith::AddFOp::create(nb, nloc, v, args[1]);
                 v = convertScalar(nb, nloc, v, accType);
                 linalg::YieldOp::create(
                     nb, nloc,
                     combine(nb, nloc, ReduceKind::sum, args.back(), v));
               })
        .getResult(0);
  };
  // Whether a generic over `extent` may run: a `?` extent always may.
  auto mayRun = [](OpFoldResult extent) {
    std::optional<int64_t> known = getConstantIntValue(extent);
    return !known || *known > 0;
  };

  if (rows && getConstantIntValue(size))
    return accumulateRowLanes(b, loc, layout, inputRank, dims, keep, acc,
                              *getConstantIntValue(size));
  const OpFoldResult blocks = sizes.div(size, kPairBlock),
                     rest = sizes.rem(size, kPairBlock);
  if (rows) {
    // Along a `?` row, x[i] + x[i + 16] for every i < size - 16, from two
    // slices of x, kept where i % 32 < 16: a plain loop over i that LLVM
    // vectorizes with contiguous loads. (Loops over k and l read x 32 apart
    // along k, which LLVM, having unrolled the 16 l's, vectorized with
    // gathers.) The elements without a partner are added below.
    SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, layout.x);
    shape.back() = sizes.max(sizes.sub(size, index(kPairDistance)), index(0));
    assert(layout.groups.empty() && "a `?` pair dim is reshaped");
    auto sliceFrom = [&](int64_t start) -> Value {
      SmallVector<OpFoldResult> offsets(rank, index(0)),
          strides(rank, index(1));
      offsets.back() = index(start);
      return tensor::ExtractSliceOp::create(b, loc, layout.x, offsets, shape,
                                            strides);
    };
    acc = accumulateAll(
        b, loc, ReduceKind::sum, {sliceFrom(0), sliceFrom(kPairDistance)},
        layout.reduced, inputRank, dims, keep, acc,
        [&](OpBuilder &nb, Location nloc, ValueRange elements) -> Value {
          // i % 32 < 16 for i the index along the row (the last loop)
          Value i = linalg::IndexOp::create(nb, nloc, units + rank - 1);
          Value half = arith::AndIOp::create(
              nb, nloc, i, arith::ConstantIndexOp::create(nb, nloc, kPairDistance));
          Value first = arith::CmpIOp::create(
              nb, nloc, arith::CmpIPredicate::eq, half,
              arith::ConstantIndexOp::create(nb, nloc, 0));
          // in f32, as the eager kernels: no fast-math
          Value pair = arith::AddFOp::create(nb, nloc, elements[0], elements[1]);
          return arith::SelectOp::create(
              nb, nloc, first, convertScalar(nb, nloc, pair, accType),
              arith::ConstantOp::create(nb, nloc, nb.getFloatAttr(accType, 0.0)));
        });
  } else if (mayRun(blocks)) {
    acc = accumulate(acc, index(0), blocks, index(kPairDistance),
                     /*paired=*/true);
  }
  const OpFoldResult tail = sizes.mul(blocks, index(kPairBlock));
  const OpFoldResult pairedLanes =
      sizes.max(sizes.sub(rest, index(kPairDistance)), index(0));
  if (!rows && mayRun(pairedLanes))
    acc = accumulate(acc, tail, index(1), pairedLanes, /*paired=*/true);
  // The elements alone: lanes [rest - 16, 16) of the last block, or all of its
  // `rest` when it has at most 16.
  const OpFoldResult aloneLanes =
      sizes.sub(sizes.min(rest, index(kPairDistance)), pairedLanes);
  if (mayRun(rest))
    acc = accumulate(acc, sizes.add(tail, pairedLanes), index(1), aloneLanes,
                     /*paired=*/false);
  return acc;
}

struct ReduceToGeneric : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    auto xType = cast<RankedTensorType>(x.getType());
    Type element = xType.getElementType();
    ReduceKind kind = op.getKind();
    ArrayRef<int64_t> dims = op.getDims();
    Type accType = accumulatorTypeOf(kind, element);

    const bool keep = op.getKeepDims();
    SizeBuilder sizes{rewriter, loc};
    SmallVector<OpFoldResult> keptSizes;
    SmallVector<bool> reduced;
    OpFoldResult count = rewriter.getIndexAttr(1);
    for (int64_t d = 0; d < xType.getRank(); ++d) {
      reduced.push_back(llvm::is_contained(dims, d));
      if (reduced.back())
        count = sizes.mul(count, dimSize(rewriter, loc, x, d));
      if (!reduced.back() || keep)
        keptSizes.push_back(reduced.back() ? rewriter.getIndexAttr(1)
                                           : dimSize(rewriter, loc, x, d));
    }
    Value init = tensor::EmptyOp::create(rewriter, loc, keptSizes, accType);
    Value neutral = arith::ConstantOp::create(
        rewriter, loc, neutralOf(rewriter, kind, accType));
    Value filled =
        linalg::FillOp::create(rewriter, loc, neutral, init).getResult(0);
    // Pairs only where some element has a partner (more than 16 elements); a
    // `?` count takes the pairs' path, which adds at most 16 elements alone.
    std::optional<int64_t> staticCount = getConstantIntValue(count);
    const bool pairs =
        element.isF32() &&
        (kind == ReduceKind::sum || kind == ReduceKind::mean) &&
        (!staticCount || *staticCount > kPairDistance);
    Value result =
        pairs ? accumulatePairs(rewriter, loc, x, dims, keep, filled)
              : accumulateAll(
                    rewriter, loc, kind, x, reduced, xType.getRank(), dims,
                    keep, filled,
                    [&](OpBuilder &b, Location nestedLoc, ValueRange elements) {
                      return convertScalar(b, nestedLoc, elements[0], accType);
                    });

    // The mean divides in the accumulator type; then one rounding. A `?`
    // count is converted once, outside the loop (exact below 2^53).
    if (kind == ReduceKind::mean || accType != element) {
      Value dynamicCount;
      if (kind == ReduceKind::mean && !staticCount)
        dynamicCount = arith::UIToFPOp::create(
            rewriter, loc, accType,
            arith::IndexCastUIOp::create(rewriter, loc, rewriter.getI64Type(),
                                         cast<Value>(count)));
      Value resultInit =
          tensor::EmptyOp::create(rewriter, loc, keptSizes, element);
      result = buildParallelGenericInto(
          rewriter, loc, resultInit, result,
          rewriter.getMultiDimIdentityMap(keptSizes.size()),
          [&](OpBuilder &b, Location nestedLoc, ValueRange elements) {
            Value v = elements[0];
            if (kind == ReduceKind::mean)
              v = arith::DivFOp::create(
                  b, nestedLoc, v,
                  dynamicCount ? dynamicCount
                               : arith::ConstantOp::create(
                                     b, nestedLoc,
                                     b.getFloatAttr(accType, static_cast<double>(
                                                                 *staticCount))));
            return convertScalar(b, nestedLoc, v, element);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateKilnReduceToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceToGeneric>(patterns.getContext());
}

} // namespace mlir::kiln
