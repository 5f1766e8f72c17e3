// specializeShapes and kiln-specialize-shapes (SpecializeShapes.h).
#include "passes/SpecializeShapes.h"

#include <optional>
#include <string>

#include "dialect/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "passes/Passes.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::kiln {

#define GEN_PASS_DEF_KILNSPECIALIZESHAPESPASS
#include "passes/Passes.h.inc"

namespace {

bool isDynamic(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasRank() && !shaped.hasStaticShape();
}

// The shape attribute and its index operands of the ops that take dynamic sizes.
struct DynamicSizes {
  StringRef attr;     // "shape" or "limit" (a list), or "size" (one integer)
  OperandRange values;
};

std::optional<DynamicSizes> dynamicSizesOf(Operation *op) {
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return DynamicSizes{"shape", reshape.getDynamicShape()};
  if (auto broadcast = dyn_cast<BroadcastInDimOp>(op))
    return DynamicSizes{"shape", broadcast.getDynamicShape()};
  if (auto rng = dyn_cast<RngOp>(op))
    return DynamicSizes{"shape", rng.getDynamicShape()};
  if (auto iota = dyn_cast<IotaOp>(op))
    return DynamicSizes{"shape", iota.getDynamicShape()};
  if (auto slice = dyn_cast<SliceOp>(op))
    return DynamicSizes{"limit", slice.getDynamicLimit()};
  if (auto scatter = dyn_cast<ScatterAddOp>(op))
    return DynamicSizes{"size", scatter.getODSOperands(2)};
  return std::nullopt;
}

// 0, 1, 2, ... along `dim` of `type`, as iota computes them.
DenseElementsAttr iotaElements(RankedTensorType type, int64_t dim) {
  ArrayRef<int64_t> shape = type.getShape();
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < type.getRank(); ++d)
    inner *= shape[d];
  const int64_t count = type.getNumElements(), extent = shape[dim];
  Type element = type.getElementType();
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    for (int64_t i = 0; i < count; ++i) {
      APFloat value(double((i / inner) % extent));
      bool lost;
      value.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(value);
    }
    return DenseElementsAttr::get(type, values);
  }
  SmallVector<APInt> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(APInt(element.getIntOrFloatBitWidth(), (i / inner) % extent,
                           /*isSigned=*/true));
  return DenseElementsAttr::get(type, values);
}

class Specializer {
public:
  Specializer(func::FuncOp func, SpecializedKernels *kernels)
      : func(func), builder(func.getContext()), kernels(kernels) {}

  LogicalResult run(ArrayRef<SmallVector<int64_t>> shapes) {
    Block &body = func.getBody().front();
    if (shapes.size() != body.getNumArguments())
      return func.emitOpError("takes ") << body.getNumArguments() << " arguments but "
                                         << shapes.size() << " shapes were given";
    for (auto [argument, shape] : llvm::zip_equal(body.getArguments(), shapes))
      if (failed(setArgument(argument, shape)))
        return failure();
    if (failed(copyKernelsCalledAgain()))
      return failure();
    SmallVector<Operation *> indexOps;
    for (Operation &op : llvm::make_early_inc_range(body)) {
      if (isa<func::ReturnOp>(op))
        break;
      if (op.getNumRegions() != 0)
        return op.emitOpError("has regions; only unfused programs are specialized");
      if (isIndexOp(&op)) {
        if (failed(evaluate(&op)))
          return failure();
        indexOps.push_back(&op);
        continue;
      }
      if (auto call = dyn_cast<func::CallOp>(op)) {
        if (failed(specializeCall(call)))
          return failure();
        continue;
      }
      std::optional<DynamicSizes> sizes = dynamicSizesOf(&op);
      if (sizes && !sizes->values.empty()) {
        if (failed(makeStatic(&op, *sizes)))
          return failure();
        continue;
      }
      if (failed(refineResultTypes(&op)))
        return failure();
    }
    for (Operation *op : llvm::reverse(indexOps)) {
      if (!op->use_empty())
        return op->emitOpError("is used by something other than a size operand");
      op->erase();
    }
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    func.setFunctionType(
        FunctionType::get(func.getContext(), body.getArgumentTypes(), ret.getOperandTypes()));
    return success();
  }

private:
  // A call of a kernel outlined from the program (kiln-outline-kernels): the kernel is
  // specialized to the call's operand shapes, its size arguments become constants and
  // are dropped from both, and their values are kept in `kernels`.
  LogicalResult specializeCall(func::CallOp call) {
    auto module = func->getParentOfType<ModuleOp>();
    auto callee = module ? module.lookupSymbol<func::FuncOp>(call.getCallee()) : nullptr;
    if (!callee || callee.isExternal() || !callee.getBody().hasOneBlock())
      return call.emitOpError("calls @") << call.getCallee()
                                         << ", which is no kernel of this module";
    Block &entry = callee.getBody().front();
    OpBuilder inKernel = OpBuilder::atBlockBegin(&entry);
    SmallVector<int64_t> sizes;
    SmallVector<SmallVector<int64_t>> shapes;
    llvm::BitVector erased(entry.getNumArguments());
    SmallVector<Value> kept;
    for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
      if (operand.getType().isIndex()) {
        std::optional<int64_t> value = valueOf(operand);
        if (!value)
          return call.emitOpError("passes a size that is not computed from argument sizes");
        sizes.push_back(*value);
        Value constant = arith::ConstantIndexOp::create(inKernel, call.getLoc(), *value);
        entry.getArgument(i).replaceAllUsesWith(constant);
        erased.set(i);
        continue;
      }
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || !type.hasStaticShape())
        return call.emitOpError("operand ") << i << " has no static shape to specialize to";
      shapes.emplace_back(type.getShape());
      kept.push_back(operand);
    }
    if (failed(callee.eraseArguments(erased)))
      return failure();
    call->setOperands(kept);
    if (failed(Specializer(callee, nullptr).run(shapes)))
      return failure();
    for (auto [result, type] : llvm::zip_equal(call.getResults(), callee.getResultTypes()))
      result.setType(type);
    if (kernels) {
      auto origin = origins.find(callee.getSymName());
      (*kernels)[callee.getSymName()] = {
          origin == origins.end() ? callee.getSymName().str() : origin->second, std::move(sizes)};
    }
    return success();
  }

  // Each call of a kernel specializes it in place, so a kernel called again (kiln-outline-
  // kernels shares one between identical groups) gets a copy per further call first.
  LogicalResult copyKernelsCalledAgain() {
    auto module = func->getParentOfType<ModuleOp>();
    if (!module)
      return success();
    SymbolTable symbols(module);
    llvm::SmallPtrSet<Operation *, 16> called;
    for (auto call : llvm::to_vector(func.getBody().front().getOps<func::CallOp>())) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      if (!callee || called.insert(callee).second)
        continue;
      func::FuncOp copy = callee.clone();
      symbols.insert(copy, Block::iterator(callee->getNextNode()));  // renamed if taken
      origins[copy.getSymName()] = callee.getSymName().str();
      call.setCallee(copy.getSymName());
    }
    return success();
  }

  LogicalResult setArgument(BlockArgument argument, ArrayRef<int64_t> shape) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type)
      return func.emitOpError("argument ") << argument.getArgNumber() << " is not a ranked tensor";
    bool fits = type.getRank() == static_cast<int64_t>(shape.size());
    for (int64_t d = 0; fits && d < type.getRank(); ++d)
      fits = shape[d] >= 0 && (type.isDynamicDim(d) || type.getDimSize(d) == shape[d]);
    if (!fits) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << '[';
      llvm::interleaveComma(shape, os);
      os << ']';
      return func.emitOpError("argument ") << argument.getArgNumber() << " of type " << type
                                          << " cannot have shape " << text;
    }
    argument.setType(RankedTensorType::get(shape, type.getElementType(), type.getEncoding()));
    return success();
  }

  static bool isIndexOp(Operation *op) {
    return isa<tensor::DimOp>(op) ||
           (op->getDialect() && op->getDialect()->getNamespace() == "arith" &&
            op->getNumResults() == 1 && op->getResult(0).getType().isIndex());
  }

  LogicalResult evaluate(Operation *op) {
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      std::optional<int64_t> index = valueOf(dim.getIndex());
      auto source = dyn_cast<RankedTensorType>(dim.getSource().getType());
      if (!index || !source || *index < 0 || *index >= source.getRank() ||
          source.isDynamicDim(*index))
        return op->emitOpError("does not name a static dim of a ranked tensor after "
                               "specialization");
      values[dim.getResult()] = source.getDimSize(*index);
      return success();
    }
    if (auto constant = dyn_cast<arith::ConstantIndexOp>(op)) {
      values[constant.getResult()] = constant.value();
      return success();
    }
    if (op->getNumOperands() != 2)
      return op->emitOpError("is not index arithmetic Kiln specializes");
    std::optional<int64_t> a = valueOf(op->getOperand(0)), b = valueOf(op->getOperand(1));
    if (!a || !b)
      return op->emitOpError("has an operand that is not a size");
    int64_t result;
    if (isa<arith::MulIOp>(op))
      result = *a * *b;
    else if (isa<arith::AddIOp>(op))
      result = *a + *b;
    else if (isa<arith::SubIOp>(op))
      result = *a - *b;
    else if (isa<arith::DivSIOp, arith::DivUIOp>(op) && *b != 0)
      result = *a / *b;
    else
      return op->emitOpError("is not index arithmetic Kiln specializes");
    values[op->getResult(0)] = result;
    return success();
  }

  std::optional<int64_t> valueOf(Value value) const {
    auto found = values.find(value);
    if (found == values.end())
      return std::nullopt;
    return found->second;
  }

  LogicalResult makeStatic(Operation *op, const DynamicSizes &sizes) {
    SmallVector<int64_t> known;
    for (Value size : sizes.values) {
      std::optional<int64_t> value = valueOf(size);
      if (!value)
        return op->emitOpError("has a size operand that is not computed from argument sizes");
      if (*value < 0)
        return op->emitOpError("has a negative size ") << *value << " at these shapes";
      known.push_back(*value);
    }
    Attribute filled;
    if (sizes.attr == "size") {
      filled = builder.getI64IntegerAttr(known.front());
    } else {
      SmallVector<int64_t> shape(cast<DenseI64ArrayAttr>(op->getAttr(sizes.attr)).asArrayRef());
      auto next = known.begin();
      for (int64_t &entry : shape)
        if (ShapedType::isDynamic(entry))
          entry = *next++;
      filled = builder.getDenseI64ArrayAttr(shape);
    }
    builder.setInsertionPoint(op);
    Operation *replacement = nullptr;
    if (auto iota = dyn_cast<IotaOp>(op)) {
      auto type = RankedTensorType::get(cast<DenseI64ArrayAttr>(filled).asArrayRef(),
                                        iota.getDtype());
      if (iota.getDim() < 0 || iota.getDim() >= type.getRank())
        return op->emitOpError("'dim' is out of range");
      replacement = ConstantOp::create(builder, op->getLoc(),
                                       cast<ElementsAttr>(iotaElements(type, iota.getDim())));
    } else {
      OperationState state(op->getLoc(), op->getName());
      for (Value operand : op->getOperands())
        if (!operand.getType().isIndex())
          state.addOperands(operand);
      for (NamedAttribute attr : op->getAttrs())
        state.addAttribute(attr.getName(),
                           attr.getName() == sizes.attr ? filled : attr.getValue());
      state.addTypes(op->getResultTypes());
      replacement = builder.create(state);
      if (failed(refineResultTypes(replacement))) {
        replacement->erase();
        return failure();
      }
    }
    op->replaceAllUsesWith(replacement->getResults());
    op->erase();
    return success();
  }

  func::FuncOp func;
  OpBuilder builder;
  SpecializedKernels *kernels;
  llvm::DenseMap<Value, int64_t> values;
  llvm::StringMap<std::string> origins;  // a kernel copied per call, to its original
};

// "64x784,64,x" (an empty entry: a rank-0 argument) as one shape per argument.
FailureOr<SmallVector<SmallVector<int64_t>>> parseShapes(StringRef text) {
  SmallVector<SmallVector<int64_t>> shapes;
  SmallVector<StringRef> entries;
  text.split(entries, ',');
  for (StringRef entry : entries) {
    SmallVector<int64_t> shape;
    entry = entry.trim();
    if (!entry.empty() && entry != "x") {
      SmallVector<StringRef> dims;
      entry.split(dims, 'x');
      for (StringRef dim : dims) {
        int64_t size;
        if (dim.trim().getAsInteger(10, size))
          return failure();
        shape.push_back(size);
      }
    }
    shapes.push_back(shape);
  }
  return shapes;
}

struct KilnSpecializeShapesPass
    : impl::KilnSpecializeShapesPassBase<KilnSpecializeShapesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    FailureOr<SmallVector<SmallVector<int64_t>>> parsed = parseShapes(shapes);
    if (failed(parsed)) {
      func.emitError("kiln-specialize-shapes: cannot read shapes '") << shapes << "'";
      return signalPassFailure();
    }
    if (failed(specializeShapes(func, *parsed)))
      signalPassFailure();
  }
};

} // namespace

// Infers `op`'s result types again from its operands and attributes and sets them.
LogicalResult refineResultTypes(Operation *op) {
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (!infer) {
    for (Type type : op->getResultTypes())
      if (isDynamic(type))
        return op->emitOpError("has a result of dynamic type ")
               << type << " that cannot be inferred from static operands";
    return success();
  }
  SmallVector<Type> types;
  if (failed(infer.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                    op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
                                    op->getRegions(), types)))
    return failure();
  for (auto [result, type] : llvm::zip_equal(op->getResults(), types))
    result.setType(type);
  return success();
}

bool hasDynamicShapes(func::FuncOp func) {
  if (llvm::any_of(func.getArgumentTypes(), isDynamic))
    return true;
  bool dynamic = false;
  func.walk([&](Operation *op) {
    if (llvm::any_of(op->getResultTypes(), isDynamic))
      dynamic = true;
  });
  return dynamic;
}

LogicalResult specializeShapes(func::FuncOp func, ArrayRef<SmallVector<int64_t>> shapes,
                               SpecializedKernels *kernels) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitOpError("has no single-block body to specialize");
  return Specializer(func, kernels).run(shapes);
}

} // namespace mlir::kiln
