// kiln-hoist-scratch: a serial loop's per-iteration scratch is allocated once, before
// the loop, and freed after it; small scratch then lives on the stack (see Passes.td for
// when this is safe).
#include "passes/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

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

// Bytes of a static memref of int or float elements; nullopt for anything else.
std::optional<int64_t> staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  return byteSize(type);
}

struct KilnHoistScratchPass : impl::KilnHoistScratchPassBase<KilnHoistScratchPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<memref::AllocOp, memref::DeallocOp>> scratch;
    getOperation().walk([&](memref::AllocOp alloc) {
      if (memref::DeallocOp dealloc = iterationScratch(alloc))
        scratch.push_back({alloc, dealloc});
    });
    Block &entry = getOperation().getFunctionBody().front();
    int64_t onStack = 0;
    for (auto [alloc, dealloc] : scratch) {
      // Outward while the block is a loop's body: the loop's own region, one block.
      for (Operation *loop = alloc->getParentOp(); isSerialLoop(loop);
           loop = alloc->getParentOp()) {
        alloc->moveBefore(loop);
        dealloc->moveAfter(loop);
      }
      // Out of every loop and small: a stack buffer in the entry block instead, which
      // LLVM can keep in registers (a tile's f64 accumulators) and which costs no call.
      std::optional<int64_t> bytes = staticBytes(alloc.getType());
      if (!bytes || *bytes > stackBytes || onStack + *bytes > stackBudget ||
          alloc->getParentOfType<LoopLikeOpInterface>())
        continue;
      onStack += *bytes;
      OpBuilder b(&entry, entry.begin());
      auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                             alloc.getAlignmentAttr());
      dealloc->erase();
      alloc->replaceAllUsesWith(alloca);
      alloc->erase();
    }
  }
};

} // namespace
} // namespace mlir::kiln
