// kiln-schedule-collectives: each kiln.all_reduce_start moves up to just after the values it
// reduces are computed, so the collective runs while the rest of the program (the backward
// of earlier layers) does.
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
}

namespace {

struct KilnScheduleCollectivesPass
    : impl::KilnScheduleCollectivesPassBase<KilnScheduleCollectivesPass> {
  void runOnOperation() override { scheduleCollectives(getOperation()); }
};

}  // namespace
}  // namespace mlir::kiln
