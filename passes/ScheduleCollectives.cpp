// kiln-schedule-collectives: each kiln.all_reduce_start moves up to just after the values it
// reduces are computed, and each kiln.wait down to just before the first op that reads its
// values, so the collective runs while the rest of the program (the backward of earlier
// layers, the optimizer's updates of buckets that arrived first) does.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNSCHEDULECOLLECTIVESPASS
#include "passes/Passes.h.inc"

namespace {

// The data movement that gathers a bucket's gradients into one operand (flattening
// reshapes, a concat, a zero constant for a missing gradient): it moves up with its start.
bool gathersOperand(Operation *op) {
  return isa<ReshapeOp, ConcatOp, ConstantOp>(op);
}

// The data movement that scatters a bucket's reduced values back into gradients (slices
// and reshapes of a wait's result): it moves down with its wait.
bool scattersResult(Operation *op) { return isa<ReshapeOp, SliceOp>(op); }


// The latest op of `block` before `op` that is not pure (a collective, a callback): no
// collective may pass another, so every rank keeps issuing them in the same order.
Operation *previousEffect(Operation *op) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
    if (!isPure(prev))
      return prev;
  return nullptr;
}

// Moves `op` up to just after the latest of `floor` and its operands' producers in its
// block (to the block's start when there is none).
void hoist(Operation *op, Operation *floor) {
  Operation *after = floor;
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp(); def && def->getBlock() == op->getBlock())
      if (!after || after->isBeforeInBlock(def))
        after = def;
  if (!after)
    op->moveBefore(&op->getBlock()->front());
  else if (after->getNextNode() != op)
    op->moveAfter(after);
}

// The first op of `op`'s block that uses one of its results (through nested regions too),
// or null.
Operation *firstUser(Operation *op) {
  Operation *first = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *inBlock = op->getBlock()->findAncestorOpInBlock(*user);
    if (inBlock && (!first || inBlock->isBeforeInBlock(first)))
      first = inBlock;
  }
  return first;
}

// Whether a wait whose first reader is `reader` may move past `op`: a pure op, a start, or
// another wait for a different reader (MPI completes non-blocking collectives in any
// order, as long as every rank starts them in the same one; the optimizer reads the
// buckets in the reverse of the order they were started). Not a wait for the same reader
// (those keep their order), a blocking collective or a callback, which keep the
// program's order of effects.
bool waitMayPass(Operation *op, Operation *reader) {
  if (isPure(op) || isa<AllReduceStartOp>(op))
    return true;
  return isa<WaitOp>(op) && firstUser(op) != reader;
}

// Moves `op` down to just before its first user, but not past an op `mayPass` refuses.
void sink(Operation *op, function_ref<bool(Operation *, Operation *)> mayPass) {
  Operation *user = firstUser(op);
  if (!user)
    return;
  Operation *before = op;
  for (Operation *next = op->getNextNode(); next != user && mayPass(next, user);
       next = next->getNextNode())
    before = next;
  if (before != op)
    op->moveAfter(before);
}

// Each wait, with the slices and reshapes that scatter its result, sinks to just before
// the first op that reads its values (the optimizer's first update of that bucket).
void sinkWaits(func::FuncOp func) {
  SmallVector<WaitOp> waits;
  func.walk([&](WaitOp wait) { waits.push_back(wait); });
  for (WaitOp wait : llvm::reverse(waits)) {
    // The scattering ops in block order; sunk last first, so each finds its users placed.
    SetVector<Operation *> scatter;
    SmallVector<Operation *> pending{wait};
    while (!pending.empty())
      for (Operation *user : pending.pop_back_val()->getUsers())
        if (user->getBlock() == wait->getBlock() && scattersResult(user) &&
            scatter.insert(user))
          pending.push_back(user);
    SmallVector<Operation *> ordered(scatter.begin(), scatter.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) { return b->isBeforeInBlock(a); });
    for (Operation *op : ordered)
      sink(op, [](Operation *, Operation *) { return true; });
    sink(wait, waitMayPass);
  }
}

}  // namespace

void scheduleCollectives(func::FuncOp func) {
  SmallVector<AllReduceStartOp> starts;
  func.walk([&](AllReduceStartOp start) { starts.push_back(start); });
  for (AllReduceStartOp start : starts) {
    Operation *floor = previousEffect(start);
    // The ops that gather the operand, in block order, each after its own operands.
    SetVector<Operation *> gather;
    SmallVector<Value> pending(start->getOperands());
    while (!pending.empty()) {
      Operation *def = pending.pop_back_val().getDefiningOp();
      if (!def || def->getBlock() != start->getBlock() || !gathersOperand(def) ||
          (floor && def->isBeforeInBlock(floor)) || !gather.insert(def))
        continue;
      pending.append(def->operand_begin(), def->operand_end());
    }
    SmallVector<Operation *> ordered(gather.begin(), gather.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    for (Operation *op : ordered)
      hoist(op, nullptr);
    hoist(start, floor);
  }
  sinkWaits(func);
}

namespace {

struct KilnScheduleCollectivesPass
    : impl::KilnScheduleCollectivesPassBase<KilnScheduleCollectivesPass> {
  void runOnOperation() override { scheduleCollectives(getOperation()); }
};

}  // namespace
}  // namespace mlir::kiln
