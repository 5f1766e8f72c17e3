// kiln-cpu-pipeline: a traced program to one LLVM module for the host CPU (ARCHITECTURE.md §6).
#include "passes/Passes.h"
#include "passes/pipelines/KernelsToLLVM.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Affine/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "dialect/KilnDialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "mlir/Pass/PassRegistry.h"

namespace mlir::kiln {

void buildCpuPlanningPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  pm.addNestedPass<func::FuncOp>(createKilnSimplifyPass());
  if (options.fuse)
    pm.addNestedPass<func::FuncOp>(
        createKilnFusePass(KilnFusePassOptions{.maxInputs = options.fuseMaxInputs}));
  pm.addPass(createKilnOutlineKernelsPass());
  if (options.planMemory)
    pm.addPass(createKilnPlanMemoryPass(
        KilnPlanMemoryPassOptions{.severalResultsInPlace = options.severalResultsInPlace}));
}

// Whether kernel `func`'s result `i`, planned in place over some of its operands
// (kiln.overwrites, set by kiln-plan-memory), is written before an op of the body that
// still reads those operands: within one loop nest kiln-plan-memory's readsAtSameIndex
// makes that safe, but a kernel lowered to several (a value returned and also used, which
// elementwise fusion leaves as its own generic) would read the operand in a later nest
// after the result overwrote it (kiln-fuzz seed 800209: -s * (0.75 s + 0.25 t)).
static bool readAfterWritten(func::FuncOp func, Value result, unsigned i) {
  auto overwrites = func.getResultAttrOfType<DenseI64ArrayAttr>(
      i, KilnDialect::getOverwritesAttrName());
  if (!overwrites)
    return false;
  Block &body = func.getBody().front();
  Operation *writer = result.getDefiningOp()
                          ? body.findAncestorOpInBlock(*result.getDefiningOp())
                          : nullptr;
  if (!writer)
    return true;
  SmallVector<Value> reads;
  for (int64_t operand : overwrites.asArrayRef())
    reads.push_back(func.getArgument(unsigned(operand)));
  while (!reads.empty()) {
    Value value = reads.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ExtractSliceOp,
              tensor::CastOp, tensor::ReshapeOp>(user)) {
        llvm::append_range(reads, user->getResults());
        continue;
      }
      Operation *reader = body.findAncestorOpInBlock(*user);
      if (reader && reader != writer && !isa<func::ReturnOp>(reader) &&
          writer->isBeforeInBlock(reader))
        return true;
    }
  }
  return false;
}

// Results that need a buffer of their own, copied into the out-parameter as the kernel
// returns: (1) a repeated result. MLIR 22's buffer-results-to-out-params with
// hoist-static-allocs crashes on a function that returns one buffer twice: it turns the
// alloc into the first out-parameter, erases it, then reads it for the second. A kernel
// returns one value twice when a fold made two of its results one (max(x, x), kiln-fuzz
// seed 227268). (2) A result planned in place that a later op would read over
// (readAfterWritten): the copy is the kernel's last write, after every read of the state.
// Such kernels are rare, and the copy is one pass.
struct DistinctKernelResults
    : PassWrapper<DistinctKernelResults, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DistinctKernelResults)
  StringRef getArgument() const final { return "kiln-distinct-kernel-results"; }
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    func.walk([&](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 8> seen;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type)
          continue;
        if (seen.insert(operand.get()).second &&
            !readAfterWritten(func, operand.get(), operand.getOperandNumber()))
          continue;
        operand.set(bufferization::AllocTensorOp::create(builder, ret.getLoc(), type,
                                                         ValueRange{}, operand.get()));
      }
    });
    // Read here only: bufferization would move it onto the out-parameters.
    const auto name = StringAttr::get(&getContext(), KilnDialect::getOverwritesAttrName());
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      func.removeResultAttr(i, name);
  }
};

// The kernels' front half, shared with kiln-gpu-pipeline: linalg on tensors,
// elementwise generics merged, buffers with the results as out-parameters (so a
// kernel writes where the host planned), scratch freed. Leaves linalg on memrefs.
void buildKernelBufferizationPipeline(OpPassManager &pm,
                                      const KernelBufferizationOptions &options) {
  pm.addNestedPass<func::FuncOp>(createKilnConvertToLinalgPass());
  // Elementwise fusion merges linalg.generic ops only: a transpose in a fusion must be a
  // generic with a permuted map to merge with its producers and consumers.
  pm.addNestedPass<func::FuncOp>(createLinalgGeneralizeNamedOpsPass());
  pm.addNestedPass<func::FuncOp>(
      createKilnFuseGenericsPass({.broadcasts = options.fuseThroughBroadcasts,
                                  .recompute = options.recomputeInRowKernels}));
  // Row fusions (softmax, layer_norm) become a loop over tiles of rows with their
  // reductions inside; after bufferization the scf.forall is an scf.parallel like
  // every other kernel loop.
  if (options.tileRows)
    pm.addNestedPass<func::FuncOp>(createKilnTileRowsPass());
  pm.addNestedPass<func::FuncOp>(std::make_unique<DistinctKernelResults>());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  // A kernel with `?` dims allocates its results with run-time sizes: they become the
  // out-parameters too, rather than scratch copied into them.
  outParams.hoistDynamicAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  if (options.collapseDims)
    pm.addNestedPass<func::FuncOp>(createKilnCollapseDimsPass());
  // What is still allocated is scratch (f64 accumulators, intermediates linalg did
  // not fuse away): free it before the kernel returns, or every call leaks it.
  bufferization::buildBufferDeallocationPipeline(pm);
}

// Kernels on the CPU: the shared front half, then parallel loops (the large
// ones run on the thread pool), math by polynomials, LLVM with one bare pointer
// per buffer. LLVM's loop vectorizer (O3 in JitEngine) widens the innermost
// loops; see docs/ARCHITECTURE.md.
static void buildKernelLoweringPipeline(OpPassManager &pm, bool barePointers) {
  buildKernelBufferizationPipeline(pm, {.tileRows = true});
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createKilnPromoteAccumulatorsPass());
  pm.addPass(createKilnParallelizePass());
  // Every loop left runs serially now: a tile's scratch is allocated once per chunk.
  pm.addNestedPass<func::FuncOp>(createKilnHoistScratchPass());
  pm.addNestedPass<func::FuncOp>(createKilnApproximateMathPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  // The offsets of tiles (kiln-tile-rows' subviews) come out as affine.apply.
  pm.addPass(createLowerAffinePass());
  // Integer powers become loops (math-to-funcs), what kiln-approximate-math
  // left (powf, f64) libm calls, the rest LLVM intrinsics; memref, arith, func and cf
  // to LLVM in the same conversion (KernelsToLLVM.cpp).
  pm.addPass(createKernelsToLLVMPass(barePointers));
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void buildCpuLoweringPipeline(OpPassManager &pm, const CpuLoweringOptions &options) {
  pm.addPass(createKilnLowerHostPass({options.timeKernels}));
  OpPassManager &kernels = pm.nest<ModuleOp>();
  kernels.addPass(createKilnSplitKernelModulesPass());
  buildKernelLoweringPipeline(kernels.nest<ModuleOp>(), /*barePointers=*/true);
  kernels.addPass(createKilnJoinKernelModulesPass());
  pm.addPass(createKilnMergeKernelsPass());
}

void buildCpuDynamicKernelPipeline(OpPassManager &pm) {
  buildKernelLoweringPipeline(pm, /*barePointers=*/false);
}

// Tools load every external model (InitAllDialects.h); the runtime's context
// only these, so anything the pipeline's passes query must be listed. Without
// the memref allocation model, buffer-results-to-out-params cannot see that a
// kernel's result is a fresh allocation and copies it into the out-parameter
// instead of writing there (a malloc, a second pass over the data and page
// faults per call).
void registerCpuPipelineDependencies(DialectRegistry &registry) {
  memref::registerAllocationOpInterfaceExternalModels(registry);
  // The deallocation pipeline asks every op that passes memrefs through for its
  // model; these are the dialects whose ops can at that point.
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // kiln-tile-rows tiles linalg ops through their TilingInterface models, and
  // the tiling reasons about slice sizes through the value-bounds models.
  linalg::registerTilingInterfaceExternalModels(registry);
  tensor::registerTilingInterfaceExternalModels(registry);
  affine::registerValueBoundsOpInterfaceExternalModels(registry);
  arith::registerValueBoundsOpInterfaceExternalModels(registry);
  tensor::registerValueBoundsOpInterfaceExternalModels(registry);
}

void registerCpuPipeline() {
  registerKernelsToLLVMPass();
  PassPipelineRegistration<>(
      "kiln-cpu-pipeline",
      "a traced program to one LLVM dialect module for the host CPU: simplify, "
      "fuse, outline kernels, plan memory, lower host and kernels, merge",
      [](OpPassManager &pm) {
        buildCpuPlanningPipeline(pm);
        buildCpuLoweringPipeline(pm);
      });
}

} // namespace mlir::kiln
