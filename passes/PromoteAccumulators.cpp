// kiln-promote-accumulators: an scf.for that loads and stores one memref element on every
// iteration carries it as a value instead, so reduction loops run out of registers and
// LLVM can vectorize them (see Passes.td for when this is safe).
#include "passes/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNPROMOTEACCUMULATORSPASS
#include "passes/Passes.h.inc"

namespace {

// The buffer `memref` is a view of: a function argument or an allocation, or null when it
// comes from anything else (then it may be anything).
Value bufferOf(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  if (isa<BlockArgument>(memref) &&
      isa<FunctionOpInterface>(memref.getParentBlock()->getParentOp()))
    return memref;
  if (memref.getDefiningOp<memref::AllocOp>() || memref.getDefiningOp<memref::AllocaOp>())
    return memref;
  return nullptr;
}

// Whether every memory access in `loop` other than `load` and `store` is to a buffer
// other than `buffer`, and every op's effects are known.
bool onlyTheseTouch(scf::ForOp loop, Value buffer, Operation *load, Operation *store) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (op == load || op == store || op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (isa<MemoryEffects::Allocate, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      Value other = value ? bufferOf(value) : Value();
      if (!other || other == buffer)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

// A load of an element that the same loop stores back later, at indices fixed across the
// loop: the accumulator of a reduction.
struct Accumulator {
  memref::LoadOp load;
  memref::StoreOp store;
};

std::optional<Accumulator> findAccumulator(scf::ForOp loop) {
  for (Operation &op : *loop.getBody()) {
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load || !loop.isDefinedOutsideOfLoop(load.getMemRef()) ||
        !llvm::all_of(load.getIndices(), [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
      continue;
    memref::StoreOp store;
    for (Operation *next = load->getNextNode(); next; next = next->getNextNode()) {
      auto candidate = dyn_cast<memref::StoreOp>(next);
      if (candidate && candidate.getMemRef() == load.getMemRef() &&
          candidate.getIndices() == load.getIndices()) {
        store = candidate;
        break;
      }
    }
    Value buffer = bufferOf(load.getMemRef());
    if (store && buffer && onlyTheseTouch(loop, buffer, load, store))
      return Accumulator{load, store};
  }
  return std::nullopt;
}

// Loads the accumulator before `loop`, carries it through the iterations and stores it
// after; returns the new loop.
scf::ForOp promote(IRRewriter &rewriter, scf::ForOp loop, Accumulator acc) {
  rewriter.setInsertionPoint(loop);
  Value initial = memref::LoadOp::create(rewriter, acc.load.getLoc(), acc.load.getMemRef(),
                                         acc.load.getIndices());
  Value stored = acc.store.getValueToStore();
  auto replaced = loop.replaceWithAdditionalYields(
      rewriter, initial, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) { return SmallVector<Value>{stored}; });
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  rewriter.replaceOp(acc.load, newLoop.getRegionIterArgs().back());
  rewriter.setInsertionPointAfter(newLoop);
  memref::StoreOp::create(rewriter, acc.store.getLoc(), newLoop.getResults().back(),
                          acc.store.getMemRef(), acc.store.getIndices());
  rewriter.eraseOp(acc.store);
  return newLoop;
}

struct KilnPromoteAccumulatorsPass
    : impl::KilnPromoteAccumulatorsPassBase<KilnPromoteAccumulatorsPass> {
  void runOnOperation() override {
    // Post-order: an inner loop's accumulator, once outside it, can be promoted out of
    // the loop around it (reductions over several dims).
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops)
      while (std::optional<Accumulator> acc = findAccumulator(loop))
        loop = promote(rewriter, loop, *acc);
  }
};

} // namespace
} // namespace mlir::kiln
