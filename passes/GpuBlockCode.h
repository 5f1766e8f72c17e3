// What kiln-gpu-block-reductions and kiln-gpu-row-kernels share: the analysis of a
// reduction generic as folds, and the code one thread block runs for a generic on buffers
// (inside a thread loop: `thread` of `threads`).
#ifndef KILN_PASSES_GPUBLOCKCODE_H
#define KILN_PASSES_GPUBLOCKCODE_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::kiln::gpu_block {

// How one result of a generic is folded: `combiner` (in the body) combines the output's
// running value with the element's; `start` is what a thread's fold begins from;
// `overwrite` when the body restarts the output at reduced index 0 (the old value is
// never read, so the total is stored as it is).
struct Fold {
  Operation *combiner = nullptr;
  gpu::AllReduceOperation kind;
  TypedAttr start;
  bool overwrite = false;
};

// How each result of `op` (on buffers, with reduced dims) is folded, or nothing when one
// is not one combiner's fold of f32, f64, i32 or i64 (see Passes.td).
std::optional<SmallVector<Fold>> foldsOf(linalg::GenericOp op);

// `linear` as indices over `sizes`, the last fastest.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear, ArrayRef<int64_t> sizes);

gpu::ParallelLoopDimMappingAttr mapTo(MLIRContext *context, gpu::Processor processor);

// The threads fold `op`'s reduced elements at the kept indices `ivs` (one per loop dim;
// the reduced ones unused): thread t takes elements t, t + threads, ..., gpu.all_reduce
// combines them (every thread must reach it), thread 0 writes the outputs.
void emitBlockFold(OpBuilder &b, linalg::GenericOp op, ArrayRef<Fold> folds, ArrayRef<Value> ivs,
                   Value thread, int64_t threads);

// The threads compute `op` at the indices `ivs` of the dims in `fixed`: thread t takes the
// other kept elements t, t + threads, ... and loops over the reduced ones itself.
void emitStrided(OpBuilder &b, linalg::GenericOp op, ArrayRef<unsigned> fixed, ArrayRef<Value> ivs,
                 Value thread, int64_t threads);

// Threads for `work` elements a block: a power of two, at least a warp, at most `most`.
int64_t threadsFor(int64_t work, int64_t most);

} // namespace mlir::kiln::gpu_block

#endif // KILN_PASSES_GPUBLOCKCODE_H
