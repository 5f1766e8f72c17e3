// Kiln's compiler passes (docs/ARCHITECTURE.md §6): declarations, registration and pattern sets.
#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
class RewritePatternSet;
} // namespace mlir

namespace mlir::kiln {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

// Adds kiln-simplify's rewrites that are not canonicalizations: layout ops
// sunk below elementwise unary ops, additions and subtractions of negations.
void populateSimplifyAlgebraPatterns(RewritePatternSet &patterns);

// Adds kiln-convert-to-linalg's patterns for elementwise ops, convert and
// constants (one linalg.generic or arith.constant each).
void populateKilnElementwiseToLinalgPatterns(RewritePatternSet &patterns);

// Adds kiln-convert-to-linalg's patterns for broadcast_in_dim, reshape,
// transpose, slice, concat, gather, scatter_add and iota.
void populateKilnDataMovementToLinalgPatterns(RewritePatternSet &patterns);

// Adds kiln-convert-to-linalg's pattern for reduce (fill + reduction generic).
void populateKilnReduceToLinalgPatterns(RewritePatternSet &patterns);

// Adds all three kiln→linalg pattern sets above.
void populateKilnToLinalgPatterns(RewritePatternSet &patterns);

// Adds kiln-approximate-math's patterns: upstream's polynomial approximations
// of the f32 math ops the kiln conversion emits (exp, log, tanh, erf, sin...).
void populateKilnApproximateMathPatterns(RewritePatternSet &patterns);

// kiln-schedule-collectives on one function (the tracer calls it on each recording).
void scheduleCollectives(func::FuncOp func);

// Ops whose result is its operand's buffer seen another way, so kiln-plan-memory
// gives them no memory and kiln-lower-host passes the operand's pointer: every
// reshape, and a transpose whose users are all library kernels (the runtime
// hands the library a strided view of the operand, as eager code does).
bool isBufferView(Operation *op);

// The value a chain of buffer views views: the one that owns the buffer.
Value bufferOwner(Value value);

// How kiln-lower-host runs each op of a planned host schedule. The runtime
// numbers its tables (constants, kiln_rt_host_op calls) by the same rule.
enum class HostStep {
  Alias,     // a buffer view (isBufferView): its operand's buffer
  Constant,  // kiln.constant: the next entry of the constants array
  Kernel,    // call of a fusion kernel: compiled code
  Runtime,   // anything else: kiln_rt_host_op with the next number
  Return,
};
HostStep hostStepOf(Operation *op);

// Where result k of a planned host function ends up: written by its producer
// into the caller's buffer, the state argument itself (an in-place update), or
// copied into the caller's buffer before the function returns.
enum class ResultPlacement { Written, InPlace, Copied };
struct HostResult {
  ResultPlacement placement;
  int64_t stateArgument;  // for InPlace: the argument written
};
SmallVector<HostResult> hostResults(func::FuncOp host);

// Bytes of a static tensor in memory (i1 elements take a byte each).
int64_t byteSize(ShapedType type);

// kiln-cpu-pipeline in two stages, so the runtime can read the memory plan in
// between: simplify, fuse, outline kernels, plan memory; then lower the host,
// lower the kernels module to LLVM and merge it into the host module.
// What a user may choose about kiln-cpu-pipeline (jit::CompileOptions).
struct CpuPipelineOptions {
  bool fuse = true;             // kiln-fuse on: off, every op is its own host op or kernel
  unsigned fuseMaxInputs = 16;  // kiln-fuse's max-inputs
  // kiln-plan-memory last; off for a program with `?` dims, whose plan is made per call
  // shape after kernels are outlined (runtime/cpu/GenericProgram).
  bool planMemory = true;
  // kiln-plan-memory's several-results-in-place: off for a kernel generator that takes
  // buffers not to alias (HALIDE on CUDA), which then takes such kernels rather than
  // declining them.
  bool severalResultsInPlace = true;
};
void buildCpuPlanningPipeline(OpPassManager &pm, const CpuPipelineOptions &options = {});
// What the runtime chooses about the lowering: kiln-lower-host's time-kernels.
struct CpuLoweringOptions {
  bool timeKernels = false;
};
void buildCpuLoweringPipeline(OpPassManager &pm, const CpuLoweringOptions &options = {});
// The kernel half of kiln-cpu-pipeline for a module holding only fusion kernels whose
// tensors may have `?` dims (docs/ARCHITECTURE.md, "Dynamic shapes"): buffers are passed
// as MLIR memref descriptors (sizes and strides travel with them) rather than as bare
// pointers, and each kernel marked `llvm.emit_c_interface` gets its `_mlir_ciface_`
// wrapper. Size (index) arguments stay i64 arguments.
void buildCpuDynamicKernelPipeline(OpPassManager &pm);
// The external models the CPU pipeline's bufferization needs in the context.
void registerCpuPipelineDependencies(DialectRegistry &registry);

// The kernels' front half both kiln-cpu-pipeline and kiln-gpu-pipeline run on
// their kernels module: kiln -> linalg on tensors, generalize, elementwise fusion,
// (row tiling), one-shot bufferization with results as out-parameters, and the
// deallocation pipeline. Leaves linalg ops on memrefs.
struct KernelBufferizationOptions {
  // kiln-tile-rows: row fusions become an scf.forall over tiles of rows with
  // per-tile scratch (the CPU's cache blocking). The GPU path does not tile
  // rows yet: per-tile scratch would be allocated inside the device kernel.
  bool tileRows = true;
  // kiln-collapse-dims: elementwise kernels' jointly contiguous loops merged, so the
  // innermost loop is long enough for LLVM's vectorizer (the CPU's).
  bool collapseDims = true;
  // kiln-fuse-generics{broadcasts}: producers fused into generics that read them through
  // a broadcast too (the GPU's choice: each producer kept apart is one more launch).
  bool fuseThroughBroadcasts = false;
  // kiln-fuse-generics{recompute}: in a row kernel, a producer several generics read is
  // computed in each (the GPU's choice: no full-size scratch between a row's ops).
  bool recomputeInRowKernels = false;
};
void buildKernelBufferizationPipeline(OpPassManager &pm,
                                      const KernelBufferizationOptions &options = {});

// kiln-gpu-pipeline: the CPU's planning, then each fusion kernel to PTX
// (docs/ARCHITECTURE.md, "Compiler passes").
struct GpuPipelineOptions {
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  std::string format = "isa";  // gpu-module-to-binary's format: isa (PTX), bin, fatbin
  int64_t blockSize = 256;     // threads per block of every kernel launch
  // The CUDA toolkit whose nvvm/libdevice/libdevice.10.bc gpu-module-to-binary
  // links (f64 transcendentals, powf, sin/cos, ...). Empty: the first of
  // $KILN_CUDA_HOME, $CUDA_HOME, $CUDA_ROOT, $CUDA_PATH, /usr/local/cuda that
  // has it; with none, a kernel that needs libdevice fails the pipeline.
  std::string cudaHome;
};
void buildGpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options = {});
// buildGpuPipeline after the planning stage: the runtime plans with
// buildCpuPlanningPipeline (its host schedule is the CPU's), then compiles the
// planned module's fusion kernels with this. They move into a nested module
// `kiln_kernels` (the host keeps declarations), each a function of memrefs
// whose body is its gpu.launch_func ops, the PTX in gpu.binary ops beside.
void buildGpuKernelPipeline(OpPassManager &pm, const GpuPipelineOptions &options = {});
// The nested module buildGpuKernelPipeline moves kernels into.
constexpr llvm::StringLiteral kGpuKernelsModule = "kiln_kernels";
// The toolkit buildGpuPipeline links libdevice from: `explicitHome` if it holds
// nvvm/libdevice/libdevice.10.bc, else (when empty) the first of the places
// above that does; "" if none.
std::string findCudaHome(const std::string &explicitHome = "");
// The external models the GPU pipeline needs in the context beyond the CPU's
// (the NVVM target attribute, LLVM IR translations for gpu-module-to-binary).
void registerGpuPipelineDependencies(DialectRegistry &registry);

// Registers every kiln pass, and the `kiln-fuse-report` pipeline (kiln-fuse
// with its report on), with the global pass registry.
void registerPassesAndPipelines();

} // namespace mlir::kiln

#endif // KILN_PASSES_PASSES_H
