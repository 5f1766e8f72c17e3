// kiln-hoist-scratch: a serial loop's per-iteration scratch is allocated once, before
// the loop, and freed after it (see Passes.td for when this is safe).
#include "passes/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNHOISTSCRATCHPASS
#include "passes/Passes.h.inc"

namespace {

// The loops whose iterations run one after another once kiln-parallelize has run.
bool isSerialLoop(Operation *op) {
  return isa<scf::ForOp, scf::WhileOp, scf::ParallelOp>(op);
}

// The dealloc that frees `alloc` in its own block, when that is the only one and the
// buffer's size is known before any loop: then the buffer lives for one iteration.
memref::DeallocOp iterationScratch(memref::AllocOp alloc) {
  if (!alloc->getOperands().empty())
    return {};
  memref::DeallocOp dealloc;
  for (Operation *user : alloc->getUsers()) {
    auto free = dyn_cast<memref::DeallocOp>(user);
    if (!free)
      continue;
    if (dealloc || free->getBlock() != alloc->getBlock())
      return {};
    dealloc = free;
  }
  return dealloc;
}

struct KilnHoistScratchPass : impl::KilnHoistScratchPassBase<KilnHoistScratchPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs) {
      memref::DeallocOp dealloc = iterationScratch(alloc);
      if (!dealloc)
        continue;
      // Outward while the block is a loop's body: the loop's own region, one block.
      for (Operation *loop = alloc->getParentOp(); isSerialLoop(loop);
           loop = alloc->getParentOp()) {
        alloc->moveBefore(loop);
        dealloc->moveAfter(loop);
      }
    }
  }
};

} // namespace
} // namespace mlir::kiln
