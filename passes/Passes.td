// Kiln's compiler passes: declarations for mlir-tblgen (GEN_PASS_DECL / GEN_PASS_DEF_*).

#ifndef KILN_PASSES_TD
#define KILN_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Graph rewriting
//===----------------------------------------------------------------------===//

def KilnFusePass : Pass<"kiln-fuse", "func::FuncOp"> {
  let summary = "group elementwise, broadcast and reduction ops into kiln.fusion regions";
  let description = [{
    Walks the function from its last op to its first. Every elementwise or
    reduction op not yet grouped starts a group (its root) and pulls in its
    producers while they are elementwise ops or broadcasts whose other users
    come after the root (they become extra results of the group). A reduction
    is a root, or a row producer: a reduction of trailing dims [k, rank) of a
    value of an elementwise root's shape (k >= 1), all of whose users are in
    the group, joins it, and the fusion gets `kiln.row_dims` (the least such
    k) for kiln-tile-rows; a row group that would have more than one result
    is grown again without row reductions. A producer that is
    cheap to recompute (no transcendental, no division) and is also needed
    before the root is duplicated into the group; splat constants always are.
    A transpose joins the group of a consumer (which then reads its operand
    in permuted order) but never starts a group. Library ops (matmul, conv2d,
    pool2d), other data movement (reshape, slice, concat, gather), rng and
    callbacks are never fused. A group stops
    before it would take more than `max-inputs` inputs.

    With `report`, every group gets a remark on its root listing its size and,
    for each producer it did not take, why (`kiln-opt --kiln-fuse-report`).
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
  let options = [
    Option<"maxInputs", "max-inputs", "unsigned", /*default=*/"16",
           "most inputs a fusion may take">,
    Option<"report", "report", "bool", /*default=*/"false",
           "remark on each group why it stopped growing">,
  ];
}

def KilnSpecializeShapesPass
    : Pass<"kiln-specialize-shapes", "func::FuncOp"> {
  let summary = "make a program with `?` dims static for one call's shapes";
  let description = [{
    Gives the function's arguments the static `shapes` (one per argument,
    `64x784,64`; an empty entry or `x` for a rank-0 argument), folds
    `tensor.dim` and index arithmetic to numbers, makes the dynamic size
    operands of reshape, broadcast_in_dim, rng, scatter_add and iota static
    attribute entries (an iota becomes a dense constant) and infers every
    result type again. A
    size that does not fit an op is an error at the op. This is how a dynamic
    trace runs: specialized to each call's shapes, then interpreted or
    compiled as a static program (docs/ARCHITECTURE.md, "Dynamic shapes").
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"shapes", "shapes", "std::string", /*default=*/"\"\"",
           "one static shape per argument: 64x784,64">,
  ];
}

def KilnSimplifyPass : Pass<"kiln-simplify", "func::FuncOp"> {
  let summary = "fold constants, apply algebraic identities, sink layout ops, CSE";
  let description = [{
    Runs the kiln folders and canonicalization patterns together with the
    simplifications that are not canonical forms: transposes and reshapes
    sink below the elementwise unary ops that consume them (so chains of
    elementwise ops meet and transposes meet and cancel), `x - neg(y)` becomes
    `x + y` and `x + neg(y)` becomes `x - y`, a transpose of a matmul
    operand's last two dims folds into its transpose_a/transpose_b flag, and a
    transposed matmul becomes the product of its operands swapped
    ((AB)^T = B^T A^T). Then it removes common
    subexpressions, and repeats both until nothing changes.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

//===----------------------------------------------------------------------===//
// Scheduling and memory
//===----------------------------------------------------------------------===//

def KilnOutlineKernelsPass : Pass<"kiln-outline-kernels", "ModuleOp"> {
  let summary = "turn each fusion and library op into a kernel function";
  let description = [{
    In every function, each `kiln.fusion` and each library op (`kiln.matmul`,
    `kiln.conv2d`, `kiln.pool2d`) moves into a private function
    `@<function>_kernel_<n>` (numbered in block order, placed after its host)
    carrying `kiln.kernel = "fusion"` or `"library"`, and is replaced by a
    `func.call`. What stays (constants, layout and data movement ops, rng,
    callbacks, elementwise ops left unfused) is the host schedule. A fusion's
    body becomes the kernel's body; locations are kept. Kernels are not
    outlined again, so running the pass twice changes nothing. Fusion
    kernels of the same type and body are merged into the first (repeated
    layers compile once), whose locations then stand for every caller.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def KilnPlanMemoryPass : Pass<"kiln-plan-memory", "ModuleOp"> {
  let summary = "plan one arena with static offsets for each host schedule";
  let description = [{
    Plans one arena per outlined function (kernels and functions that still
    hold fusions or library ops are left alone). Every tensor an op of the
    host schedule produces gets a buffer, except constants, buffer views
    (reshapes, and transposes only library kernels read, which the runtime
    passes as strided views; they alias their operand and extend its
    lifetime), results returned as
    `kiln.output` (handed to the caller: offset -1) and state updates that
    can be written in place into their state argument (offset -2: the state
    is not read after the update's producer, and a producer that reads it
    reads each element only where it writes it). Buffers live from their
    producer to their last use in block order and are placed best fit,
    largest first, at offsets aligned to `alignment` bytes.

    Without `several-results-in-place`, no result of a fusion kernel of
    several results is written in place (for kernel generators that take
    buffers not to alias, HALIDE: the update goes to a buffer of its own and
    the caller writes it into the state).

    Each producing op gets `kiln.offsets` (one entry per result); the
    function gets `kiln.arena_bytes` (the peak) and `kiln.naive_bytes` (the
    sum of all buffers, the cost without reuse). With `report`, a remark on
    each function gives both and the number of in-place state updates.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"64",
           "byte alignment of every buffer in the arena">,
    Option<"report", "report", "bool", /*default=*/"false",
           "remark on each function with its arena size">,
    Option<"severalResultsInPlace", "several-results-in-place", "bool",
           /*default=*/"true",
           "a fusion kernel of several results may write one over its state">,
  ];
}

def KilnScheduleCollectivesPass
    : Pass<"kiln-schedule-collectives", "func::FuncOp"> {
  let summary = "start each non-blocking all-reduce as soon as its operand "
                "exists and wait for it only where its result is read";
  let description = [{
    Moves every `kiln.all_reduce_start` up to just after the last op that
    computes its operand, taking along the reshapes, concats and constants
    that gather the operand (a bucket's flattened gradients), so that the
    collective runs while the ops after it (the rest of the backward) do. A
    start never passes an op that is not pure (another collective, a
    callback), so every rank keeps issuing its collectives in the same order.
    Then every `kiln.wait` moves down to just before the first op that reads
    its result, taking along the slices and reshapes that scatter it back into
    gradients, so the optimizer updates the buckets that arrived while later
    ones are still in flight. A wait may pass starts, pure ops and waits read
    by a different op (the optimizer reads buckets in the reverse of their
    start order), never a wait for the same reader, a blocking
    `kiln.all_reduce` or a callback. The tracer runs it
    on each recording (`scheduleCollectives`), before any backend sees it.
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

//===----------------------------------------------------------------------===//
// Conversion
//===----------------------------------------------------------------------===//

def KilnConvertToLinalgPass : Pass<"kiln-convert-to-linalg", "func::FuncOp"> {
  let summary = "convert kiln ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Each elementwise op becomes one linalg.generic with identity maps,
    parallel iterators and an arith/math body that computes what the eager
    kernel does (f16 and bf16 in f32, NaN-propagating max/min and relu, exact
    gelu); kiln-fuse-generics then merges chains. A
    broadcast is a linalg.generic reading its operand through a projected map
    (size-1 dims at index 0); reshape, transpose, slice and concat become
    tensor.collapse_shape/expand_shape, linalg.transpose,
    tensor.extract_slice and tensor.concat; gather a linalg.generic of
    tensor.extract, iota one of linalg.index; scatter_add zeros and an scf.for
    over the indices in order, each step adding one slice of the updates into
    the result (the eager kernel's order of adds); reduce a linalg.fill of the
    neutral element and a linalg.generic with reduction iterators (float sums
    in f64, as the eager kernels) writing the result in its own shape
    (keep_dims' size-1 dims are unit loops, so no reshape separates a
    reduction from its users), then mean's division; constants become
    arith.constant.

    `?` dims are taken as they come, so a kernel is lowered once for every
    size: result tensors are sized by tensor.dim of the operands or by the
    ops' dynamic size operands, slices and the float32 sums' blocks of pairs
    by index arithmetic on them, and mean divides by the run-time count.

    Library ops (matmul, conv2d, pool2d), rng, callbacks, kiln.fusion and
    kiln.yield stay as they are; the ops inside fusion bodies are converted.
    An op the patterns cannot lower (scatter_add with 0-d indices) fails the
    pass with an error naming it.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def KilnFuseGenericsPass : Pass<"kiln-fuse-generics", "func::FuncOp"> {
  let summary = "merge elementwise linalg.generic chains, not through broadcasts";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` (its patterns: elementwise fusion
    of a producer with one use, reshape folding by expansion, canonicalization
    and constant folding), except that a producer is not fused into a generic
    that iterates more often than the producer's result has elements, i.e.
    one that reads it through a broadcast: fused there, the producer would be
    computed once per reading. A BatchNorm kernel's per-channel scale,
    rsqrt(var * c + eps) * gamma on [1, C, 1, 1], was computed for every pixel
    of [N, C, H, W] (a square root and a division per element, 30x the
    kernel's memory time); unfused, it is a loop over C whose result the
    per-pixel loop reads. Where a size is `?` the rule does not apply.

    And a producer whose uses all belong to one generic is fused into each of
    them when together they read each of its elements at most once: a float32
    sum reads its input through 32 operands, one per element of a block of
    pairs, so BatchNorm's (x - mean)^2 is computed in the variance's loop
    instead of stored to a scratch buffer and read back.

    With `recompute` (kiln-gpu-pipeline's), in a function with
    `kiln.row_dims`: an all-parallel producer (written through a permutation,
    reading neither its output nor its indices) that several generics read
    gets a copy for each after the first, and fusion runs again, up to four
    rounds; a producer reading a value copied in the same round waits for the
    next, so a chain is copied once rather than once per path. Softmax's
    exp(x - max), read by the row sum and by the division, is then computed in
    each instead of written to a full-size scratch and read back twice.
  }];
  let options = [
    Option<"broadcasts", "broadcasts", "bool", /*default=*/"false",
           "fuse into generics that read the producer through a broadcast as "
           "well (upstream's rule; the GPU pipeline's, where each kernel kept "
           "apart is one more launch)">,
    Option<"recompute", "recompute", "bool", /*default=*/"false",
           "in a function with kiln.row_dims, copy an all-parallel producer that "
           "several generics read once for each, so each fuses its own (the GPU "
           "pipeline's: recomputing costs less than a scratch round trip)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def KilnCollapseDimsPass : Pass<"kiln-collapse-dims", "func::FuncOp"> {
  let summary = "merge an elementwise kernel's loops over jointly contiguous dims";
  let description = [{
    Runs on bufferized kernels (after the results became out-parameters). In
    a function whose linalg ops are all elementwise generics on row-major
    buffers (parallel loops, identity output maps), each input read through
    a broadcast's constant-0 indices is collapsed to the dims its map names
    (memref.collapse_shape, a view), and then adjacent loops that every map
    names next to each other in order, or not at all, become one loop
    (upstream's collapse-dimensions patterns, which collapse each operand
    to a view of the same memory). An NCHW
    BatchNorm-and-ReLU6 kernel on 8x8 planes, per-channel operands
    broadcast over N, H and W, had an innermost loop of 8 that LLVM
    unrolled and left scalar; with H and W one loop of 64 it vectorizes.
    The arithmetic and its order are unchanged. Functions with a reduction
    (row kernels, which kiln-tile-rows tiles by shape) are left alone.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

//===----------------------------------------------------------------------===//
// CPU code generation
//===----------------------------------------------------------------------===//

def KilnTileRowsPass : Pass<"kiln-tile-rows", "func::FuncOp"> {
  let summary = "compute a row fusion kernel one tile of rows at a time";
  let description = [{
    Runs on kernel functions in linalg on tensors that carry `kiln.row_dims`
    (kiln-fuse puts it on a group with row reductions; kiln-outline-kernels
    carries it to the kernel). The linalg.generic producing the kernel's one
    result is tiled along its leading `kiln.row_dims` loops (tiles of about
    `tile-bytes` of the result: one row of each outer dim, as many of the last
    as fit; a `?` row dim's last tile is cut short at run time, and the dims a
    row spans must be static) into an scf.forall, and every producer of its
    tile, reductions included, is fused into the loop (scf tile-and-fuse over
    the TilingInterface). Each tile then reduces and normalizes rows that are
    still in cache, so the kernel reads its inputs from memory once instead
    of once per reduction. Before tiling, a cheap all-parallel producer with
    several users (at most four arith ops in its payload) is fused into each of
    them, a copy each, so its values are recomputed from the tile's inputs
    instead of stored to a scratch tile; a costlier one with several users, one
    of them a reduction, is fused into that reduction, which then also yields
    its values (one loop computes, stores and reduces them). Producers fused
    along several paths are merged
    again (CSE), and tensor.empty is sized to the tile, so a value two fused
    ops share is scratch the size of a tile. A kernel the tiling cannot
    handle is left as it was (correct, with a full-size scratch).
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
  let options = [
    Option<"tileBytes", "tile-bytes", "int64_t", /*default=*/"4096",
           "bytes of the result one tile aims at">,
  ];
}

def KilnApproximateMathPass : Pass<"kiln-approximate-math", "func::FuncOp"> {
  let summary = "replace f32 transcendental math ops by polynomial approximations";
  let description = [{
    Rewrites f32 (scalar or vector) `math.exp`, `expm1`, `log`, `log1p`,
    `log2`, `tanh`, `erf`, `erfc`, `atan` and `atan2` into upstream's
    polynomial approximations (arith ops and `math.fma`, a few ulp from
    libm), so no libm call stays in a loop and LLVM's loop vectorizer can
    widen the kernel loops. `log` and `log2` of subnormal inputs are computed
    on the input scaled by 2^24 (the approximations read the exponent from
    the bits). Other element types, `powf`, `sin` and `cos` (whose
    approximations are only good near zero) and the ops LLVM has vector
    intrinsics for (`sqrt`, `floor`, `absf`) are left alone.

    With `approximate-division`, the divisions the approximations bring (the
    rational tanh, erf and atan, expm1's quotient) carry the `afn` fast-math
    flag, which NVPTX selects as `div.approx.f32` (a reciprocal and a multiply,
    2 ulp for divisors in [2^-126, 2^126], where these denominators stay)
    rather than the IEEE `div.rn.f32` sequence; the user's own divisions are
    left as they are. The GPU pipeline sets it; the CPU pipeline does not.
  }];
  let options = [
    Option<"approximateDivision", "approximate-division", "bool",
           /*default=*/"false",
           "mark the approximations' own divisions afn (div.approx.f32 on NVPTX)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def KilnHoistScratchPass : Pass<"kiln-hoist-scratch", "func::FuncOp"> {
  let summary = "allocate a loop body's scratch once, before the loop; small scratch on the stack";
  let description = [{
    Runs after kiln-parallelize, when every loop left in a function runs its
    iterations one after another: `scf.for`, `scf.while`, and the
    `scf.parallel` loops that kiln-parallelize kept serial or left inside a
    chunk. A `memref.alloc` of static shape in a loop's body whose buffer is
    freed by a `memref.dealloc` in the same block (scratch that lives for one
    iteration: a row tile's intermediates, its f64 accumulators) moves before
    the loop, and its dealloc after it, repeated outward through nested
    loops. The iterations then reuse one buffer instead of calling malloc and
    free each time (a softmax tile allocated 19 buffers per tile). Each chunk
    function is called by one thread for a range of iterations, so a buffer
    hoisted inside a chunk is still the thread's own; hoisting never leaves
    the function. An alloc with run-time sizes, or one freed elsewhere or
    through a view, stays where it is.

    Then such scratch that is in no loop (hoisted out of all of them, or in
    none to begin with), of int or float elements and of at most
    `stack-bytes`, becomes a `memref.alloca` at the start of the function's
    entry block, its dealloc erased, while the function's stack scratch stays
    within `stack-budget`: no call at all, and LLVM keeps such buffers (a
    one-row tile's f64 accumulators) in registers. Larger scratch stays on the
    heap: a softmax row's 4 KiB exp tile on the stack made the softmax 4%
    slower than on the heap (docs/ARCHITECTURE.md). Scratch in a loop stays on the heap (a stack buffer
    there would grow the stack each iteration).

    Run it before kiln-parallelize and it would share one buffer among threads:
    the pipeline places it after.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
  let options = [
    Option<"stackBytes", "stack-bytes", "int64_t", /*default=*/"1024",
           "the largest scratch buffer kept on the stack, in bytes">,
    Option<"stackBudget", "stack-budget", "int64_t", /*default=*/"16384",
           "bytes of scratch one function may keep on its stack">,
  ];
}

def KilnPromoteAccumulatorsPass
    : Pass<"kiln-promote-accumulators", "func::FuncOp"> {
  let summary = "keep reduction accumulators in registers across scf.for loops";
  let description = [{
    A reduction lowered to loops loads its accumulator, combines, and stores
    it back on every iteration, which makes each iteration wait for the last
    one's store and keeps LLVM from vectorizing the loop. For every
    `scf.for` (innermost first) whose body loads and then stores one memref
    element at indices defined outside the loop, the element becomes a
    loop-carried value: loaded once before the loop, stored once after it.

    This is only done when nothing else in the loop can touch that element:
    every other memory access in the loop is to a different buffer, where
    buffers are the function's memref arguments and its allocations, seen
    through view ops. Kernel arguments never share bytes with each other
    where one of them is written (kiln-plan-memory's rule; an in-place
    state update is only ever read element for element, never through a
    reduction), so distinct arguments are distinct buffers. A loop with an
    op of unknown effects (a call) is left alone.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"];
}

def KilnLowerHostPass : Pass<"kiln-lower-host", "ModuleOp"> {
  let summary = "lower planned host schedules to LLVM functions over raw buffers";
  let description = [{
    Each planned host function `@f` (it has `kiln.arena_bytes`) becomes
    `llvm.func @kiln_f(%args, %results, %arena, %constants, %runtime)`: five
    pointers, the first four to arrays of buffer pointers (arguments in order,
    results in order, the arena, constants in block order). Values live where
    kiln-plan-memory put them: the arena at their offset, the caller's result
    buffer (-1) or the state argument they update (-2); a buffer view (a
    reshape, a transpose only library kernels read) is its operand's
    buffer. A call to a fusion kernel becomes an `llvm.call` with
    one pointer per operand and then per result; every other op (library
    kernels, data movement, rng, callbacks) becomes
    `kiln_rt_host_op(%runtime, <n>, operands, results)`, numbered in block
    order, which the runtime runs with the eager kernels. Results not written
    in place are copied into the caller's buffers before returning.

    Fusion kernels move into a nested `module @kiln_kernels` (declared in the
    host module), to be lowered on their own and joined by
    kiln-merge-kernels.

    With `time-kernels`, each fusion kernel call is bracketed by
    `kiln_rt_kernel_begin(%runtime, <n>)` and `kiln_rt_kernel_end(%runtime, <n>)`,
    kernel calls numbered in block order: the profiler's hooks, compiled in
    only for programs compiled while it records.
  }];
  let options = [
    Option<"timeKernels", "time-kernels", "bool", /*default=*/"false",
           "call kiln_rt_kernel_begin/end around each fusion kernel call">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def KilnSplitKernelModulesPass
    : Pass<"kiln-split-kernel-modules", "ModuleOp"> {
  let summary = "move each kernel function into a module of its own";
  let description = [{
    Runs on the kernels module (`module @kiln_kernels`): each `func.func` moves
    into a new unnamed module nested in it, which inherits the kernels module's
    discardable attributes (data layout, target). The kernel pipeline then runs
    nested on those modules, which the pass manager schedules on all threads:
    most of its passes are module passes, which on one module of all kernels
    ran on one thread. Kernels never call each other, so nothing a pass does to
    one depends on another. `kiln-join-kernel-modules` undoes it after lowering.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def KilnJoinKernelModulesPass
    : Pass<"kiln-join-kernel-modules", "ModuleOp"> {
  let summary = "join the lowered per-kernel modules back into one";
  let description = [{
    Moves the ops of each nested module (lowered by then) into the enclosing
    module and erases the nested ones. What several of them declare (malloc,
    kiln_rt_parallel_for) or define alike (math-to-funcs' helpers) is kept
    once; a private or internal symbol whose name is taken by something else
    (bufferization names each module's constants `__constant_<type>` from 0)
    is renamed; any other symbol defined twice, differently, is an error.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def KilnMergeKernelsPass : Pass<"kiln-merge-kernels", "ModuleOp"> {
  let summary = "move the lowered kernels into their host module";
  let description = [{
    Moves every op of the nested `module @kiln_kernels` (by now LLVM dialect
    only) into the enclosing module, replacing the host's declarations of the
    kernels with their definitions, and erases the nested module.
  }];
}

def KilnParallelizePass : Pass<"kiln-parallelize", "ModuleOp"> {
  let summary = "run large scf.parallel loops on the runtime's thread pool";
  let description = [{
    For every function of the module, each outermost `scf.parallel` (no
    reductions) with at least `min-elements` iterations in all (its own
    dimensions times the trip counts of the loops it holds) has its first
    dimension outlined. Where trip counts are not constant (a kernel with `?`
    dims) the count is computed before the loop and the choice made at run
    time: `scf.if` on `count >= min-elements` runs the outlined loop through
    the thread pool, its else branch calls the same chunk over all iterations
    on the calling thread, so small sizes run serially without a second copy
    of the loop to compile (a trip count computed inside the loop, a tile's
    rows, counts at its constant upper bound, the tile size; without one, as
    large: parallel unconditionally). Outlining: the body moves
    into a private `func.func @<function>_chunk_<n>(%captures: !llvm.ptr,
    %begin: index, %end: index)` that runs iterations [begin, end) of that
    dimension (the others stay an `scf.parallel` inside, and `scf.for`
    reduction loops stay inside the chunk, so reductions are never split).
    Values the body uses from outside are constants (cloned into the chunk),
    or travel through a stack struct: memrefs as their LLVM descriptors,
    index as i64, other scalars as they are. The loop becomes

    ```mlir
    func.call @kiln_rt_parallel_for(%chunk, %captures, %c0_i64, %trip)
    ```

    which the runtime splits across `kiln::ThreadPool::global()`. Smaller
    loops stay serial.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::scf::SCFDialect",
  ];
  let options = [
    Option<"minElements", "min-elements", "int64_t", /*default=*/"32768",
           "fewest iterations (all loop levels) a loop needs to run in parallel">,
  ];
}

//===----------------------------------------------------------------------===//
// GPU code generation
//===----------------------------------------------------------------------===//

def KilnGpuBlockReductionsPass
    : Pass<"kiln-gpu-block-reductions", "func::FuncOp"> {
  let summary = "reduce each output element of a linalg reduction with one thread block";
  let description = [{
    kiln-gpu-pipeline otherwise gives a reduction one thread per output element,
    looping over the reduced elements alone: a row sum of [64, 1024] ran on 64
    threads, each reading its row with a stride of 4 KiB between neighbouring
    threads, and a full reduction on one thread. This pass rewrites a
    `linalg.generic` on buffers whose every result is folded by one combiner
    (`arith.addf`, `mulf`, `maximumf`, `minimumf`, `maxnumf`, `minnumf`,
    `addi`, `muli`, `maxsi`, `minsi`, `maxui`, `minui`, `andi`, `ori`,
    `xori`) of f32, f64, i32 or i64 into one block per output element (the
    parallel dims, linearized, on blocks x) and `threads` threads per block
    (the reduced elements, linearized, at most `block-size`, at least a warp
    and no more than their count rounded up to a power of two): each thread
    folds the elements k = thread, thread + threads, ... from the combiner's
    identity, then `gpu.all_reduce` (warp shuffles, then shared memory across
    warps, when convert-gpu-to-nvvm lowers it) combines the threads, and thread
    0 combines the total with the output's value (or stores it, when the body
    starts each output from a constant at reduced index 0: the f32 sums'
    `select(k == 0, 0, out)`). Consecutive threads read consecutive reduced
    elements: a row reduction's loads coalesce.

    Applied where the reduced dim is the innermost of an input (a row: one
    thread per row would read rows apart) or where the outputs are fewer than
    `few-outputs` (a column reduction of many columns keeps one thread per
    column, whose loads coalesce across columns), with at least 32 reduced
    elements and static sizes; everything else is left to the one thread per
    output of kiln-gpu-map-loops. The combiner's reassociation changes
    rounding as any parallel reduction does (f32 sums are already summed in
    f64 by kiln-convert-to-linalg).

    ```mlir
    scf.parallel (%row) = (%c0) to (%c64) step (%c1) {
      scf.parallel (%t) = (%c0) to (%c256) step (%c1) {
        %part = scf.for %k = %t to %c1024 step %c256 iter_args(%acc = %ninf) -> (f32) {...}
        %total = gpu.all_reduce maximumf %part uniform {} : (f32) -> f32
        scf.if %first_thread { memref.store ... }
      } {mapping = [#gpu.loop_dim_map<processor = thread_x, ...>]}
    } {mapping = [#gpu.loop_dim_map<processor = block_x, ...>]}
    ```
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "most threads a block reduces one output element with">,
    Option<"fewOutputs", "few-outputs", "int64_t", /*default=*/"1024",
           "below this many outputs, a reduction whose reduced dim is not innermost is block-reduced too">,
  ];
}

def KilnGpuRowKernelsPass : Pass<"kiln-gpu-row-kernels", "func::FuncOp"> {
  let summary = "run a row fusion kernel as one launch, a thread block per row";
  let description = [{
    A kernel function with `kiln.row_dims` (kiln-fuse's row group: softmax,
    log_softmax, layer_norm, a reduction with what reads its result) is
    otherwise one launch per linalg op, each reading and writing whole
    tensors: softmax over rows was six launches, four full passes over the
    rows. Where every op of the kernel (on buffers) is a `linalg.generic`
    with static sizes whose outputs' leading `kiln.row_dims` indices are the
    same loop dims (the rows), and every buffer some op writes is read and
    written by every op at its own row only, the ops become one
    `scf.parallel` over the rows mapped to blocks x, with one thread loop
    inside mapped to threads x: the ops in order, a `gpu.barrier` between
    two (what one thread wrote in the row, another reads next). An op whose
    row has one output element and at least 32 reduced elements that it
    folds (kiln-gpu-block-reductions' folds) is reduced by the block
    (`gpu.all_reduce`); any other splits its row's kept elements among the
    threads, each looping over the reduced ones. The threads: the largest
    such count of the ops, rounded up to a power of two, at least a warp, at
    most `block-size`. Scratch stays where planning put it (allocated before
    the launch, freed after), but a row's scratch is written and read again
    by the same block while it is in the SM's cache.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "most threads a row's block has">,
  ];
}

#endif // KILN_PASSES_TD
