// What makes two traced programs the same program (see ProgramKey.h).
#include "runtime/cache/ProgramKey.h"

#include <string>

#include "dialect/KilnDialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"
#include "runtime/JitEngine.h"

namespace kiln::runtime {

using mlir::kiln::KilnDialect;

namespace {

// Calls `visit` with each block argument's and each op's location setter, in walk order.
template <class Visit>
void forEachLocated(mlir::Operation* root, Visit visit) {
  root->walk<mlir::WalkOrder::PreOrder>([&](mlir::Operation* op) {
    visit(op->getLoc(), [op](mlir::Location loc) { op->setLoc(loc); });
    for (mlir::Region& region : op->getRegions())
      for (mlir::Block& block : region)
        for (mlir::BlockArgument arg : block.getArguments())
          visit(arg.getLoc(), [arg](mlir::Location loc) mutable { arg.setLoc(loc); });
  });
}

// Each state (and each update of it) named "s<k>", k its argument's index.
void nameStatesByIndex(mlir::func::FuncOp host) {
  mlir::Builder builder(host.getContext());
  llvm::DenseMap<mlir::Attribute, mlir::Attribute> byIndex;
  for (unsigned k = 0; k < host.getNumArguments(); ++k)
    if (auto name = host.getArgAttrOfType<mlir::StringAttr>(k, KilnDialect::getStateAttrName())) {
      mlir::StringAttr index = builder.getStringAttr("s" + std::to_string(k));
      byIndex.try_emplace(name, index);
      host.setArgAttr(k, KilnDialect::getStateAttrName(), index);
    }
  for (unsigned k = 0; k < host.getNumResults(); ++k)
    if (auto name = host.getResultAttrOfType<mlir::StringAttr>(k, KilnDialect::getStateUpdateAttrName()))
      if (auto index = byIndex.find(name); index != byIndex.end())
        host.setResultAttr(k, KilnDialect::getStateUpdateAttrName(), index->second);
}

// The traced program's locations (sourceLocations), kept in its planned module's bytecode
// under a name outside the kiln dialect, so that a program reusing the plan can relocate it.
constexpr llvm::StringLiteral kSourceLocations = "kiln_cache.source_locations";

std::string bytecodeOf(mlir::ModuleOp module) {
  std::string bytes;
  llvm::raw_string_ostream out(bytes);
  if (mlir::failed(mlir::writeBytecodeToFile(module, out))) return "";
  return bytes;
}

}  // namespace

void nameCanonically(mlir::ModuleOp module) {
  for (auto host : module.getOps<mlir::func::FuncOp>()) host.setSymName(kProgramSymbol);
}

std::string canonicalBytecode(mlir::ModuleOp module) {
  mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
  const mlir::Location unknown = mlir::UnknownLoc::get(module.getContext());
  forEachLocated(*copy, [&](mlir::Location, auto set) { set(unknown); });
  for (auto host : copy->getOps<mlir::func::FuncOp>()) nameStatesByIndex(host);
  return bytecodeOf(*copy);
}

mlir::ArrayAttr sourceLocations(mlir::ModuleOp module) {
  llvm::SmallVector<mlir::Attribute> locations;
  forEachLocated(module, [&](mlir::Location loc, auto) { locations.push_back(loc); });
  return mlir::ArrayAttr::get(module.getContext(), locations);
}

void relocate(mlir::ModuleOp planned, mlir::ArrayAttr compiled, mlir::ArrayAttr traced) {
  if (compiled == traced || compiled.size() != traced.size()) return;
  llvm::DenseMap<mlir::Attribute, mlir::Attribute> replacement;
  for (auto [from, to] : llvm::zip_equal(compiled, traced)) replacement.try_emplace(from, to);
  mlir::AttrTypeReplacer replacer;
  // A replaced location is not walked again: its parts are this program's already.
  replacer.addReplacement(
      [&](mlir::LocationAttr loc) -> std::optional<std::pair<mlir::Attribute, mlir::WalkResult>> {
        auto found = replacement.find(loc);
        if (found == replacement.end()) return std::nullopt;
        return std::make_pair(found->second, mlir::WalkResult::skip());
      });
  replacer.recursivelyReplaceElementsIn(planned, /*replaceAttrs=*/false, /*replaceLocs=*/true);
}

std::string plannedBytecode(mlir::ModuleOp planned, mlir::ArrayAttr traced) {
  planned->setAttr(kSourceLocations, traced);
  std::string bytes = bytecodeOf(planned);
  planned->removeAttr(kSourceLocations);
  return bytes;
}

mlir::OwningOpRef<mlir::ModuleOp> readPlanned(std::string_view bytes, mlir::ArrayAttr traced) {
  mlir::ParserConfig config(traced.getContext());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(llvm::StringRef(bytes.data(), bytes.size()), config);
  if (!module) return module;
  if (auto compiled = (*module)->getAttrOfType<mlir::ArrayAttr>(kSourceLocations)) {
    relocate(*module, compiled, traced);
    (*module)->removeAttr(kSourceLocations);
  }
  return module;
}

std::string compileOptionsKey(bool fuse, unsigned fuseMaxInputs, unsigned llvmOptLevel,
                              bool timeKernels) {
  return "fuse=" + std::to_string(fuse) + ";max-inputs=" + std::to_string(fuseMaxInputs) +
         ";llvm-opt=" + std::to_string(llvmOptLevel) + ";o0-elements=" +
         std::to_string(quickKernelElements("compile", SourceLoc::current())) +
         (timeKernels ? ";time-kernels" : "");
}

}  // namespace kiln::runtime
