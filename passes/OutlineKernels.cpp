// kiln-outline-kernels: each fusion and library op becomes a kernel function.
#include "dialect/KilnOps.h"
#include "passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>
#include <string>

namespace mlir::kiln {
#define GEN_PASS_DEF_KILNOUTLINEKERNELSPASS
#include "passes/Passes.h.inc"

namespace {

// The attribute runtime/JitEngine.h reads (JitEngine::kMaxElementsAttr): the runtime
// does not depend on the passes, nor they on it, so the name is spelled in both.
constexpr StringLiteral kMaxElementsAttrName = "kiln_codegen.max_elements";

// The most elements any tensor of `fusion` (its operands, results and every value in
// its body) holds; nullopt if one has a dim known only at run time. The JIT compiles a
// kernel over few elements with less optimization (runtime/JitEngine.h,
// cheapKernelElements), which is why the count travels with the kernel.
std::optional<int64_t> maxStaticElements(FusionOp fusion) {
  int64_t most = 0;
  bool dynamic = false;
  auto count = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return;
    if (!tensor.hasStaticShape())
      dynamic = true;
    else
      most = std::max(most, tensor.getNumElements());
  };
  for (Type type : fusion->getOperandTypes())
    count(type);
  fusion->walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      count(type);
  });
  if (dynamic)
    return std::nullopt;
  return most;
}

// What a kernel is compiled by: the codegen backend ("fusion") or a vendor
// library ("library"); `kiln.kernel` on the kernel function says which.
StringRef kernelKindOf(Operation *op) {
  if (isa<FusionOp>(op))
    return "fusion";
  if (isa<MatmulOp, AddmmOp, Conv2dOp, Pool2dOp>(op))
    return "library";
  return {};
}

// Names kernels `<host>_kernel_<n>`, skipping names the module already has
// (a kernel outlined by an earlier run keeps its name).
class KernelNamer {
public:
  KernelNamer(SymbolTable &symbols, func::FuncOp host)
      : symbols(symbols), host(host.getSymName().str()) {}

  std::string next() {
    std::string name;
    do
      name = host + "_kernel_" + std::to_string(count++);
    while (symbols.lookup(name));
    return name;
  }

private:
  SymbolTable &symbols;
  std::string host;
  unsigned count = 0;
};

// An empty private kernel function taking `inputs` and returning `results`.
func::FuncOp createKernel(OpBuilder &builder, Operation *op, StringRef name,
                          TypeRange inputs, TypeRange results) {
  auto kernel = func::FuncOp::create(builder, op->getLoc(), name,
                                     builder.getFunctionType(inputs, results));
  kernel.setPrivate();
  kernel->setAttr(KilnDialect::getKernelAttrName(),
                  builder.getStringAttr(kernelKindOf(op)));
  return kernel;
}

// The fusion's body becomes the kernel's body; its yield becomes a return.
// A row fusion's kiln.row_dims goes with it.
void moveFusionBody(FusionOp fusion, func::FuncOp kernel) {
  if (std::optional<int64_t> elements = maxStaticElements(fusion))
    kernel->setAttr(kMaxElementsAttrName,
                    Builder(kernel).getI64IntegerAttr(*elements));
  if (Attribute rows = fusion->getAttr(KilnDialect::getRowDimsAttrName()))
    kernel->setAttr(KilnDialect::getRowDimsAttrName(), rows);
  kernel.getBody().takeBody(fusion.getBody());
  Operation *yield = kernel.getBody().front().getTerminator();
  OpBuilder builder(yield);
  func::ReturnOp::create(builder, yield->getLoc(), yield->getOperands());
  yield->erase();
}

// The kernel's body is the library op alone, on the kernel's arguments (which
// take the function's location, the op's).
void cloneLibraryOp(Operation *op, func::FuncOp kernel) {
  Block *body = kernel.addEntryBlock();
  OpBuilder builder = OpBuilder::atBlockEnd(body);
  IRMapping mapping;
  mapping.map(op->getOperands(), body->getArguments());
  Operation *clone = builder.clone(*op, mapping);
  func::ReturnOp::create(builder, op->getLoc(), clone->getResults());
}

struct KilnOutlineKernelsPass
    : impl::KilnOutlineKernelsPassBase<KilnOutlineKernelsPass> {
  using KilnOutlineKernelsPassBase::KilnOutlineKernelsPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Kernels are added while walking, so collect the hosts first.
    SmallVector<func::FuncOp> hosts;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          !func->hasAttr(KilnDialect::getKernelAttrName()))
        hosts.push_back(func);
    for (func::FuncOp host : hosts)
      outlineFunction(host, symbols);
    dedupeFusionKernels(module, symbols);
  }

  // Fusion kernels with the same type and body (repeated layers: every BatchNorm + ReLU6
  // of one shape) become one, so each is lowered and compiled once. The survivor keeps
  // its ops' locations, which then stand for all of its callers.
  void dedupeFusionKernels(ModuleOp module, SymbolTable &symbols) {
    llvm::StringMap<func::FuncOp> firstWithBody;
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (auto kind =
              func->getAttrOfType<StringAttr>(KilnDialect::getKernelAttrName());
          kind && kind.getValue() == "fusion" && !func.isExternal())
        kernels.push_back(func);
    DenseMap<StringAttr, FlatSymbolRefAttr> survivorOf;
    for (func::FuncOp kernel : kernels) {
      auto [it, inserted] = firstWithBody.try_emplace(structureOf(kernel), kernel);
      if (inserted)
        continue;
      survivorOf[kernel.getSymNameAttr()] = FlatSymbolRefAttr::get(it->second.getSymNameAttr());
      symbols.erase(kernel);
    }
    if (survivorOf.empty())
      return;
    module.walk([&](func::CallOp call) {
      if (auto survivor = survivorOf.lookup(call.getCalleeAttr().getAttr()))
        call.setCalleeAttr(survivor);
    });
  }

  // The kernel's type and body, printed without names or locations.
  static std::string structureOf(func::FuncOp kernel) {
    std::string text;
    llvm::raw_string_ostream out(text);
    out << kernel.getFunctionType();
    AsmState state(kernel);
    for (Operation &op : kernel.getBody().front()) {
      out << "\n";
      op.print(out, state);
    }
    return text;
  }

  // Outlines the kernels of `host` in block order; they follow it in the
  // module in the same order.
  void outlineFunction(func::FuncOp host, SymbolTable &symbols) {
    KernelNamer namer(symbols, host);
    Block::iterator insertPt = std::next(host->getIterator());
    for (Block &block : host.getBody())
      for (Operation &op : llvm::make_early_inc_range(block)) {
        if (kernelKindOf(&op).empty())
          continue;
        func::FuncOp kernel = outline(&op, namer.next());
        symbols.insert(kernel, insertPt);
        insertPt = std::next(kernel->getIterator());
      }
  }

  // Replaces `op` by a call to a new kernel, which is returned detached.
  func::FuncOp outline(Operation *op, StringRef name) {
    OpBuilder builder(op->getContext());
    func::FuncOp kernel = createKernel(builder, op, name, op->getOperandTypes(),
                                       op->getResultTypes());
    if (auto fusion = dyn_cast<FusionOp>(op))
      moveFusionBody(fusion, kernel);
    else
      cloneLibraryOp(op, kernel);
    builder.setInsertionPoint(op);
    auto call =
        func::CallOp::create(builder, op->getLoc(), kernel, op->getOperands());
    op->replaceAllUsesWith(call.getResults());
    op->erase();
    return kernel;
  }
};

} // namespace
} // namespace mlir::kiln
