// kiln-gpu-row-kernels: a row fusion kernel as one launch, a thread block per row running
// the kernel's ops in order (see Passes.td).
#include "dialect/KilnDialect.h"
#include "passes/GpuBlockCode.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNGPUROWKERNELSPASS
#include "passes/Passes.h.inc"

namespace {

using namespace gpu_block;

// One op of the kernel: its loop dims that are the rows, and its folds where the block
// folds each row's reduced elements together (else its threads split the row's kept
// elements, each looping over the reduced ones).
struct Step {
  linalg::GenericOp op;
  SmallVector<unsigned> rowDims;
  std::optional<SmallVector<Fold>> folds;
};

struct GpuRowKernels : impl::KilnGpuRowKernelsPassBase<GpuRowKernels> {
  using KilnGpuRowKernelsPassBase::KilnGpuRowKernelsPassBase;

  // The steps of the kernel `block` holds and the rows' sizes, or nothing where it is not
  // a row kernel this pass can run: generics on static buffers, every buffer a generic
  // writes read and written by every op at its own row only.
  std::optional<SmallVector<Step>> stepsOf(Block &block, int64_t rowDims, SmallVector<int64_t> &rows,
                                           int64_t &work) {
    SmallVector<linalg::GenericOp> generics;
    for (Operation &op : block) {
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        generics.push_back(generic);
      else if (auto alloc = dyn_cast<memref::AllocOp>(op); alloc && alloc.getType().hasStaticShape())
        continue;
      else if (isa<memref::DeallocOp, func::ReturnOp>(op))
        continue;
      else if (isa<ViewLikeOpInterface>(op) || op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
        return std::nullopt;
    }
    if (generics.size() < 2)
      return std::nullopt;
    DenseSet<Value> written;
    for (linalg::GenericOp op : generics)
      for (Value init : op.getDpsInits())
        written.insert(init);
    SmallVector<Step> steps;
    work = 1;
    for (linalg::GenericOp op : generics) {
      SmallVector<int64_t> sizes = op.getStaticLoopRanges();
      if (!op.hasPureBufferSemantics() || llvm::any_of(sizes, ShapedType::isDynamic) ||
          op.getNumLoops() != op.getNumParallelLoops() + op.getNumReductionLoops())
        return std::nullopt;
      Step step{op, {}, std::nullopt};
      AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
      if (out.getNumResults() < unsigned(rowDims))
        return std::nullopt;
      SmallVector<int64_t> rowSizes;
      for (int64_t i = 0; i < rowDims; ++i) {
        auto dim = dyn_cast<AffineDimExpr>(out.getResult(i));
        if (!dim || op.getIteratorTypesArray()[dim.getPosition()] != utils::IteratorType::parallel)
          return std::nullopt;
        step.rowDims.push_back(dim.getPosition());
        rowSizes.push_back(sizes[dim.getPosition()]);
      }
      if (rows.empty())
        rows = rowSizes;
      if (rows != rowSizes)
        return std::nullopt;
      for (OpOperand &operand : op->getOpOperands()) {
        if (!written.contains(operand.get()))
          continue;
        AffineMap map = op.getMatchingIndexingMap(&operand);
        auto shape = cast<MemRefType>(operand.get().getType()).getShape();
        if (map.getNumResults() < unsigned(rowDims))
          return std::nullopt;
        for (int64_t i = 0; i < rowDims; ++i)
          if (map.getResult(i) != getAffineDimExpr(step.rowDims[i], op.getContext()) || shape[i] != rows[i])
            return std::nullopt;
      }
      int64_t kept = 1, reduced = 1;
      for (auto [d, type] : llvm::enumerate(op.getIteratorTypesArray())) {
        if (type == utils::IteratorType::reduction)
          reduced *= sizes[d];
        else if (!llvm::is_contained(step.rowDims, unsigned(d)))
          kept *= sizes[d];
      }
      if (kept == 1 && reduced >= 32)
        step.folds = foldsOf(op);
      work = std::max(work, step.folds ? reduced : kept);
      steps.push_back(std::move(step));
    }
    return steps;
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto rowDims = func->getAttrOfType<IntegerAttr>(KilnDialect::getRowDimsAttrName());
    if (!rowDims || rowDims.getInt() < 1 || !func.getBody().hasOneBlock())
      return;
    Block &block = func.getBody().front();
    SmallVector<int64_t> rows;
    int64_t work = 1;
    std::optional<SmallVector<Step>> steps = stepsOf(block, rowDims.getInt(), rows, work);
    if (!steps)
      return;
    const int64_t threads = threadsFor(work, blockSize);
    MLIRContext *context = &getContext();
    // Scratch is allocated before the launch and freed after it.
    SmallVector<Operation *> allocs, deallocs;
    for (Operation &op : block) {
      if (isa<memref::AllocOp>(op))
        allocs.push_back(&op);
      else if (isa<memref::DeallocOp>(op))
        deallocs.push_back(&op);
    }
    for (Operation *alloc : llvm::reverse(allocs))
      alloc->moveBefore(&block.front());
    for (Operation *dealloc : deallocs)
      dealloc->moveBefore(block.getTerminator());
    linalg::GenericOp first = steps->front().op;
    Location loc = first.getLoc();
    OpBuilder b(first);
    auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
    int64_t rowCount = 1;
    for (int64_t size : rows)
      rowCount *= size;
    Value zero = index(0), one = index(1);
    auto blocks = scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{index(rowCount)}, ValueRange{one});
    b.setInsertionPointToStart(blocks.getBody());
    auto threadLoop = scf::ParallelOp::create(b, loc, ValueRange{zero}, ValueRange{index(threads)}, ValueRange{one});
    (void)gpu::setMappingAttr(blocks, {mapTo(context, gpu::Processor::BlockX)});
    (void)gpu::setMappingAttr(threadLoop, {mapTo(context, gpu::Processor::ThreadX)});
    b.setInsertionPointToStart(threadLoop.getBody());
    Value thread = threadLoop.getInductionVars()[0];
    SmallVector<Value> row = delinearize(b, loc, blocks.getInductionVars()[0], rows);
    for (auto [i, step] : llvm::enumerate(*steps)) {
      // What one op wrote in this row, the next may read from another thread.
      if (i > 0)
        gpu::BarrierOp::create(b, loc);
      linalg::GenericOp op = step.op;
      SmallVector<Value> ivs(op.getNumLoops());
      for (auto [d, iv] : llvm::zip(step.rowDims, row))
        ivs[d] = iv;
      if (step.folds) {
        // The row's one kept element: its other kept dims have size 1.
        for (auto [d, type] : llvm::enumerate(op.getIteratorTypesArray()))
          if (type == utils::IteratorType::parallel && !ivs[d])
            ivs[d] = index(0);
        emitBlockFold(b, op, *step.folds, ivs, thread, threads);
      } else {
        emitStrided(b, op, step.rowDims, ivs, thread, threads);
      }
    }
    for (Step &step : *steps)
      step.op.erase();
  }
};

} // namespace
} // namespace mlir::kiln
