// What the kiln→linalg patterns share: scalar conversions with the eager
// kernels' rounding, empty result tensors, elementwise generics (defined in
// Elementwise.cpp).
#ifndef KILN_PASSES_CONVERSION_KILNTOLINALG_PATTERNS_H
#define KILN_PASSES_CONVERSION_KILNTOLINALG_PATTERNS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::kiln {

// Builds the scalar result of a linalg.generic body from its input elements;
// a null Value means the element types are not handled.
using ScalarBuilder =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

// The type the eager kernels compute `type` in (OpMathType): f32 for f16 and
// bf16, `type` itself otherwise.
Type mathTypeOf(Type type);

// `value` converted to `to` as kiln.convert does: floats round to nearest even
// (f16 and bf16 through f32, as the eager kernels), floats to integers
// truncate, anything to i1 tests `!= 0`, i1 becomes 0 or 1, integers
// sign-extend or truncate.
Value convertScalar(OpBuilder &b, Location loc, Value value, Type to);

// An uninitialized tensor of `type`; `?` dims take their size from the same
// dim of `like`, a tensor of the same rank.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                  Value like);

// The size of dim `d` of the tensor `x`: an attribute where static, else a
// tensor.dim.
OpFoldResult dimSize(OpBuilder &b, Location loc, Value x, int64_t d);

// `sizes` (static entries with kDynamic where `dynamicSizes` supplies the
// value, in order: a kiln op's mixed shape operands) as index values or
// attributes.
SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, ArrayRef<int64_t> sizes,
                                     ValueRange dynamicSizes);

// Index arithmetic on sizes that folds where both sides are static, so a
// static kernel's IR has numbers where a dynamic one computes at run time.
// Sizes are never negative: division and remainder are unsigned.
struct SizeBuilder {
  OpBuilder &b;
  Location loc;
  Value value(OpFoldResult size) const;
  OpFoldResult add(OpFoldResult x, OpFoldResult y) const;
  OpFoldResult sub(OpFoldResult x, OpFoldResult y) const;
  OpFoldResult mul(OpFoldResult x, OpFoldResult y) const;
  OpFoldResult div(OpFoldResult x, int64_t y) const;
  OpFoldResult rem(OpFoldResult x, int64_t y) const;
  OpFoldResult max(OpFoldResult x, OpFoldResult y) const;
  OpFoldResult min(OpFoldResult x, OpFoldResult y) const;
};

// A linalg.generic over every element of `resultType` with parallel
// iterators: input i is read through `inputMaps[i]`, the result through the
// identity map. Returns null (and builds nothing) when `body` does.
Value buildParallelGeneric(OpBuilder &b, Location loc,
                           RankedTensorType resultType, ValueRange inputs,
                           ArrayRef<AffineMap> inputMaps, Value like,
                           ScalarBuilder body);
// The same, written into `init` (a tensor.empty of the result type).
Value buildParallelGenericInto(OpBuilder &b, Location loc, Value init,
                               ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                               ScalarBuilder body);


} // namespace mlir::kiln

#endif // KILN_PASSES_CONVERSION_KILNTOLINALG_PATTERNS_H
