// kiln-parallelize: large scf.parallel loops become chunk functions that the runtime
// runs on its thread pool through kiln_rt_parallel_for.
#include "passes/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNPARALLELIZEPASS
#include "passes/Passes.h.inc"

namespace {

constexpr StringLiteral kParallelFor = "kiln_rt_parallel_for";
// The iterations a loop of unknown trip count is assumed to run: many.
constexpr int64_t kUnknownTrips = std::numeric_limits<int64_t>::max();

int64_t saturatingMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  return a > kUnknownTrips / b ? kUnknownTrips : a * b;
}

// Iterations of one loop dimension, or kUnknownTrips when not constant.
int64_t tripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return kUnknownTrips;
  return *u <= *l ? 0 : (*u - *l + *s - 1) / *s;
}

int64_t iterations(scf::ParallelOp loop) {
  int64_t total = 1;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
    total = saturatingMul(total, tripCount(lb, ub, step));
  return total;
}

// Iterations of the deepest loop nest in `region`, at least 1: the work of one
// iteration of the loop that holds it.
int64_t bodyWork(Region &region) {
  int64_t work = 1;
  for (Block &block : region)
    for (Operation &op : block) {
      int64_t trips = 1;
      if (auto loop = dyn_cast<scf::ForOp>(op))
        trips = tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
      else if (auto loop = dyn_cast<scf::ParallelOp>(op))
        trips = iterations(loop);
      for (Region &inner : op.getRegions())
        work = std::max(work, saturatingMul(std::max<int64_t>(trips, 1), bodyWork(inner)));
    }
  return work;
}

// Whether some loop in or of `op` has a trip count that is not constant.
bool hasDynamicTrips(Operation *op) {
  bool dynamic = false;
  op->walk([&](Operation *inner) {
    if (auto loop = dyn_cast<scf::ForOp>(inner))
      dynamic |= tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()) ==
                 kUnknownTrips;
    else if (auto loop = dyn_cast<scf::ParallelOp>(inner))
      for (auto [lb, ub, step] :
           llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
        dynamic |= tripCount(lb, ub, step) == kUnknownTrips;
  });
  return dynamic;
}

// The work of a loop nest as index arithmetic built before `outer`: the run-time
// counterpart of iterations times bodyWork, for loops whose trip counts are not all
// constant. Null where a bound is computed inside `outer` (it cannot be known
// before the loop runs).
class RuntimeWork {
public:
  RuntimeWork(scf::ParallelOp outer) : outer(outer), b(outer) { b.setListener(&built); }

  // Null, with nothing left built, where the work cannot be computed.
  Value total() {
    Value trips = iterations(outer);
    Value work = trips ? bodyWork(outer.getRegion()) : Value();
    if (work)
      return mul(trips, work);
    for (Operation *op : llvm::reverse(built.ops))
      op->erase();
    return {};
  }

private:
  struct Built : OpBuilder::Listener {
    void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
      ops.push_back(op);
    }
    SmallVector<Operation *> ops;
  };

  Value constant(int64_t value) {
    return arith::ConstantIndexOp::create(b, outer.getLoc(), value);
  }
  Value mul(Value x, Value y) {
    if (isConstantIntValue(x, 1))
      return y;
    if (isConstantIntValue(y, 1))
      return x;
    return arith::MulIOp::create(b, outer.getLoc(), x, y);
  }

  // max(ceil((ub - lb) / step), 0). A bound computed inside `outer` (a tile's rows,
  // cut short at the end) counts at its largest, where that is a constant (the tile
  // size); else the trip count is null.
  Value tripsOf(Value lb, Value ub, Value step) {
    int64_t trips = tripCount(lb, ub, step);
    if (trips != kUnknownTrips)
      return constant(trips);
    if (llvm::any_of(ValueRange{lb, ub, step}, [&](Value bound) {
          return outer->isAncestor(bound.getParentRegion()->getParentOp());
        })) {
      std::optional<int64_t> l = getConstantIntValue(lb), s = getConstantIntValue(step);
      FailureOr<int64_t> u = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::UB, ub, /*stopCondition=*/nullptr, /*closedUB=*/true);
      if (!l || !s || *s <= 0 || failed(u))
        return {};
      return constant(*u < *l ? 0 : (*u - *l + *s - 1) / *s);
    }
    Location loc = outer.getLoc();
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value count = arith::CeilDivSIOp::create(b, loc, span, step);
    return arith::MaxSIOp::create(b, loc, count, constant(0));
  }

  Value iterations(scf::ParallelOp loop) {
    Value total = constant(1);
    for (auto [lb, ub, step] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      Value trips = tripsOf(lb, ub, step);
      if (!trips)
        return {};
      total = mul(total, trips);
    }
    return total;
  }

  // As bodyWork: the most work of one op's loop nest, at least 1.
  Value bodyWork(Region &region) {
    Value work = constant(1);
    for (Block &block : region)
      for (Operation &op : block) {
        if (op.getNumRegions() == 0)
          continue;
        Value trips = constant(1);
        if (auto loop = dyn_cast<scf::ForOp>(op))
          trips = tripsOf(loop.getLowerBound(), loop.getUpperBound(), loop.getStep());
        else if (auto loop = dyn_cast<scf::ParallelOp>(op))
          trips = iterations(loop);
        if (!trips)
          return {};
        trips = arith::MaxSIOp::create(b, outer.getLoc(), trips, constant(1));
        for (Region &inner : op.getRegions()) {
          Value innerWork = bodyWork(inner);
          if (!innerWork)
            return {};
          work = arith::MaxSIOp::create(b, outer.getLoc(), work, mul(trips, innerWork));
        }
      }
    return work;
  }

  scf::ParallelOp outer;
  OpBuilder b;
  Built built;
};

bool isConstant(Value value) {
  Operation *def = value.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>();
}

// Outlines one scf.parallel into a chunk function and a kiln_rt_parallel_for call.
class Outliner {
public:
  Outliner(func::FuncOp function, SymbolTable &symbols, const LLVMTypeConverter &types)
      : function(function), symbols(symbols), types(types),
        ptr(LLVM::LLVMPointerType::get(function.getContext())) {}

  // Fails (leaving the loop as it is) when a captured value has no LLVM form. With
  // `large` (an i1 computed before the loop), the thread pool runs the chunk only where it
  // holds; else the chunk runs all iterations on the calling thread.
  LogicalResult outline(scf::ParallelOp loop, unsigned number, Value large) {
    // The outlined dimension: the first that does not run once, so loops over
    // shapes with leading 1s still split.
    unsigned dim = 0;
    for (unsigned d = 0; d + 1 < loop.getNumLoops(); ++d, ++dim)
      if (tripCount(loop.getLowerBound()[d], loop.getUpperBound()[d], loop.getStep()[d]) != 1)
        break;
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(loop.getRegion(), captured);
    captured.insert(loop.getOperands().begin(), loop.getOperands().end());
    SmallVector<Value> passed;
    SmallVector<Type> fields;
    for (Value value : captured) {
      if (isConstant(value))
        continue;
      Type field = fieldType(value.getType());
      if (!field)
        return failure();
      passed.push_back(value);
      fields.push_back(field);
    }
    auto capturesType = LLVM::LLVMStructType::getLiteral(function.getContext(), fields);
    func::FuncOp chunk = buildChunk(loop, dim, number, captured, passed, capturesType);
    replaceLoop(loop, dim, chunk, passed, capturesType, large);
    return success();
  }

private:
  // How a captured value travels in the captures struct; null if it cannot.
  Type fieldType(Type type) const {
    if (isa<MemRefType>(type) || type.isIndex())
      return types.convertType(type);
    if (type.isIntOrFloat() || isa<LLVM::LLVMPointerType>(type))
      return type;
    return {};
  }

  func::FuncOp buildChunk(scf::ParallelOp loop, unsigned dim, unsigned number,
                          const SetVector<Value> &captured, ArrayRef<Value> passed,
                          Type capturesType) {
    Location loc = loop.getLoc();
    OpBuilder b(function);
    b.setInsertionPointAfter(lastChunk ? lastChunk : function.getOperation());
    IndexType index = b.getIndexType();
    auto chunk = func::FuncOp::create(
        b, loc, (function.getSymName() + "_chunk_" + Twine(number)).str(),
        b.getFunctionType({ptr, index, index}, {}));
    chunk.setPrivate();
    symbols.insert(chunk);
    lastChunk = chunk;
    Block *entry = chunk.addEntryBlock();
    b.setInsertionPointToStart(entry);
    Value captures = entry->getArgument(0);

    IRMapping mapping;
    for (Value value : captured)
      if (isConstant(value))
        mapping.map(value, b.clone(*value.getDefiningOp())->getResult(0));
    for (auto [k, value] : llvm::enumerate(passed)) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, capturesType, captures,
                                       ArrayRef<LLVM::GEPArg>{int32_t(0), int32_t(k)});
      Value field = LLVM::LoadOp::create(b, loc, fieldType(value.getType()), slot);
      if (isa<MemRefType>(value.getType()))
        field = UnrealizedConversionCastOp::create(b, loc, value.getType(), field).getResult(0);
      else if (value.getType().isIndex())
        field = arith::IndexCastOp::create(b, loc, index, field);
      mapping.map(value, field);
    }

    // for k in [begin, end): iv[dim] = lb + k * step; the dims before run once,
    // the dims after stay an scf.parallel.
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto serial = scf::ForOp::create(b, loc, entry->getArgument(1), entry->getArgument(2), one);
    func::ReturnOp::create(b, loc);
    b.setInsertionPoint(serial.getBody()->getTerminator());
    auto bound = [&](ValueRange values, unsigned d) { return mapping.lookup(values[d]); };
    for (unsigned d = 0; d < dim; ++d)
      mapping.map(loop.getInductionVars()[d], bound(loop.getLowerBound(), d));
    Value scaled = arith::MulIOp::create(b, loc, serial.getInductionVar(), bound(loop.getStep(), dim));
    mapping.map(loop.getInductionVars()[dim],
                arith::AddIOp::create(b, loc, bound(loop.getLowerBound(), dim), scaled));
    if (dim + 1 < loop.getNumLoops()) {
      auto lookupAll = [&](ValueRange values) {
        SmallVector<Value> mapped;
        for (Value v : values.drop_front(dim + 1))
          mapped.push_back(mapping.lookup(v));
        return mapped;
      };
      auto inner = scf::ParallelOp::create(b, loc, lookupAll(loop.getLowerBound()),
                                           lookupAll(loop.getUpperBound()),
                                           lookupAll(loop.getStep()));
      SmallVector<Value> outerIvs = loop.getInductionVars(), innerIvs = inner.getInductionVars();
      mapping.map(ArrayRef<Value>(outerIvs).drop_front(dim + 1), innerIvs);
      b.setInsertionPoint(inner.getBody()->getTerminator());
    }
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    return chunk;
  }

  // Stores the captures in a stack struct and calls kiln_rt_parallel_for over the
  // outlined dimension's iterations (where `large` holds, if given; else the chunk itself).
  void replaceLoop(scf::ParallelOp loop, unsigned dim, func::FuncOp chunk,
                   ArrayRef<Value> passed, Type capturesType, Value large) {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    Type i64 = b.getI64Type();
    Value captures;
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&function.getBody().front());
      Value one = LLVM::ConstantOp::create(b, loc, i64, 1);
      captures = LLVM::AllocaOp::create(b, loc, ptr, capturesType, one);
    }
    for (auto [k, value] : llvm::enumerate(passed)) {
      Value field = value;
      if (isa<MemRefType>(value.getType()))
        field = UnrealizedConversionCastOp::create(b, loc, fieldType(value.getType()), value)
                    .getResult(0);
      else if (value.getType().isIndex())
        field = arith::IndexCastOp::create(b, loc, i64, value);
      Value slot = LLVM::GEPOp::create(b, loc, ptr, capturesType, captures,
                                       ArrayRef<LLVM::GEPArg>{int32_t(0), int32_t(k)});
      LLVM::StoreOp::create(b, loc, field, slot);
    }
    // Iterations of the outlined dimension: ceil((ub - lb) / step), at least 0.
    Value lb = loop.getLowerBound()[dim], ub = loop.getUpperBound()[dim],
          step = loop.getStep()[dim];
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value trips = arith::CeilDivSIOp::create(b, loc, span, step);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    trips = arith::MaxSIOp::create(b, loc, trips, zero);
    if (large) {
      auto branch = scf::IfOp::create(b, loc, large, /*withElseRegion=*/true);
      b.setInsertionPoint(branch.elseBlock()->getTerminator());
      func::CallOp::create(b, loc, chunk, ValueRange{captures, zero, trips});
      b.setInsertionPoint(branch.thenBlock()->getTerminator());
    }
    Value fn = func::ConstantOp::create(b, loc, chunk.getFunctionType(), chunk.getSymName());
    func::CallOp::create(b, loc, parallelFor(chunk.getFunctionType()), TypeRange{},
                         ValueRange{fn, captures, arith::IndexCastOp::create(b, loc, i64, zero),
                                    arith::IndexCastOp::create(b, loc, i64, trips)});
    loop.erase();
  }

  // The declaration of kiln_rt_parallel_for(fn, captures, begin, end).
  StringRef parallelFor(FunctionType chunkType) {
    if (!symbols.lookup(kParallelFor)) {
      OpBuilder b(function);
      Type i64 = b.getI64Type();
      auto declaration = func::FuncOp::create(
          b, function.getLoc(), kParallelFor,
          b.getFunctionType({chunkType, ptr, i64, i64}, {}));
      declaration.setPrivate();
      symbols.insert(declaration);
    }
    return kParallelFor;
  }

  func::FuncOp function;
  SymbolTable &symbols;
  const LLVMTypeConverter &types;
  Type ptr;
  Operation *lastChunk = nullptr;  // chunks follow their function in loop order
};

struct KilnParallelizePass : impl::KilnParallelizePassBase<KilnParallelizePass> {
  using Base::Base;

  // A loop whose work depends on run-time sizes (a kernel with `?` dims) goes
  // parallel only when the sizes make it large: `work >= min-elements`, built before
  // the loop. Null where its work cannot be computed before it runs: then it counts
  // as large.
  Value largeAtRunTime(scf::ParallelOp loop) {
    Value work = RuntimeWork(loop).total();
    if (!work)
      return {};
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, work,
                                 arith::ConstantIndexOp::create(b, loc, minElements));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    LLVMTypeConverter types(&getContext());
    for (func::FuncOp function : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (function.isExternal())
        continue;
      SmallVector<scf::ParallelOp> loops;
      function.walk<WalkOrder::PreOrder>([&](scf::ParallelOp loop) {
        if (loop.getInitVals().empty() &&
            saturatingMul(iterations(loop), bodyWork(loop.getRegion())) >= minElements)
          loops.push_back(loop);
        return WalkResult::skip();  // loops inside stay inside
      });
      Outliner outliner(function, symbols, types);
      unsigned number = 0;
      for (scf::ParallelOp loop : loops) {
        Value large = hasDynamicTrips(loop) ? largeAtRunTime(loop) : Value();
        if (succeeded(outliner.outline(loop, number, large)))
          ++number;
        else if (large)
          large.getDefiningOp()->erase();  // the loop stays as it was: serial
      }
    }
  }
};

} // namespace
} // namespace mlir::kiln
