// kiln-lower-host: a planned host schedule becomes one LLVM function over raw buffers.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNLOWERHOSTPASS
#include "passes/Passes.h.inc"

// The kind of kernel `op` calls ("fusion", "library"), or "" if it calls none.
static StringRef kernelKindOf(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return "";
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, call.getCalleeAttr());
  if (!callee)
    return "";
  auto kind = callee->getAttrOfType<StringAttr>(KilnDialect::getKernelAttrName());
  return kind ? kind.getValue() : "";
}

bool isBufferView(Operation *op) {
  if (isa<ReshapeOp>(op))
    return true;
  return isa<TransposeOp>(op) && !op->use_empty() &&
         llvm::all_of(op->getUsers(), [](Operation *user) {
           return kernelKindOf(user) == "library";
         });
}

HostStep hostStepOf(Operation *op) {
  if (isa<func::ReturnOp>(op))
    return HostStep::Return;
  if (isa<ConstantOp>(op))
    return HostStep::Constant;
  if (isBufferView(op))
    return HostStep::Alias;
  if (kernelKindOf(op) == "fusion")
    return HostStep::Kernel;
  return HostStep::Runtime;
}

Value bufferOwner(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isBufferView(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

SmallVector<HostResult> hostResults(func::FuncOp host) {
  Operation *terminator = host.getBody().front().getTerminator();
  SmallVector<HostResult> placements;
  DenseSet<Value> placed;
  for (auto [k, returned] : llvm::enumerate(terminator->getOperands())) {
    HostResult placement{ResultPlacement::Copied, -1};
    // A result returned through reshapes is written where its owner is.
    Value value = bufferOwner(returned);
    auto result = dyn_cast<OpResult>(value);
    auto offsets = result ? result.getOwner()->getAttrOfType<DenseI64ArrayAttr>(
                                KilnDialect::getOffsetsAttrName())
                          : DenseI64ArrayAttr();
    int64_t offset = offsets && offsets.size() == int64_t(result.getOwner()->getNumResults())
                         ? offsets[result.getResultNumber()]
                         : 0;
    auto update = host.getResultAttrOfType<StringAttr>(
        k, KilnDialect::getStateUpdateAttrName());
    if (offset == -2 && update && !placed.contains(value)) {
      for (BlockArgument arg : host.getArguments())
        if (host.getArgAttrOfType<StringAttr>(
                arg.getArgNumber(), KilnDialect::getStateAttrName()) == update)
          placement = {ResultPlacement::InPlace, int64_t(arg.getArgNumber())};
    } else if (offset == -1 && !placed.contains(value)) {
      placement = {ResultPlacement::Written, -1};
    }
    if (placement.placement != ResultPlacement::Copied)
      placed.insert(value);
    placements.push_back(placement);
  }
  return placements;
}

int64_t byteSize(ShapedType type) {
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * (bits == 1 ? 1 : bits / 8);
}

namespace {

constexpr StringLiteral kKernelsModule = "kiln_kernels";
constexpr StringLiteral kHostOpFunction = "kiln_rt_host_op";
constexpr StringLiteral kKernelBegin = "kiln_rt_kernel_begin";
constexpr StringLiteral kKernelEnd = "kiln_rt_kernel_end";

// Builds the body of the lowered host function.
class HostLowering {
public:
  HostLowering(func::FuncOp host, LLVM::LLVMFuncOp lowered, ModuleOp module,
               bool timeKernels)
      : host(host), module(module), timeKernels(timeKernels), builder(host.getContext()),
        ptr(LLVM::LLVMPointerType::get(host.getContext())),
        i64(builder.getI64Type()) {
    Block *entry = lowered.addEntryBlock(builder);
    builder.setInsertionPointToStart(entry);
    args = entry->getArgument(0);
    results = entry->getArgument(1);
    arena = entry->getArgument(2);
    constants = entry->getArgument(3);
    runtime = entry->getArgument(4);
  }

  LogicalResult run() {
    Block &body = host.getBody().front();
    for (BlockArgument arg : body.getArguments())
      where[arg] = load(args, arg.getArgNumber());
    placements = hostResults(host);
    for (auto [k, value] : llvm::enumerate(body.getTerminator()->getOperands()))
      if (placements[k].placement != ResultPlacement::Copied)
        slot[bufferOwner(value)] = k;
    for (Operation &op : body)
      if (failed(lower(&op)))
        return failure();
    LLVM::ReturnOp::create(builder, host.getLoc(), ValueRange{});
    return success();
  }

private:
  Value constant(int64_t v) {
    return LLVM::ConstantOp::create(builder, host.getLoc(), i64, v);
  }

  // array[index], for an array of pointers.
  Value load(Value array, int64_t index) {
    Value slot = LLVM::GEPOp::create(builder, host.getLoc(), ptr, ptr, array,
                                     ArrayRef<LLVM::GEPArg>{int32_t(index)});
    return LLVM::LoadOp::create(builder, host.getLoc(), ptr, slot);
  }

  // A stack array holding `values`.
  Value pointerArray(ValueRange values) {
    Location loc = host.getLoc();
    Value array = LLVM::AllocaOp::create(builder, loc, ptr, ptr,
                                         constant(std::max<int64_t>(1, values.size())));
    for (auto [i, value] : llvm::enumerate(values)) {
      Value slot = LLVM::GEPOp::create(builder, loc, ptr, ptr, array,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      LLVM::StoreOp::create(builder, loc, value, slot);
    }
    return array;
  }

  // Where the planned result `value` of `op` goes.
  FailureOr<Value> placeResult(Operation *op, OpResult value) {
    auto offsets =
        op->getAttrOfType<DenseI64ArrayAttr>(KilnDialect::getOffsetsAttrName());
    if (!offsets || offsets.size() != int64_t(op->getNumResults()))
      return op->emitOpError("has no memory plan (run kiln-plan-memory first)");
    int64_t offset = offsets[value.getResultNumber()];
    if (offset >= 0)
      return LLVM::GEPOp::create(builder, op->getLoc(), ptr, builder.getI8Type(),
                                 arena, ArrayRef<LLVM::GEPArg>{constant(offset)})
          .getResult();
    auto found = slot.find(value);
    if (found == slot.end())
      return op->emitOpError("result ")
             << value.getResultNumber() << " is planned off the arena ("
             << offset << ") but is no result the function can write";
    const HostResult &placement = placements[found->second];
    if (placement.placement == ResultPlacement::InPlace)
      return where.lookup(host.getArgument(placement.stateArgument));
    return load(results, found->second);
  }

  LogicalResult lower(Operation *op) {
    switch (hostStepOf(op)) {
    case HostStep::Constant:
      where[op->getResult(0)] = load(constants, constantCount++);
      return success();
    case HostStep::Alias:
      where[op->getResult(0)] = where.lookup(op->getOperand(0));
      return success();
    case HostStep::Kernel:
    case HostStep::Runtime:
      return lowerCall(op);
    case HostStep::Return:
      return lowerReturn(op);
    }
    return failure();
  }

  LogicalResult lowerCall(Operation *op) {
    SmallVector<Value> operands, outs;
    for (Value operand : op->getOperands())
      operands.push_back(where.lookup(operand));
    for (OpResult result : op->getResults()) {
      FailureOr<Value> place = placeResult(op, result);
      if (failed(place))
        return failure();
      where[result] = *place;
      outs.push_back(*place);
    }
    Location loc = op->getLoc();
    if (hostStepOf(op) == HostStep::Kernel) {
      auto call = cast<func::CallOp>(op);
      SmallVector<Value> callArgs(operands);
      llvm::append_range(callArgs, outs);
      Value id = timeKernels ? constant(kernelCount++) : Value();
      if (timeKernels)
        LLVM::CallOp::create(builder, loc, TypeRange{}, kKernelBegin, ValueRange{runtime, id});
      LLVM::CallOp::create(builder, loc, TypeRange{}, call.getCallee(), callArgs);
      if (timeKernels)
        LLVM::CallOp::create(builder, loc, TypeRange{}, kKernelEnd, ValueRange{runtime, id});
      return success();
    }
    LLVM::CallOp::create(builder, loc, TypeRange{}, kHostOpFunction,
                         ValueRange{runtime, constant(runtimeCount++),
                                    pointerArray(operands), pointerArray(outs)});
    return success();
  }

  // Copies each result that does not already sit in the caller's buffer.
  LogicalResult lowerReturn(Operation *op) {
    for (auto [k, value] : llvm::enumerate(op->getOperands())) {
      if (placements[k].placement != ResultPlacement::Copied)
        continue;
      Value bytes = constant(byteSize(cast<ShapedType>(value.getType())));
      LLVM::MemcpyOp::create(builder, op->getLoc(), load(results, k),
                             where.lookup(value), bytes, false);
    }
    return success();
  }

  func::FuncOp host;
  ModuleOp module;
  bool timeKernels;
  OpBuilder builder;
  Type ptr, i64;
  Value args, results, arena, constants, runtime;
  DenseMap<Value, Value> where;
  SmallVector<HostResult> placements;
  DenseMap<Value, size_t> slot;  // the result each value is written to directly
  int64_t constantCount = 0, runtimeCount = 0, kernelCount = 0;
};

struct KilnLowerHostPass : impl::KilnLowerHostPassBase<KilnLowerHostPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> hosts, fusionKernels, libraryKernels;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto kind =
          func->getAttrOfType<StringAttr>(KilnDialect::getKernelAttrName());
      if (!kind && func->hasAttr(KilnDialect::getArenaBytesAttrName())) {
        hosts.push_back(func);
      } else if (!kind && !func.isExternal()) {
        func.emitOpError("is neither a kernel nor a planned host schedule; "
                         "kiln-plan-memory plans single-block, outlined functions");
        return signalPassFailure();
      } else if (kind)
        (kind.getValue() == "fusion" ? fusionKernels : libraryKernels).push_back(func);
    }
    if (hosts.empty())
      return;
    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToEnd(module.getBody());
    Type ptr = LLVM::LLVMPointerType::get(&getContext());
    Type voidType = LLVM::LLVMVoidType::get(&getContext());
    LLVM::LLVMFuncOp::create(builder, module.getLoc(), kHostOpFunction,
                             LLVM::LLVMFunctionType::get(voidType, {ptr, builder.getI64Type(), ptr, ptr}));
    if (timeKernels)
      for (StringRef hook : {kKernelBegin, kKernelEnd})
        LLVM::LLVMFuncOp::create(builder, module.getLoc(), hook,
                                 LLVM::LLVMFunctionType::get(voidType, {ptr, builder.getI64Type()}));

    // Hosts first: which calls are kernel calls is read from the callees.
    for (func::FuncOp host : hosts) {
      auto lowered = LLVM::LLVMFuncOp::create(
          builder, host.getLoc(), ("kiln_" + host.getSymName()).str(),
          LLVM::LLVMFunctionType::get(voidType, {ptr, ptr, ptr, ptr, ptr}));
      lowered->setAttr(KilnDialect::getArenaBytesAttrName(),
                       host->getAttr(KilnDialect::getArenaBytesAttrName()));
      if (failed(HostLowering(host, lowered, module, timeKernels).run()))
        return signalPassFailure();
    }
    // Kernels compile in a module of their own; the host declares them.
    auto kernels = ModuleOp::create(builder, module.getLoc(), StringRef(kKernelsModule));
    for (func::FuncOp kernel : fusionKernels) {
      FunctionType type = kernel.getFunctionType();
      SmallVector<Type> params(type.getNumInputs() + type.getNumResults(), ptr);
      LLVM::LLVMFuncOp::create(builder, kernel.getLoc(), kernel.getSymName(),
                               LLVM::LLVMFunctionType::get(voidType, params));
      kernel.setPublic();
      kernel->moveBefore(kernels.getBody(), kernels.getBody()->end());
    }
    for (func::FuncOp func : llvm::concat<func::FuncOp>(hosts, libraryKernels))
      func.erase();
  }
};

} // namespace
} // namespace mlir::kiln
