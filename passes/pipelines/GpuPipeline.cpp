// kiln-gpu-pipeline: a traced program's fusion kernels to PTX (ARCHITECTURE.md §6,
// "Compiler passes"). First slice: kernels only; the host schedule is left as
// planning left it.
#include "dialect/KilnDialect.h"
#include "passes/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <numeric>

namespace mlir::kiln {
namespace {


// Fusion kernels move into a nested module `kiln_kernels` (as kiln-lower-host
// does on the CPU), so the bufferization and GPU passes see the kernels alone,
// without the host's kiln ops. The host keeps a private declaration of each,
// so its calls still verify; library kernels stay where they are.
struct SplitGpuKernels : PassWrapper<SplitGpuKernels, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SplitGpuKernels)
  StringRef getArgument() const final { return "kiln-gpu-split-kernels"; }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>()) {
      auto kind = func->getAttrOfType<StringAttr>(KilnDialect::getKernelAttrName());
      if (kind && kind.getValue() == "fusion" && !func.isExternal())
        kernels.push_back(func);
    }
    if (kernels.empty())
      return;
    OpBuilder builder(module.getBodyRegion());
    builder.setInsertionPointToEnd(module.getBody());
    auto nested = ModuleOp::create(builder, module.getLoc(), StringRef(kGpuKernelsModule));
    for (func::FuncOp kernel : kernels) {
      builder.setInsertionPoint(kernel);
      auto declaration = func::FuncOp::create(builder, kernel.getLoc(), kernel.getSymName(),
                                              kernel.getFunctionType());
      declaration.setPrivate();
      declaration->setAttr(KilnDialect::getKernelAttrName(),
                           kernel->getAttr(KilnDialect::getKernelAttrName()));
      kernel.setPublic();
      kernel->moveBefore(nested.getBody(), nested.getBody()->end());
    }
  }
};

// Linalg on buffers, made ready for one scf.parallel per op whose every
// iteration is one GPU thread: each op's parallel dims first (a column
// reduction's reduced dim inside, so the loop nest is scf.parallel { scf.for }
// rather than a host loop around a parallel one), copies as linalg.copy (a
// memref.copy between device buffers would stay a host op), and an op with no
// parallel dim (a full reduction, a 0-d op) inside a one-iteration scf.parallel,
// so it runs on the device too (on one thread).
struct PrepareGpuLoops
    : PassWrapper<PrepareGpuLoops, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrepareGpuLoops)
  StringRef getArgument() const final { return "kiln-gpu-prepare-loops"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<linalg::LinalgDialect, scf::SCFDialect>();
  }
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, ValueRange{copy.getSource()},
                                                  ValueRange{copy.getTarget()});
    }
    SmallVector<linalg::GenericOp> generics;
    func.walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics) {
      SmallVector<unsigned> order;
      auto iterators = op.getIteratorTypesArray();
      for (auto [i, type] : llvm::enumerate(iterators))
        if (type == utils::IteratorType::parallel)
          order.push_back(i);
      for (auto [i, type] : llvm::enumerate(iterators))
        if (type != utils::IteratorType::parallel)
          order.push_back(i);
      bool identity = llvm::all_of(llvm::enumerate(order), [](auto pair) {
        return pair.index() == pair.value();
      });
      if (identity)
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op.emitOpError("kiln-gpu-pipeline could not move its parallel dims outermost");
        return signalPassFailure();
      }
    }
    SmallVector<linalg::LinalgOp> serial;
    func.walk([&](linalg::LinalgOp op) {
      if (op.getNumParallelLoops() == 0 && !op->getParentOfType<scf::ParallelOp>())
        serial.push_back(op);
    });
    for (linalg::LinalgOp op : serial) {
      rewriter.setInsertionPoint(op);
      Location loc = op.getLoc();
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      auto loop = scf::ParallelOp::create(rewriter, loc, ValueRange{zero}, ValueRange{one},
                                          ValueRange{one});
      op->moveBefore(loop.getBody()->getTerminator());
    }
  }
};

// Each outermost scf.parallel of a kernel becomes one launch: its dims are
// collapsed into one (row-major, so consecutive threads take consecutive
// elements of the innermost dim and loads coalesce), tiled by the block size,
// and the tiles mapped to blocks (x), the elements of a tile to threads (x).
// One thread per element of an elementwise op, per output element of a
// reduction (which loops over the reduced dims itself). Loops nested inside
// (none after PrepareGpuLoops, in practice) run sequentially in the thread.
// A loop of at least 2^20 iterations, a multiple of 4 blocks, gives each
// thread 4 iterations instead, at a stride of the block size (each load still
// coalesces across the block), cloned in straight-line code with the stores
// after all the loads, so a thread has all its loads in flight together: one
// element a thread left the memory system idle (bench/cuda_step's gelu chain
// ran at 0.58-0.61 of the card's copy bandwidth on an H200, 0.71-0.73 with 4).
struct MapGpuLoops : PassWrapper<MapGpuLoops, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MapGpuLoops)
  MapGpuLoops() = default;
  MapGpuLoops(const MapGpuLoops &other) : PassWrapper(other), blockSize(other.blockSize) {}
  explicit MapGpuLoops(int64_t blockSize) : blockSize(blockSize) {}
  StringRef getArgument() const final { return "kiln-gpu-map-loops"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect, affine::AffineDialect, arith::ArithDialect>();
  }
  int64_t blockSize = 256;
  static constexpr int64_t kPerThread = 4;
  static constexpr int64_t kCoarsenFrom = int64_t(1) << 20;

  gpu::ParallelLoopDimMappingAttr mapTo(gpu::Processor processor) {
    AffineMap identity = AffineMap::getMultiDimIdentityMap(1, &getContext());
    return gpu::ParallelLoopDimMappingAttr::get(&getContext(), processor, identity, identity);
  }

  // Loops nested in a thread's body run sequentially in it.
  void sequentialInside(scf::ParallelOp threads) {
    threads.walk([&](scf::ParallelOp inner) {
      if (inner == threads)
        return;
      SmallVector<gpu::ParallelLoopDimMappingAttr> sequential(inner.getNumLoops(),
                                                              mapTo(gpu::Processor::Sequential));
      (void)gpu::setMappingAttr(inner, sequential);
    });
  }

  // Whether a loop body is loads and side-effect-free ops, then stores, nothing
  // nested: a body whose stores may move after the next iteration's loads.
  static bool storesLast(Block &body) {
    bool stored = false;
    for (Operation &op : body.without_terminator()) {
      if (isa<memref::StoreOp>(op)) {
        stored = true;
      } else if (op.getNumRegions() != 0) {
        return false;
      } else if (isa<memref::LoadOp>(op)) {
        if (stored)
          return false;
      } else if (!isMemoryEffectFree(&op)) {
        return false;
      }
    }
    return true;
  }

  // The 1-D loop 0..trip step 1 as blocks of kPerThread * blockSize iterations,
  // thread t of block b taking b + t + s * blockSize for s < kPerThread.
  LogicalResult coarsen(IRRewriter &rewriter, scf::ParallelOp loop, int64_t trip) {
    Location loc = loop.getLoc();
    rewriter.setInsertionPoint(loop);
    auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(rewriter, loc, v); };
    Value zero = index(0), one = index(1), threadCount = index(blockSize);
    auto blocks = scf::ParallelOp::create(rewriter, loc, ValueRange{zero}, ValueRange{index(trip)},
                                          ValueRange{index(kPerThread * blockSize)});
    rewriter.setInsertionPointToStart(blocks.getBody());
    auto threads = scf::ParallelOp::create(rewriter, loc, ValueRange{zero}, ValueRange{threadCount},
                                           ValueRange{one});
    rewriter.setInsertionPointToStart(threads.getBody());
    Value first = arith::AddIOp::create(rewriter, loc, blocks.getInductionVars()[0],
                                        threads.getInductionVars()[0]);
    // Where the body only loads, computes and then stores, every copy's stores go
    // after all loads: the iterations of an scf.parallel are independent, and LLVM
    // cannot move a load above a store that may alias it.
    const bool sinkStores = storesLast(*loop.getBody());
    SmallVector<Operation *> stores;
    for (int64_t s = 0; s < kPerThread; ++s) {
      IRMapping map;
      map.map(loop.getInductionVars()[0],
              s == 0 ? first : arith::AddIOp::create(rewriter, loc, first, index(s * blockSize)).getResult());
      for (Operation &op : loop.getBody()->without_terminator()) {
        Operation *copy = rewriter.clone(op, map);
        if (sinkStores && isa<memref::StoreOp>(copy))
          stores.push_back(copy);
      }
    }
    for (Operation *store : stores)
      store->moveBefore(threads.getBody()->getTerminator());
    rewriter.eraseOp(loop);
    if (failed(gpu::setMappingAttr(blocks, {mapTo(gpu::Processor::BlockX)})) ||
        failed(gpu::setMappingAttr(threads, {mapTo(gpu::Processor::ThreadX)})))
      return failure();
    sequentialInside(threads);
    return success();
  }

  // The outermost loops not mapped yet (kiln-gpu-block-reductions maps its own).
  SmallVector<scf::ParallelOp> outermost() {
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>() && !op->hasAttr(gpu::getMappingAttrName()))
        loops.push_back(op);
    });
    return loops;
  }

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);
    // Iterations of each loop where its bounds are constants (read before the
    // collapse, which leaves a product of them); the collapse keeps the order.
    SmallVector<std::optional<int64_t>> trips;
    for (scf::ParallelOp loop : outermost()) {
      std::optional<int64_t> total = 1;
      for (auto [lb, ub, step] :
           llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
        std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                               s = getConstantIntValue(step);
        if (!total || !l || !u || !s || *s <= 0)
          total = std::nullopt;
        else
          *total *= std::max<int64_t>(0, (*u - *l + *s - 1) / *s);
      }
      trips.push_back(total);
    }
    for (scf::ParallelOp loop : outermost()) {
      if (loop.getNumLoops() < 2)
        continue;
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0u);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
    }
    for (auto [loop, trip] : llvm::zip_equal(outermost(), trips)) {
      std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()[0]),
                             step = getConstantIntValue(loop.getStep()[0]);
      if (trip && *trip >= kCoarsenFrom && *trip % (kPerThread * blockSize) == 0 && lower == 0 &&
          step == 1 && loop.getNumReductions() == 0) {
        if (failed(coarsen(rewriter, loop, *trip)))
          return signalPassFailure();
        continue;
      }
      // A loop shorter than a block gets a block of its own length.
      int64_t tile = blockSize;
      if (trip)
        tile = std::max<int64_t>(1, std::min(tile, *trip));
      auto [blocks, threads] = scf::tileParallelLoop(loop, {tile}, /*noMinMaxBounds=*/true);
      if (failed(gpu::setMappingAttr(blocks, {mapTo(gpu::Processor::BlockX)})) ||
          failed(gpu::setMappingAttr(threads, {mapTo(gpu::Processor::ThreadX)})))
        return signalPassFailure();
      sequentialInside(threads);
    }
  }
};

// The math the polynomial approximations leave (fma, fabs, floor, ...) as LLVM
// intrinsics, which the NVPTX backend selects as single instructions:
// convert-gpu-to-nvvm makes them libdevice calls (__nv_fmaf, ...), which
// gpu-module-to-binary can only resolve where the CUDA toolkit's libdevice is
// installed. Runs after convert-gpu-to-nvvm, which marks these intrinsics
// illegal. What is left (f64 exp, powf, ...) is linked from libdevice by
// gpu-module-to-binary. Then the math ops convert-gpu-to-nvvm leaves as they
// are (it skips the math dialect's own LLVM patterns and has none for integer
// math: math.absi of abs_i64) become LLVM intrinsics (llvm.abs: PTX abs.s64).
struct GpuMathIntrinsics
    : PassWrapper<GpuMathIntrinsics, OperationPass<gpu::GPUModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GpuMathIntrinsics)
  GpuMathIntrinsics() = default;
  GpuMathIntrinsics(const GpuMathIntrinsics &other)
      : PassWrapper(other), cudaHome(other.cudaHome) {}
  explicit GpuMathIntrinsics(std::string cudaHome) : cudaHome(std::move(cudaHome)) {}
  StringRef getArgument() const final { return "kiln-gpu-math-intrinsics"; }
  // The CUDA toolkit whose libdevice gpu-module-to-binary links (empty: none
  // found, so a kernel that still calls libdevice is an error here rather
  // than PTX with an unresolved .extern that ptxas rejects).
  std::string cudaHome;
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<LLVM::CallOp> calls;
    getOperation().walk([&](LLVM::CallOp call) { calls.push_back(call); });
    for (LLVM::CallOp call : calls) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee || call.getNumResults() != 1)
        continue;
      StringRef name = *callee;
      if (!name.consume_front("__nv_"))
        continue;
      name.consume_back("f");  // __nv_fmaf (f32) and __nv_fma (f64) alike
      Type type = call.getResult().getType();
      ValueRange args = call.getArgOperands();
      rewriter.setInsertionPoint(call);
      Value result;
      if (name == "fma" && args.size() == 3)
        result = LLVM::FMAOp::create(rewriter, call.getLoc(), type, args);
      else if (name == "fabs" && args.size() == 1)
        result = LLVM::FAbsOp::create(rewriter, call.getLoc(), type, args);
      else if (name == "floor" && args.size() == 1)
        result = LLVM::FFloorOp::create(rewriter, call.getLoc(), type, args);
      else if (name == "ceil" && args.size() == 1)
        result = LLVM::FCeilOp::create(rewriter, call.getLoc(), type, args);
      else if (name == "copysign" && args.size() == 2)
        result = LLVM::CopySignOp::create(rewriter, call.getLoc(), type, args);
      if (result)
        rewriter.replaceOp(call, result);
    }
    // Declarations nothing calls any more.
    for (auto func : llvm::make_early_inc_range(getOperation().getOps<LLVM::LLVMFuncOp>()))
      if (func.isExternal() && func.getName().starts_with("__nv_") &&
          SymbolTable::symbolKnownUseEmpty(func, getOperation()))
        func.erase();
    if (cudaHome.empty())
      for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>())
        if (func.isExternal() && func.getName().starts_with("__nv_")) {
          getOperation().emitError()
              << "kiln-gpu-pipeline: " << func.getName()
              << " needs CUDA's libdevice (nvvm/libdevice/libdevice.10.bc), found in "
                 "none of $KILN_CUDA_HOME, $CUDA_HOME, $CUDA_ROOT, $CUDA_PATH, "
                 "/usr/local/cuda (or the pipeline's cuda-home)";
          return signalPassFailure();
        }
    bool leftover = false;
    getOperation().walk([&](Operation *op) {
      leftover = leftover || isa<math::MathDialect>(op->getDialect());
    });
    if (!leftover)
      return;
    LLVMTypeConverter converter(&getContext());
    RewritePatternSet patterns(&getContext());
    populateMathToLLVMConversionPatterns(converter, patterns);
    ConversionTarget target(getContext());
    target.addLegalDialect<LLVM::LLVMDialect>();
    target.addIllegalDialect<math::MathDialect>();
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::string findCudaHome(const std::string &explicitHome) {
  auto hasLibdevice = [](const std::string &dir) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, "nvvm", "libdevice", "libdevice.10.bc");
    return !dir.empty() && llvm::sys::fs::is_regular_file(path);
  };
  if (!explicitHome.empty())
    return hasLibdevice(explicitHome) ? explicitHome : std::string();
  for (const char *env : {"KILN_CUDA_HOME", "CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"})
    if (const char *dir = std::getenv(env); dir && hasLibdevice(dir))
      return dir;
  return hasLibdevice("/usr/local/cuda") ? "/usr/local/cuda" : std::string();
}

void buildGpuPipeline(OpPassManager &pm, const GpuPipelineOptions &options) {
  buildCpuPlanningPipeline(pm);
  buildGpuKernelPipeline(pm, options);
}

void buildGpuKernelPipeline(OpPassManager &pm, const GpuPipelineOptions &options) {
  // Found once, when the pipeline is built: gpu-module-to-binary links its
  // libdevice (MLIR's own lookup reads only $CUDA_ROOT/$CUDA_HOME/$CUDA_PATH,
  // which a Bazel test or an embedding program may not have).
  const std::string cudaHome = findCudaHome(options.cudaHome);
  pm.addPass(std::make_unique<SplitGpuKernels>());
  OpPassManager &kernels = pm.nest<ModuleOp>();
  buildKernelBufferizationPipeline(kernels, {.tileRows = false,
                                                .collapseDims = false,
                                                .fuseThroughBroadcasts = true,
                                                .recomputeInRowKernels = true});
  kernels.addNestedPass<func::FuncOp>(createKilnGpuRowKernelsPass({.blockSize = options.blockSize}));
  kernels.addNestedPass<func::FuncOp>(
      createKilnGpuBlockReductionsPass({.blockSize = options.blockSize}));
  kernels.addNestedPass<func::FuncOp>(std::make_unique<PrepareGpuLoops>());
  kernels.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  kernels.addNestedPass<func::FuncOp>(createKilnPromoteAccumulatorsPass());
  // The approximations' own divisions as div.approx.f32: the rational tanh's IEEE
  // div.rn.f32 sequence kept bench/traced's gelu chain issue-bound at 0.71-0.73 of an
  // H200's copy bandwidth; with div.approx.f32 it ran at 0.96-0.99 (docs/BENCHMARKS.md).
  kernels.addNestedPass<func::FuncOp>(createKilnApproximateMathPass({.approximateDivision = true}));
  kernels.addNestedPass<func::FuncOp>(std::make_unique<MapGpuLoops>(options.blockSize));
  kernels.addPass(createConvertParallelLoopToGpuPass());
  // No canonicalization between kiln-gpu-prepare-loops and here: it would
  // inline the one-iteration scf.parallel of a serial op (back onto the host)
  // and merge the block and thread loops (dropping their mapping). After it,
  // launch bounds fold to constants on the host side, and what a kernel body
  // needs of the host's index arithmetic and constants is cloned into it
  // rather than passed as kernel parameters.
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createGpuLaunchSinkIndexComputationsPass());
  kernels.addPass(createGpuKernelOutliningPass());
  OpPassManager &device = kernels.nest<gpu::GPUModuleOp>();
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  device.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions toNVVM;
  toNVVM.useBarePtrCallConv = true;
  device.addPass(createConvertGpuOpsToNVVMOps(toNVVM));
  device.addPass(std::make_unique<GpuMathIntrinsics>(cudaHome));
  device.addPass(createCanonicalizerPass());
  device.addPass(createCSEPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  kernels.addPass(createGpuNVVMAttachTarget(target));
  GpuModuleToBinaryPassOptions toBinary;
  toBinary.compilationTarget = options.format;
  toBinary.toolkitPath = cudaHome;
  kernels.addPass(createGpuModuleToBinaryPass(toBinary));
}

void registerGpuPipelineDependencies(DialectRegistry &registry) {
  registerCpuPipelineDependencies(registry);
  // convert-gpu-to-nvvm lowers what is inside a gpu.func through each loaded
  // dialect's ConvertToLLVMPatternInterface.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  // nvvm-attach-target's attribute serializes a gpu.module through LLVM IR.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

namespace {
struct GpuPipelineCliOptions : PassPipelineOptions<GpuPipelineCliOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("NVVM target chip (sm_XX)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("NVPTX features; MLIR 22 needs PTX ISA 8.0 (+ptx80) for sm_90"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX text, no ptxas), bin "
                     "(cubin), fatbin"),
      llvm::cl::init("isa")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("threads per block of every launch"),
                            llvm::cl::init(256)};
  Option<std::string> cudaHome{
      *this, "cuda-home",
      llvm::cl::desc("CUDA toolkit whose nvvm/libdevice/libdevice.10.bc is linked "
                     "(default: $KILN_CUDA_HOME, $CUDA_HOME, $CUDA_ROOT, $CUDA_PATH, "
                     "/usr/local/cuda)"),
      llvm::cl::init("")};
};
} // namespace

void registerGpuPipeline() {
  PassPipelineRegistration<GpuPipelineCliOptions>(
      "kiln-gpu-pipeline",
      "a traced program's fusion kernels to PTX: the CPU pipeline's planning, "
      "kernels bufferized, one thread per element, gpu dialect, NVVM, gpu.binary",
      [](OpPassManager &pm, const GpuPipelineCliOptions &cli) {
        GpuPipelineOptions options;
        options.chip = cli.chip;
        options.features = cli.features;
        options.format = cli.format;
        options.blockSize = cli.blockSize;
        options.cudaHome = cli.cudaHome;
        buildGpuPipeline(pm, options);
      });
}

} // namespace mlir::kiln
