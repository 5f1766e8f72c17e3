// Type inference, verifiers, builders and custom syntax of the kiln ops.
//
// Type inference checks an op's operands and attributes while it derives the
// result types: it runs in the parser and in builders, before the op exists,
// and again in the verifier (the VerifiedByInference trait, KilnOps.h). Every
// shape error is therefore reported from one place, with the
// "'kiln.<op>' op " prefix that emitOpError would add.

#include "dialect/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::kiln;

namespace {

//===----------------------------------------------------------------------===//
// Messages
//===----------------------------------------------------------------------===//

// Formats a shape or an attribute's integer list as "[4, 3]" ("?" for a
// dynamic dim).
std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << '[';
  llvm::interleaveComma(shape, os, [&](int64_t dim) {
    if (ShapedType::isDynamic(dim))
      os << '?';
    else
      os << dim;
  });
  os << ']';
  return text;
}

// An operand as messages name it.
struct Operand {
  std::string name;
  RankedTensorType type;

  ArrayRef<int64_t> shape() const { return type.getShape(); }
  int64_t rank() const { return type.getRank(); }
  Type elementType() const { return type.getElementType(); }
  // "operand 'x' with shape [4, 3]"
  std::string describe() const {
    return "operand '" + name + "' with shape " + formatShape(shape());
  }
};

// Reports one op's errors. Without a location (a caller only asking whether
// inference succeeds) nothing is printed.
class Reporter {
public:
  Reporter(std::optional<Location> loc, StringRef opName)
      : loc(loc), opName(opName) {}

  template <typename... Args>
  LogicalResult fail(Args &&...args) const {
    return emitOptionalError(loc, "'", opName, "' op ",
                             std::forward<Args>(args)...);
  }

  // "operand 'rhs' has shape [4, 2] but operand 'lhs' has shape [4, 3]",
  // followed by ": <why>" where the shapes alone do not say it.
  LogicalResult mismatch(const Operand &got, const Operand &want,
                         const Twine &why = {}) const {
    std::string reason = why.isTriviallyEmpty() ? "" : ": " + why.str();
    return fail("operand '", got.name, "' has shape ",
                formatShape(got.shape()), " but operand '", want.name,
                "' has shape ", formatShape(want.shape()), reason);
  }

  FailureOr<Operand> operand(Value value, StringRef name) const {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return fail("operand '", name, "' must be a ranked tensor, but got ",
                  value.getType());
    return Operand{name.str(), type};
  }

  // The named operands, or failure if one is not a ranked tensor.
  FailureOr<SmallVector<Operand>>
  operands(ArrayRef<std::pair<StringRef, Value>> named) const {
    SmallVector<Operand> result;
    for (auto [name, value] : named) {
      FailureOr<Operand> op = operand(value, name);
      if (failed(op))
        return failure();
      result.push_back(*op);
    }
    return result;
  }

private:
  std::optional<Location> loc;
  StringRef opName;
};

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

bool compatibleDims(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

// Whether `a` and `b` can have one shape at run time, ignoring dim `freeDim`.
bool compatibleShapes(const Operand &a, const Operand &b,
                      std::optional<int64_t> freeDim) {
  if (a.rank() != b.rank())
    return false;
  for (int64_t d = 0; d < a.rank(); ++d)
    if (d != freeDim && !compatibleDims(a.shape()[d], b.shape()[d]))
      return false;
  return true;
}

// Checks that the operands agree in shape where their dims are static (but
// for `freeDim`) and returns the shape with the static dims of any of them.
FailureOr<SmallVector<int64_t>>
joinShapes(const Reporter &r, ArrayRef<Operand> operands,
           std::optional<int64_t> freeDim = std::nullopt) {
  for (auto [j, b] : llvm::enumerate(operands))
    for (const Operand &a : operands.take_front(j))
      if (!compatibleShapes(a, b, freeDim))
        return freeDim ? r.mismatch(b, a, "only dimension " +
                                              Twine(*freeDim) + " may differ")
                       : r.mismatch(b, a);
  SmallVector<int64_t> shape(operands.front().shape());
  for (const Operand &x : operands.drop_front())
    for (auto [dim, size] : llvm::zip_equal(shape, x.shape()))
      if (ShapedType::isDynamic(dim))
        dim = size;
  return shape;
}

LogicalResult sameElementType(const Reporter &r, ArrayRef<Operand> operands) {
  const Operand &first = operands.front();
  for (const Operand &x : operands.drop_front())
    if (x.elementType() != first.elementType())
      return r.fail("operand '", x.name, "' has element type ",
                    x.elementType(), " but operand '", first.name,
                    "' has element type ", first.elementType());
  return success();
}

LogicalResult checkRank(const Reporter &r, const Operand &x, int64_t rank) {
  if (x.rank() != rank)
    return r.fail("operand '", x.name, "' has shape ", formatShape(x.shape()),
                  " but needs rank ", rank);
  return success();
}

// Checks that attribute `name` has one entry per dimension of `x`.
LogicalResult checkOneEntryPerDim(const Reporter &r, StringRef name,
                                  ArrayRef<int64_t> values, const Operand &x) {
  if (static_cast<int64_t>(values.size()) != x.rank())
    return r.fail("'", name, "' has ", values.size(), " entries but ",
                  x.describe(), " has rank ", x.rank());
  return success();
}

// Checks that attribute `name` has `count` entries, each at least `min`.
LogicalResult checkEntries(const Reporter &r, StringRef name,
                           ArrayRef<int64_t> values, size_t count,
                           int64_t min) {
  if (values.size() != count)
    return r.fail("'", name, "' has ", values.size(), " entries but needs ",
                  count);
  if (llvm::any_of(values, [&](int64_t v) { return v < min; }))
    return r.fail("'", name, "' ", formatShape(values),
                  min > 0 ? " must be positive" : " must not be negative");
  return success();
}

// Checks that every entry of attribute `name` is a dimension of `x`, at most
// once.
LogicalResult checkDimList(const Reporter &r, StringRef name,
                           ArrayRef<int64_t> dims, const Operand &x) {
  SmallVector<bool> seen(x.rank(), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= x.rank())
      return r.fail("'", name, "' entry ", d, " is out of range for ",
                    x.describe());
    if (seen[d])
      return r.fail("'", name, "' ", formatShape(dims), " repeats dimension ",
                    d);
    seen[d] = true;
  }
  return success();
}

// Checks a result shape given as an attribute whose `?` entries (kDynamic)
// are the op's `numDynamic` index operands, in order.
LogicalResult checkSizes(const Reporter &r, StringRef name,
                         ArrayRef<int64_t> sizes, size_t numDynamic = 0) {
  if (llvm::any_of(sizes, [](int64_t s) {
        return s < 0 && !ShapedType::isDynamic(s);
      }))
    return r.fail("'", name, "' ", formatShape(sizes), " has a negative size");
  size_t dynamic = llvm::count_if(sizes, ShapedType::isDynamic);
  if (dynamic != numDynamic)
    return r.fail("'", name, "' ", formatShape(sizes), " has ", dynamic,
                  " dynamic entries but the op has ", numDynamic,
                  " dynamic size operands");
  return success();
}

bool isKilnElementType(Type t) {
  return t.isF32() || t.isF64() || t.isF16() || t.isBF16() ||
         t.isSignlessInteger(1) || t.isSignlessInteger(32) ||
         t.isSignlessInteger(64);
}

LogicalResult checkElementType(const Reporter &r, StringRef name, Type t) {
  if (!isKilnElementType(t))
    return r.fail("'", name, "' must be f32, f64, f16, bf16, i1, i32 or i64, ",
                  "but got ", t);
  return success();
}

// Extent of a sliding window's output (dynamic where the input or window
// is): floor((in + pads - dilation * (window - 1) - 1) / stride) + 1.
int64_t windowOutputSize(int64_t in, int64_t window, int64_t stride,
                         int64_t dilation, int64_t padLow, int64_t padHigh) {
  if (ShapedType::isDynamic(in) || ShapedType::isDynamic(window))
    return ShapedType::kDynamic;
  int64_t span = dilation * (window - 1) + 1;
  return llvm::divideFloorSigned(in + padLow + padHigh - span, stride) + 1;
}

// Checks that windowed output sizes are positive.
LogicalResult checkWindowOutput(const Reporter &r, ArrayRef<int64_t> out,
                                ArrayRef<Operand> inputs) {
  if (llvm::none_of(out, [](int64_t s) {
        return !ShapedType::isDynamic(s) && s <= 0;
      }))
    return success();
  std::string operands;
  for (const Operand &x : inputs)
    operands += (operands.empty() ? "" : " and ") + x.describe();
  return r.fail("output size ", formatShape(out), " is not positive for ",
                operands);
}

} // namespace

//===----------------------------------------------------------------------===//
// Custom syntax
//===----------------------------------------------------------------------===//

// `custom<TypePair>`: the type two operands share, or both types where they
// differ (a `?` dim of one against a static dim of the other).
// `custom<DynamicSize>`: an integer, or an `index` value for a dynamic size
// (the attribute then holds kDynamic), as DynamicIndexList does for lists.
static ParseResult
parseDynamicSize(OpAsmParser &parser,
                 std::optional<OpAsmParser::UnresolvedOperand> &value,
                 IntegerAttr &size) {
  OpAsmParser::UnresolvedOperand operand;
  OptionalParseResult parsed = parser.parseOptionalOperand(operand);
  if (parsed.has_value()) {
    if (failed(*parsed))
      return failure();
    value = operand;
    size = parser.getBuilder().getI64IntegerAttr(ShapedType::kDynamic);
    return success();
  }
  int64_t integer;
  if (parser.parseInteger(integer))
    return failure();
  size = parser.getBuilder().getI64IntegerAttr(integer);
  return success();
}

static void printDynamicSize(OpAsmPrinter &printer, Operation *, Value value,
                             IntegerAttr size) {
  if (value)
    printer << value;
  else
    printer << size.getValue().getSExtValue();
}

static ParseResult parseTypePair(OpAsmParser &parser, Type &first,
                                 Type &second) {
  if (parser.parseType(first))
    return failure();
  second = first;
  if (succeeded(parser.parseOptionalComma()))
    return parser.parseType(second);
  return success();
}

static void printTypePair(OpAsmPrinter &printer, Operation *, Type first,
                          Type second) {
  printer << first;
  if (second != first)
    printer << ", " << second;
}

// Shared by the binary elementwise ops (see Kiln_BinaryOp in KilnOps.td)
// and compare, whose result has `resultElement` instead of the operands'.
static LogicalResult inferBinaryOp(std::optional<Location> loc,
                                   StringRef opName, Value lhs, Value rhs,
                                   SmallVectorImpl<Type> &types,
                                   Type resultElement = {}) {
  Reporter r(loc, opName);
  auto operands = r.operands({{"lhs", lhs}, {"rhs", rhs}});
  if (failed(operands) || failed(sameElementType(r, *operands)))
    return failure();
  auto shape = joinShapes(r, *operands);
  if (failed(shape))
    return failure();
  if (!resultElement)
    resultElement = operands->front().elementType();
  types.push_back(RankedTensorType::get(*shape, resultElement));
  return success();
}

#define GET_OP_CLASSES
#include "dialect/KilnOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Constant, compare, select, convert
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  ElementsAttr value = adaptor.getValueAttr();
  if (!isa<DenseElementsAttr, DenseResourceElementsAttr>(value))
    return Reporter(loc, getOperationName())
        .fail("'value' must be a dense or dense_resource elements attribute");
  types.push_back(value.getType());
  return success();
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferBinaryOp(loc, getOperationName(), adaptor.getLhs(),
                       adaptor.getRhs(), types, IntegerType::get(context, 1));
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto operands = r.operands({{"a", adaptor.getA()},
                              {"b", adaptor.getB()},
                              {"cond", adaptor.getCond()}});
  if (failed(operands) ||
      failed(sameElementType(r, ArrayRef(*operands).take_front(2))))
    return failure();
  auto shape = joinShapes(r, *operands);
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, operands->front().elementType()));
  return success();
}

LogicalResult ConvertOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto x = r.operand(adaptor.getX(), "x");
  if (failed(x) || failed(checkElementType(r, "dtype", adaptor.getDtype())))
    return failure();
  types.push_back(RankedTensorType::get(x->shape(), adaptor.getDtype()));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

// Operand dim i goes to result dim dims[i] (dims strictly increasing) and is
// 1 or of the result's size there.
static LogicalResult checkBroadcastDims(const Reporter &r, const Operand &x,
                                        ArrayRef<int64_t> dims,
                                        ArrayRef<int64_t> shape) {
  if (failed(checkOneEntryPerDim(r, "dims", dims, x)))
    return failure();
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= static_cast<int64_t>(shape.size()))
      return r.fail("'dims' entry ", d, " is out of range for result shape ",
                    formatShape(shape));
    if (i > 0 && d <= dims[i - 1])
      return r.fail("'dims' ", formatShape(dims),
                    " is not strictly increasing");
    int64_t size = x.shape()[i];
    if (size != 1 && !compatibleDims(size, shape[d]))
      return r.fail(x.describe(), " cannot broadcast dimension ", i,
                    " to dimension ", d, " of result shape ",
                    formatShape(shape));
  }
  return success();
}

LogicalResult BroadcastInDimOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto x = r.operand(adaptor.getX(), "x");
  ArrayRef<int64_t> shape = adaptor.getShape();
  if (failed(x) ||
      failed(checkSizes(r, "shape", shape, adaptor.getDynamicShape().size())) ||
      failed(checkBroadcastDims(r, *x, adaptor.getDims(), shape)))
    return failure();
  types.push_back(RankedTensorType::get(shape, x->elementType()));
  return success();
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto x = r.operand(adaptor.getX(), "x");
  ArrayRef<int64_t> shape = adaptor.getShape();
  if (failed(x) ||
      failed(checkSizes(r, "shape", shape, adaptor.getDynamicShape().size())))
    return failure();
  if (x->type.hasStaticShape() && !ShapedType::isDynamicShape(shape) &&
      x->type.getNumElements() != ShapedType::getNumElements(shape))
    return r.fail("'shape' ", formatShape(shape), " has ",
                  ShapedType::getNumElements(shape), " elements but ",
                  x->describe(), " has ", x->type.getNumElements());
  types.push_back(RankedTensorType::get(shape, x->elementType()));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto x = r.operand(adaptor.getX(), "x");
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (failed(x) || failed(checkOneEntryPerDim(r, "permutation", perm, *x)) ||
      failed(checkDimList(r, "permutation", perm, *x)))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(x->shape()[d]);
  types.push_back(RankedTensorType::get(shape, x->elementType()));
  return success();
}

// Checks dim `d` of a slice: 0 <= start <= limit <= size, stride > 0.
static LogicalResult checkSliceDim(const Reporter &r, const Operand &x,
                                   SliceOp::Adaptor adaptor, int64_t d) {
  ArrayRef<int64_t> start = adaptor.getStart(), limit = adaptor.getLimit(),
                    stride = adaptor.getStride();
  if (start[d] < 0)
    return r.fail("'start' ", formatShape(start), " is negative in dimension ",
                  d);
  if (stride[d] <= 0)
    return r.fail("'stride' ", formatShape(stride),
                  " is not positive in dimension ", d);
  if (ShapedType::isDynamic(limit[d]))
    return success();  // checked when the sizes are known (specialization)
  if (start[d] > limit[d])
    return r.fail("'start' ", formatShape(start), " exceeds 'limit' ",
                  formatShape(limit), " in dimension ", d);
  int64_t size = x.shape()[d];
  if (!ShapedType::isDynamic(size) && limit[d] > size)
    return r.fail("'limit' ", formatShape(limit), " exceeds ", x.describe(),
                  " in dimension ", d);
  if (stride[d] <= 0)
    return r.fail("'stride' ", formatShape(stride),
                  " is not positive in dimension ", d);
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto x = r.operand(adaptor.getX(), "x");
  if (failed(x) ||
      failed(checkOneEntryPerDim(r, "start", adaptor.getStart(), *x)) ||
      failed(checkOneEntryPerDim(r, "limit", adaptor.getLimit(), *x)) ||
      failed(checkOneEntryPerDim(r, "stride", adaptor.getStride(), *x)))
    return failure();
  const size_t dynamic = llvm::count_if(adaptor.getLimit(), ShapedType::isDynamic);
  if (dynamic != adaptor.getDynamicLimit().size())
    return r.fail("'limit' ", formatShape(adaptor.getLimit()), " has ", dynamic,
                  " dynamic entries but the op has ", adaptor.getDynamicLimit().size(),
                  " dynamic size operands");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < x->rank(); ++d) {
    if (failed(checkSliceDim(r, *x, adaptor, d)))
      return failure();
    shape.push_back(ShapedType::isDynamic(adaptor.getLimit()[d])
                        ? ShapedType::kDynamic
                        : llvm::divideCeil(adaptor.getLimit()[d] -
                                               adaptor.getStart()[d],
                                           adaptor.getStride()[d]));
  }
  types.push_back(RankedTensorType::get(shape, x->elementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  SmallVector<Operand> xs;
  for (auto [i, value] : llvm::enumerate(adaptor.getXs())) {
    auto x = r.operand(value, ("xs[" + Twine(i) + "]").str());
    if (failed(x))
      return failure();
    xs.push_back(*x);
  }
  if (xs.empty())
    return r.fail("needs at least one operand");
  int64_t dim = adaptor.getDim();
  if (dim < 0 || dim >= xs.front().rank())
    return r.fail("'dim' ", dim, " is out of range for ",
                  xs.front().describe());
  if (failed(sameElementType(r, xs)))
    return failure();
  auto shape = joinShapes(r, xs, dim);
  if (failed(shape))
    return failure();
  (*shape)[dim] = 0;
  for (const Operand &x : xs)
    (*shape)[dim] = ShapedType::isDynamic(x.shape()[dim]) ||
                            ShapedType::isDynamic((*shape)[dim])
                        ? ShapedType::kDynamic
                        : (*shape)[dim] + x.shape()[dim];
  types.push_back(RankedTensorType::get(*shape, xs.front().elementType()));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto operands = r.operands(
      {{"x", adaptor.getX()}, {"indices", adaptor.getIndices()}});
  if (failed(operands))
    return failure();
  const Operand &x = (*operands)[0], &indices = (*operands)[1];
  int64_t dim = adaptor.getDim();
  if (dim < 0 || dim >= x.rank())
    return r.fail("'dim' ", dim, " is out of range for ", x.describe());
  // numpy.take: x.shape[:dim] ++ indices.shape ++ x.shape[dim+1:]
  SmallVector<int64_t> shape(x.shape().take_front(dim));
  llvm::append_range(shape, indices.shape());
  llvm::append_range(shape, x.shape().drop_front(dim + 1));
  types.push_back(RankedTensorType::get(shape, x.elementType()));
  return success();
}

LogicalResult ScatterAddOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto operands = r.operands({{"updates", adaptor.getUpdates()},
                              {"indices", adaptor.getIndices()}});
  if (failed(operands))
    return failure();
  const Operand &updates = (*operands)[0], &indices = (*operands)[1];
  int64_t dim = adaptor.getDim(), size = adaptor.getSize();
  if (dim < 0 || dim + indices.rank() > updates.rank())
    return r.fail("'dim' ", dim, " with ", indices.describe(),
                  " is out of range for ", updates.describe());
  if (failed(checkSizes(r, "size", {size}, adaptor.getDynamicSize() ? 1 : 0)))
    return failure();
  // gather's result shape: u.shape[dim : dim + rank(indices)] == indices.shape
  ArrayRef<int64_t> held = updates.shape().slice(dim, indices.rank());
  for (auto [u, i] : llvm::zip_equal(held, indices.shape()))
    if (!ShapedType::isDynamic(u) && !ShapedType::isDynamic(i) && u != i)
      return r.fail(updates.describe(), " does not hold ", indices.describe(),
                    " at dimension ", dim);
  SmallVector<int64_t> shape(updates.shape().take_front(dim));
  shape.push_back(size);
  llvm::append_range(shape, updates.shape().drop_front(dim + indices.rank()));
  types.push_back(RankedTensorType::get(shape, updates.elementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto x = r.operand(adaptor.getX(), "x");
  ArrayRef<int64_t> dims = adaptor.getDims();
  if (failed(x) || failed(checkDimList(r, "dims", dims, *x)))
    return failure();
  // The eager kernels (which the interpreter runs) take the dims in order and refuse
  // empty max and min reductions, as the op table's shape rule does.
  if (!llvm::is_sorted(dims))
    return r.fail("'dims' ", formatShape(dims), " is not in increasing order");
  ReduceKind kind = adaptor.getKind();
  if (kind == ReduceKind::max || kind == ReduceKind::min)
    for (int64_t d : dims)
      if (x->shape()[d] == 0)
        return r.fail("kind '", stringifyReduceKind(kind), "' cannot reduce dimension ", d,
                      " of size 0 of ", x->describe(), " (max and min have no identity)");
  if (kind == ReduceKind::mean &&
      !isa<FloatType>(x->elementType()))
    return r.fail("kind 'mean' needs a float element type, but operand 'x' ",
                  "has element type ", x->elementType());
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(x->shape())) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      shape.push_back(size);
    else if (adaptor.getKeepDims())
      shape.push_back(1);
  }
  types.push_back(RankedTensorType::get(shape, x->elementType()));
  return success();
}

// The rows and columns of op(a) op(b) over the last two dims of each (transposed under
// `ta`/`tb`), or failure, reported, when the contraction dims differ.
static FailureOr<std::pair<int64_t, int64_t>>
productDims(const Reporter &r, const Operand &a, const Operand &b, bool ta, bool tb) {
  int64_t batch = a.rank() - 2;
  int64_t m = a.shape()[batch + ta], ka = a.shape()[batch + !ta];
  int64_t kb = b.shape()[batch + tb], n = b.shape()[batch + !tb];
  if (!compatibleDims(ka, kb)) {
    (void)r.mismatch(b, a, "contraction dimensions differ");
    return failure();
  }
  return std::pair(m, n);
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto operands = r.operands({{"a", adaptor.getA()}, {"b", adaptor.getB()}});
  if (failed(operands) || failed(sameElementType(r, *operands)))
    return failure();
  const Operand &a = (*operands)[0], &b = (*operands)[1];
  if (a.rank() < 2)
    return r.fail("operand 'a' has shape ", formatShape(a.shape()),
                  " but needs rank 2 or more");
  if (b.rank() != a.rank())
    return r.mismatch(b, a, "ranks differ");
  int64_t batch = a.rank() - 2;
  for (int64_t d = 0; d < batch; ++d)
    if (!compatibleDims(a.shape()[d], b.shape()[d]))
      return r.mismatch(b, a, "batch dimensions differ");
  // [..., m, k] x [..., k, n], each matrix possibly transposed.
  auto mn = productDims(r, a, b, adaptor.getTransposeA(), adaptor.getTransposeB());
  if (failed(mn))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < batch; ++d)
    shape.push_back(ShapedType::isDynamic(a.shape()[d]) ? b.shape()[d]
                                                        : a.shape()[d]);
  shape.append({mn->first, mn->second});
  types.push_back(RankedTensorType::get(shape, a.elementType()));
  return success();
}

LogicalResult AddmmOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto operands = r.operands({{"a", adaptor.getA()},
                              {"b", adaptor.getB()},
                              {"bias", adaptor.getBias()}});
  if (failed(operands) || failed(sameElementType(r, *operands)))
    return failure();
  const Operand &a = (*operands)[0], &b = (*operands)[1], &bias = (*operands)[2];
  if (failed(checkRank(r, a, 2)) || failed(checkRank(r, b, 2)) ||
      failed(checkRank(r, bias, 1)))
    return failure();
  auto mn = productDims(r, a, b, adaptor.getTransposeA(), adaptor.getTransposeB());
  if (failed(mn))
    return failure();
  auto [m, n] = *mn;
  if (!compatibleDims(bias.shape()[0], n))
    return r.fail("operand 'bias' has shape ", formatShape(bias.shape()),
                  " but the product has ", n, " columns");
  types.push_back(RankedTensorType::get({m, n}, a.elementType()));
  return success();
}

// Checks conv2d's attributes and channels (x: NCHW, w: OIHW).
static LogicalResult checkConv2d(const Reporter &r, Conv2dOp::Adaptor adaptor,
                                 const Operand &x, const Operand &w) {
  int64_t groups = adaptor.getGroups();
  if (failed(checkRank(r, x, 4)) || failed(checkRank(r, w, 4)) ||
      failed(checkEntries(r, "stride", adaptor.getStride(), 2, 1)) ||
      failed(checkEntries(r, "padding", adaptor.getPadding(), 4, 0)) ||
      failed(checkEntries(r, "dilation", adaptor.getDilation(), 2, 1)))
    return failure();
  if (groups <= 0)
    return r.fail("'groups' ", groups, " must be positive");
  int64_t channels = x.shape()[1], perGroup = w.shape()[1];
  if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(perGroup) &&
      channels != perGroup * groups)
    return r.mismatch(w, x, Twine(channels) + " input channels are not " +
                                Twine(perGroup) + " per group x " +
                                Twine(groups) + " groups");
  int64_t outChannels = w.shape()[0];
  if (!ShapedType::isDynamic(outChannels) && outChannels % groups != 0)
    return r.fail(w.describe(), " has ", outChannels,
                  " output channels, not divisible by 'groups' ", groups);
  return success();
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto operands = r.operands({{"x", adaptor.getX()}, {"w", adaptor.getW()}});
  if (failed(operands) || failed(sameElementType(r, *operands)) ||
      failed(checkConv2d(r, adaptor, (*operands)[0], (*operands)[1])))
    return failure();
  ArrayRef<int64_t> x = (*operands)[0].shape(), w = (*operands)[1].shape();
  if (adaptor.getBias()) {
    auto bias = r.operands({{"w", adaptor.getW()}, {"bias", adaptor.getBias()}});
    if (failed(bias) || failed(sameElementType(r, *bias)) ||
        failed(checkRank(r, (*bias)[1], 1)))
      return failure();
    if (!compatibleDims((*bias)[1].shape()[0], w[0]))
      return r.fail("operand 'bias' has shape ", formatShape((*bias)[1].shape()),
                    " but the convolution has ", w[0], " output channels");
  }
  ArrayRef<int64_t> stride = adaptor.getStride(), pad = adaptor.getPadding(),
                    dilation = adaptor.getDilation();
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < 2; ++i)
    out.push_back(windowOutputSize(x[2 + i], w[2 + i], stride[i], dilation[i],
                                   pad[2 * i], pad[2 * i + 1]));
  if (failed(checkWindowOutput(r, out, *operands)))
    return failure();
  types.push_back(RankedTensorType::get({x[0], w[0], out[0], out[1]},
                                        (*operands)[0].elementType()));
  return success();
}

LogicalResult Pool2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto x = r.operand(adaptor.getX(), "x");
  ArrayRef<int64_t> window = adaptor.getWindow(), stride = adaptor.getStride(),
                    pad = adaptor.getPadding();
  if (failed(x) || failed(checkRank(r, *x, 4)) ||
      failed(checkEntries(r, "window", window, 2, 1)) ||
      failed(checkEntries(r, "stride", stride, 2, 1)) ||
      failed(checkEntries(r, "padding", pad, 4, 0)))
    return failure();
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < 2; ++i)
    out.push_back(windowOutputSize(x->shape()[2 + i], window[i], stride[i],
                                   /*dilation=*/1, pad[2 * i], pad[2 * i + 1]));
  if (failed(checkWindowOutput(r, out, *x)))
    return failure();
  types.push_back(RankedTensorType::get(
      {x->shape()[0], x->shape()[1], out[0], out[1]}, x->elementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// kiln.all_reduce and kiln.all_reduce_start: the operand's type; a mean needs floats.
static LogicalResult inferAllReduce(const Reporter &r, Value operand,
                                    AllReduceKind kind,
                                    SmallVectorImpl<Type> &types) {
  auto x = r.operand(operand, "x");
  if (failed(x))
    return failure();
  if (kind == AllReduceKind::mean && !isa<FloatType>(x->elementType()))
    return r.fail("kind 'mean' needs a float element type, but operand 'x' ",
                  "has element type ", x->elementType());
  types.push_back(x->type);
  return success();
}

LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferAllReduce(Reporter(loc, getOperationName()), adaptor.getX(),
                        adaptor.getKind(), types);
}

LogicalResult AllReduceStartOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> loc,
                                                 Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  return inferAllReduce(Reporter(loc, getOperationName()), adaptor.getX(),
                        adaptor.getKind(), types);
}

LogicalResult WaitOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  auto x = Reporter(loc, getOperationName()).operand(adaptor.getX(), "x");
  if (failed(x))
    return failure();
  types.push_back(x->type);
  return success();
}

//===----------------------------------------------------------------------===//
// Random numbers
//===----------------------------------------------------------------------===//

// Checks `params` against the distribution: uniform [low, high] with
// low <= high, normal [mean, std] with std >= 0, bernoulli [p] in [0, 1].
static LogicalResult checkRngParams(const Reporter &r,
                                    RngDistribution distribution,
                                    ArrayRef<double> params) {
  StringRef name = stringifyRngDistribution(distribution);
  size_t count = distribution == RngDistribution::bernoulli ? 1 : 2;
  if (params.size() != count)
    return r.fail("'params' has ", params.size(), " entries but distribution '",
                  name, "' needs ", count);
  bool valid = true;
  switch (distribution) {
  case RngDistribution::uniform:
    valid = params[0] <= params[1];
    break;
  case RngDistribution::normal:
    valid = params[1] >= 0;
    break;
  case RngDistribution::bernoulli:
    valid = params[0] >= 0 && params[0] <= 1;
    break;
  }
  if (!valid)
    return r.fail("'params' are out of range for distribution '", name,
                  "' (uniform: low <= high, normal: std >= 0, ",
                  "bernoulli: 0 <= p <= 1)");
  return success();
}

LogicalResult RngOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  auto key = r.operand(adaptor.getKey(), "key");
  Type dtype = adaptor.getDtype();
  RngDistribution distribution = adaptor.getDistribution();
  if (failed(key) ||
      failed(checkSizes(r, "shape", adaptor.getShape(),
                        adaptor.getDynamicShape().size())) ||
      failed(checkElementType(r, "dtype", dtype)) ||
      failed(checkRngParams(r, distribution, adaptor.getParams())))
    return failure();
  if (key->rank() != 1 || !compatibleDims(key->shape()[0], 2))
    return r.fail("operand 'key' has shape ", formatShape(key->shape()),
                  " but needs shape [2]");
  if (distribution != RngDistribution::bernoulli && !isa<FloatType>(dtype))
    return r.fail("distribution '", stringifyRngDistribution(distribution),
                  "' needs a float 'dtype', but got ", dtype);
  types.push_back(RankedTensorType::get(adaptor.getShape(), dtype));
  types.push_back(key->type);
  return success();
}

LogicalResult IotaOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  Reporter r(loc, getOperationName());
  ArrayRef<int64_t> shape = adaptor.getShape();
  Type dtype = adaptor.getDtype();
  if (failed(checkSizes(r, "shape", shape, adaptor.getDynamicShape().size())) ||
      failed(checkElementType(r, "dtype", dtype)))
    return failure();
  if (dtype.isSignlessInteger(1))
    return r.fail("'dtype' must be numeric, but got ", dtype);
  int64_t dim = adaptor.getDim();
  if (dim < 0 || dim >= static_cast<int64_t>(shape.size()))
    return r.fail("'dim' ", dim, " is out of range for shape ",
                  formatShape(shape));
  types.push_back(RankedTensorType::get(shape, dtype));
  return success();
}

//===----------------------------------------------------------------------===//
// Fusion and callback
//===----------------------------------------------------------------------===//

// The kiln.yield that ends a fusion body, or null.
static YieldOp getYield(Region &body) {
  if (body.empty() || body.front().empty())
    return {};
  return dyn_cast<YieldOp>(body.front().back());
}

void FusionOp::build(
    OpBuilder &builder, OperationState &state, ValueRange inputs,
    function_ref<void(OpBuilder &, Location, ValueRange)> bodyBuilder) {
  state.addOperands(inputs);
  Region *body = state.addRegion();
  OpBuilder::InsertionGuard guard(builder);
  SmallVector<Location> locs(inputs.size(), state.location);
  Block *block = builder.createBlock(body, {}, inputs.getTypes(), locs);
  bodyBuilder(builder, state.location, block->getArguments());
  YieldOp yield = getYield(*body);
  if (!yield)
    ::mlir::detail::reportFatalInferReturnTypesError(state);
  state.addTypes(yield.getValues().getTypes());
}

LogicalResult FusionOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  YieldOp yield = getYield(adaptor.getBody());
  if (!yield)
    return Reporter(loc, getOperationName())
        .fail("body must end with 'kiln.yield'");
  llvm::append_range(types, yield.getValues().getTypes());
  return success();
}

LogicalResult FusionOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments but there are "
           << getInputs().size() << " inputs";
  for (auto [i, arg, input] : llvm::enumerate(body.getArguments(), getInputs()))
    if (arg.getType() != input.getType())
      return emitOpError("body argument ")
             << i << " has type " << arg.getType() << " but input " << i
             << " has type " << input.getType();
  YieldOp yield = getYield(getBody());
  if (!yield)
    return emitOpError("body must end with 'kiln.yield'");
  if (yield.getValues().size() != getNumResults())
    return emitOpError("'kiln.yield' has ")
           << yield.getValues().size() << " operands but the op has "
           << getNumResults() << " results";
  for (auto [i, value, result] :
       llvm::enumerate(yield.getValues(), getResults()))
    if (value.getType() != result.getType())
      return emitOpError("result ")
             << i << " has type " << result.getType()
             << " but 'kiln.yield' operand " << i << " has type "
             << value.getType();
  return success();
}

LogicalResult CallbackOp::verify() {
  // I64Attr reads back as unsigned.
  auto callee = static_cast<int64_t>(getCallee());
  if (callee < 0)
    return emitOpError("'callee' ") << callee << " must not be negative";
  return success();
}
