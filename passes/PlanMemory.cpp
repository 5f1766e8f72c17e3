// kiln-plan-memory: liveness, buffer reuse and in-place state updates in one static arena.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <optional>
#include <vector>

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNPLANMEMORYPASS
#include "passes/Passes.h.inc"

namespace {

// `kiln.offsets` entries that are not arena offsets.
constexpr int64_t kNotInArena = -1; // handed to the caller, or not planned
constexpr int64_t kInPlace = -2;    // written into its state argument

// Bytes of a tensor the arena can hold: static shape, integer or float
// elements. Other values are left to the runtime.
std::optional<int64_t> plannableBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return std::nullopt;
  return byteSize(tensor);
}

// The value whose memory `v` is: buffer views (isBufferView) are views of
// their operand.
Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isBufferView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

// Ops whose results are views or need no memory of the schedule's own.
bool producesNothing(Operation &op) {
  return op.hasTrait<OpTrait::ConstantLike>() || isBufferView(&op) ||
         op.hasTrait<OpTrait::IsTerminator>();
}

// The first op of `func` that kiln-outline-kernels would have outlined.
Operation *firstUnoutlined(func::FuncOp func) {
  for (Operation &op : func.getBody().getOps())
    if (isa<FusionOp, MatmulOp, AddmmOp, Conv2dOp, Pool2dOp>(op))
      return &op;
  return nullptr;
}

// Whether `producer`, reading the state through its operand `operand`, reads
// each element only where it writes `update` (so writing the update over the
// state loses nothing): an elementwise op, or a fusion kernel in which every
// value derived from that argument, not only its direct readers, comes from
// elementwise ops of the update's shape. A transpose, broadcast, reshape or
// reduction of an elementwise function of the state reads it at other elements
// than the one written: `s.add_((s * 0.5).t())` in place read elements the
// kernel had already overwritten (OpCases' state_add_own_transpose).
bool readsAtSameIndex(Operation *producer, unsigned operand, Value update) {
  if (producer->hasTrait<OpTrait::Elementwise>())
    return true;
  if (hostStepOf(producer) != HostStep::Kernel)
    return false;
  auto call = cast<func::CallOp>(producer);
  auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (kernel.isExternal())
    return false;
  auto shape = cast<ShapedType>(update.getType()).getShape();
  SmallVector<Value> derived{kernel.getArgument(operand)};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!derived.empty()) {
    Value value = derived.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<func::ReturnOp>(user) || !seen.insert(user).second)
        continue;
      if (!user->hasTrait<OpTrait::Elementwise>())
        return false;
      for (Value result : user->getResults()) {
        auto shaped = dyn_cast<ShapedType>(result.getType());
        if (!shaped || shaped.getShape() != shape)
          return false;
        derived.push_back(result);
      }
    }
  }
  return true;
}

// A tensor that needs arena memory, live from its producer to its last use.
struct Buffer {
  Value value;
  int64_t size; // bytes, rounded up to the alignment
  unsigned start, end;
  int64_t offset = 0;

  bool overlaps(const Buffer &other) const {
    return start <= other.end && other.start <= end;
  }
};

// Best fit among the gaps the placed buffers live at the same time leave;
// past the last of them when no gap is large enough. Offsets and sizes are
// multiples of the alignment, so every gap starts aligned.
int64_t bestFit(const Buffer &buffer, ArrayRef<Buffer *> placed) {
  SmallVector<std::pair<int64_t, int64_t>> taken;
  for (Buffer *other : placed)
    if (buffer.overlaps(*other))
      taken.emplace_back(other->offset, other->offset + other->size);
  llvm::sort(taken);
  int64_t best = -1, bestGap = std::numeric_limits<int64_t>::max();
  int64_t cursor = 0;
  for (auto [begin, end] : taken) {
    int64_t gap = begin - cursor;
    if (gap >= buffer.size && gap < bestGap) {
      best = cursor;
      bestGap = gap;
    }
    cursor = std::max(cursor, end);
  }
  return best >= 0 ? best : cursor;
}

// The plan of one host schedule (a function of one block).
class FunctionPlanner {
public:
  FunctionPlanner(func::FuncOp func, int64_t alignment, bool severalResultsInPlace)
      : func(func), body(func.getBody().front()), alignment(alignment),
        severalResultsInPlace(severalResultsInPlace) {
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;
  }

  struct Summary {
    int64_t arenaBytes = 0, naiveBytes = 0;
    unsigned buffers = 0, inPlace = 0;
  };

  Summary plan() {
    classifyResults();
    for (Operation &op : body)
      if (!producesNothing(op) && op.getNumResults() != 0)
        decideOffsets(op);
    Summary summary = place();
    summary.inPlace = inPlaceCount;
    for (Operation &op : body)
      if (offsets.count(&op)) {
        op.setAttr(KilnDialect::getOffsetsAttrName(),
                   DenseI64ArrayAttr::get(op.getContext(), offsets[&op]));
        markOverwrites(op);
      }
    return summary;
  }

  // Tells a fusion kernel which of its operands a result planned in place
  // overwrites: the kernel lowering must not read them after writing it
  // (readsAtSameIndex holds within one loop nest; a kernel lowered to several
  // may read the state in a later one).
  void markOverwrites(Operation &op) {
    if (hostStepOf(&op) != HostStep::Kernel)
      return;
    auto call = cast<func::CallOp>(op);
    auto kernel = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!kernel || kernel.isExternal())
      return;
    for (auto [i, entry] : llvm::enumerate(offsets[&op])) {
      if (entry != kInPlace)
        continue;
      BlockArgument state = updates.find(call->getResult(i))->second.front();
      SmallVector<int64_t> read;
      if (auto previous = kernel.getResultAttrOfType<DenseI64ArrayAttr>(
              i, KilnDialect::getOverwritesAttrName()))
        read.assign(previous.asArrayRef().begin(),
                    previous.asArrayRef().end());
      for (OpOperand &operand : call->getOpOperands())
        if (rootOf(operand.get()) == state &&
            !llvm::is_contained(read, operand.getOperandNumber()))
          read.push_back(operand.getOperandNumber());
      if (!read.empty())
        kernel.setResultAttr(i, KilnDialect::getOverwritesAttrName(),
                             DenseI64ArrayAttr::get(op.getContext(), read));
    }
  }

private:
  // Sorts the returned values into those handed to the caller and those
  // written back into a state argument (by the root of their memory).
  void classifyResults() {
    DenseMap<StringAttr, BlockArgument> states;
    for (BlockArgument arg : func.getArguments())
      if (auto name = func.getArgAttrOfType<StringAttr>(
              arg.getArgNumber(), KilnDialect::getStateAttrName()))
        states[name] = arg;
    for (auto [i, result] :
         llvm::enumerate(body.getTerminator()->getOperands())) {
      auto name = func.getResultAttrOfType<StringAttr>(
          i, KilnDialect::getStateUpdateAttrName());
      if (name && states.count(name))
        updates[rootOf(result)].push_back(states[name]);
      else
        handedOut.insert(rootOf(result));
    }
  }

  // One `kiln.offsets` entry per result of `op`; a buffer for each that
  // needs one, placed later.
  void decideOffsets(Operation &op) {
    SmallVector<int64_t> &entries = offsets[&op];
    for (Value result : op.getResults()) {
      std::optional<int64_t> bytes = plannableBytes(result.getType());
      if (!bytes || handedOut.contains(result)) {
        entries.push_back(kNotInArena);
      } else if (isInPlace(result)) {
        entries.push_back(kInPlace);
        ++inPlaceCount;
      } else {
        entries.push_back(0); // the buffer's offset, once placed
        auto size = int64_t(llvm::alignTo(uint64_t(*bytes), alignment));
        buffers.push_back({result, size, position[&op], lastUse(result)});
      }
    }
  }

  // Whether `update` can be written over the state it updates: the state has
  // no reader after the update's producer, and the producer itself reads
  // each element only where it writes it.
  bool isInPlace(Value update) {
    auto it = updates.find(update);
    if (it == updates.end() || it->second.size() != 1)
      return false;
    BlockArgument state = it->second.front();
    if (plannableBytes(state.getType()) != plannableBytes(update.getType()))
      return false;
    Operation *producer = update.getDefiningOp();
    if (!severalResultsInPlace && producer->getNumResults() > 1 &&
        hostStepOf(producer) == HostStep::Kernel)
      return false;
    SmallVector<Value> views{state};
    while (!views.empty()) {
      Value view = views.pop_back_val();
      for (OpOperand &use : view.getUses()) {
        Operation *reader = body.findAncestorOpInBlock(*use.getOwner());
        if (isBufferView(reader))
          views.push_back(reader->getResult(0));
        else if (reader == producer
                     ? !readsAtSameIndex(producer, use.getOperandNumber(),
                                         update)
                     : position[reader] > position[producer])
          return false;
      }
    }
    return true;
  }

  // The block position of the last op using `value` or a view of it.
  unsigned lastUse(Value value) {
    unsigned last = position[value.getDefiningOp()];
    for (OpOperand &use : value.getUses()) {
      Operation *user = body.findAncestorOpInBlock(*use.getOwner());
      last = std::max(last, isBufferView(user) ? lastUse(user->getResult(0))
                                               : position[user]);
    }
    return last;
  }

  // Greedy by size: each buffer, largest first, takes the best-fitting gap
  // among the buffers already placed that it is live with.
  Summary place() {
    SmallVector<Buffer *> order =
        llvm::map_to_vector(buffers, [](Buffer &buffer) { return &buffer; });
    llvm::stable_sort(order,
                      [](Buffer *a, Buffer *b) { return a->size > b->size; });
    Summary summary;
    SmallVector<Buffer *> placed;
    for (Buffer *buffer : order) {
      buffer->offset = bestFit(*buffer, placed);
      placed.push_back(buffer);
      summary.arenaBytes =
          std::max(summary.arenaBytes, buffer->offset + buffer->size);
      summary.naiveBytes += buffer->size;
      auto result = cast<OpResult>(buffer->value);
      offsets[result.getOwner()][result.getResultNumber()] = buffer->offset;
    }
    summary.buffers = buffers.size();
    return summary;
  }

  func::FuncOp func;
  Block &body;
  int64_t alignment;
  bool severalResultsInPlace;
  DenseMap<Operation *, unsigned> position;
  DenseMap<Value, SmallVector<BlockArgument, 1>> updates;
  llvm::DenseSet<Value> handedOut;
  DenseMap<Operation *, SmallVector<int64_t>> offsets;
  std::vector<Buffer> buffers;
  unsigned inPlaceCount = 0;
};

struct KilnPlanMemoryPass : impl::KilnPlanMemoryPassBase<KilnPlanMemoryPass> {
  using KilnPlanMemoryPassBase::KilnPlanMemoryPassBase;

  void runOnOperation() override {
    if (alignment <= 0 || !llvm::isPowerOf2_64(alignment)) {
      // On the location, not the op: the module dump would bury the message.
      emitError(getOperation().getLoc(),
                "kiln-plan-memory: alignment must be a power of two, not ")
          << int64_t(alignment);
      return signalPassFailure();
    }
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() &&
          !func->hasAttr(KilnDialect::getKernelAttrName()))
        planFunction(func);
  }

  void planFunction(func::FuncOp func) {
    if (Operation *op = firstUnoutlined(func)) {
      if (report)
        func.emitRemark("not planned: '")
            << op->getName()
            << "' is not outlined (run kiln-outline-kernels first)";
      return;
    }
    if (!func.getBody().hasOneBlock()) {
      if (report)
        func.emitRemark("not planned: a host schedule is one block");
      return;
    }
    FunctionPlanner::Summary summary = FunctionPlanner(func, alignment, severalResultsInPlace).plan();
    Builder builder(func.getContext());
    func->setAttr(KilnDialect::getArenaBytesAttrName(),
                  builder.getI64IntegerAttr(summary.arenaBytes));
    func->setAttr(KilnDialect::getNaiveBytesAttrName(),
                  builder.getI64IntegerAttr(summary.naiveBytes));
    if (report)
      func.emitRemark() << "arena: " << summary.arenaBytes << " bytes for "
                        << summary.buffers << " buffers (" << summary.naiveBytes
                        << " without reuse), " << summary.inPlace
                        << " state updates in place";
  }
};

} // namespace
} // namespace mlir::kiln
