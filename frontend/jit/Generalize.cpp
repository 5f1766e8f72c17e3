// generalize and programDifference (see Generalize.h).
#include "frontend/jit/Generalize.h"

#include <map>
#include <optional>
#include <tuple>

#include "bridge/OpBridge.h"
#include "dialect/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"
#include "passes/SpecializeShapes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::jit {

namespace {

namespace mk = mlir::kiln;

template <class T>
std::string printed(const T& thing) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << thing;
  return text;
}

// "'kiln.reshape' at model.cc:12:3"
std::string where(mlir::Operation* op) {
  return "'" + op->getName().getStringRef().str() + "' at " + bridge::formatLocation(op->getLoc());
}

std::vector<mlir::Operation*> opsOf(mlir::func::FuncOp func) {
  std::vector<mlir::Operation*> ops;
  for (mlir::Operation& op : func.getBody().front()) ops.push_back(&op);
  return ops;
}

// Values numbered in order of definition (arguments first), so two functions' operands
// can be compared by position.
class Numbering {
 public:
  explicit Numbering(mlir::func::FuncOp func) {
    for (mlir::BlockArgument arg : func.getBody().front().getArguments()) add(arg);
  }
  void add(mlir::Value value) { ids_[value] = int(ids_.size()); }
  void addResults(mlir::Operation* op) {
    for (mlir::Value result : op->getResults()) add(result);
  }
  int operator()(mlir::Value value) const {
    auto found = ids_.find(value);
    return found == ids_.end() ? -1 : found->second;
  }

 private:
  llvm::DenseMap<mlir::Value, int> ids_;
};

// The first difference between ops `a` and `b` of two functions other than their
// attributes and result types ("" if none).
std::string structuralDifference(mlir::Operation* a, mlir::Operation* b, const Numbering& na,
                                 const Numbering& nb) {
  if (a->getName() != b->getName())
    return where(a) + " is " + b->getName().getStringRef().str() + " in the other recording";
  if (a->getLoc() != b->getLoc())
    return where(a) + " comes from " + bridge::formatLocation(b->getLoc()) + " in the other recording";
  if (a->getNumOperands() != b->getNumOperands() || a->getNumResults() != b->getNumResults())
    return where(a) + " has other operands or results in the other recording";
  for (auto [x, y] : llvm::zip_equal(a->getOperands(), b->getOperands()))
    if (na(x) != nb(y) || na(x) < 0) return where(a) + " reads other values in the other recording";
  return "";
}

bool isIota(mlir::DenseElementsAttr value) {
  auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
  if (type.getRank() != 1) return false;
  int64_t i = 0;
  if (llvm::isa<mlir::FloatType>(type.getElementType())) {
    for (const llvm::APFloat& x : value.getValues<llvm::APFloat>())
      if (x.convertToDouble() != double(i++)) return false;
    return true;
  }
  if (type.getElementType().isInteger(1)) return false;
  for (const llvm::APInt& x : value.getValues<llvm::APInt>())
    if (x.getSExtValue() != i++) return false;
  return true;
}

// The form recordings are compared in. Every broadcast of a rank-0 splat constant is
// made a splat constant of its shape, in place (the constant left unused is erased): a
// recorded splat of a size that varies is such a broadcast in the dynamic program, and the
// recorder writes some splats that way itself. Reshapes and broadcasts to their operand's
// own shape are dropped: the eager frontend does not dispatch a view that changes
// nothing, which at size 1 leaves out what other sizes record.
void normalize(mlir::func::FuncOp func) {
  mlir::OpBuilder builder(func.getContext());
  for (mlir::Operation& op : llvm::make_early_inc_range(func.getBody().front())) {
    auto broadcast = llvm::dyn_cast<mk::BroadcastInDimOp>(op);
    if (llvm::isa<mk::ReshapeOp, mk::BroadcastInDimOp>(op) && op.getNumOperands() == 1 &&
        op.getOperand(0).getType() == op.getResult(0).getType() &&
        llvm::cast<mlir::RankedTensorType>(op.getResult(0).getType()).hasStaticShape() &&
        (!broadcast ||
         llvm::equal(broadcast.getDims(), llvm::seq<int64_t>(0, broadcast.getType().getRank())))) {
      op.getResult(0).replaceAllUsesWith(op.getOperand(0));
      op.erase();
      continue;
    }
    auto constant = broadcast ? broadcast.getX().getDefiningOp<mk::ConstantOp>() : nullptr;
    auto splat = constant ? llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue()) : nullptr;
    if (!splat || !splat.isSplat() || splat.getType().getRank() != 0 ||
        !broadcast.getType().hasStaticShape())
      continue;
    builder.setInsertionPoint(broadcast);
    mlir::Value spread = mk::ConstantOp::create(
        builder, broadcast.getLoc(), llvm::cast<mlir::ElementsAttr>(splat.resizeSplat(broadcast.getType())));
    broadcast.replaceAllUsesWith(spread);
    broadcast.erase();
    if (constant.use_empty()) constant.erase();
  }
}

struct Symbol {
  int64_t a, b;       // its size at the two calls
  mlir::Value value;  // tensor.dim of its first input dim in the dynamic program
};

class Generalizer {
 public:
  Generalizer(mlir::func::FuncOp a, mlir::func::FuncOp b, size_t numInputs,
              const std::vector<std::vector<bool>>& allowed)
      : a_(a), b_(b), numInputs_(numInputs), allowed_(allowed), builder_(a.getContext()) {}

  Generalized run() {
    Generalized result;
    result.why = check();
    if (!result.why.empty()) return result;
    result.module = mlir::ModuleOp::create(b_.getLoc());
    d_ = b_.clone();
    result.module->push_back(d_);
    result.why = build(result.symbols);
    if (result.why.empty()) result.why = validate();
    if (!result.why.empty()) result.module = nullptr;
    return result;
  }

 private:
  // The recordings are one program but for sizes; inputs' dims may differ.
  std::string check() {
    auto ta = a_.getArgumentTypes(), tb = b_.getArgumentTypes();
    if (ta.size() != tb.size()) return "the recordings take different numbers of arguments";
    bool anyDynamic = false;
    for (size_t i = 0; i < ta.size(); ++i) {
      if (a_.getArgAttrDict(unsigned(i)) != b_.getArgAttrDict(unsigned(i)))
        return "argument " + std::to_string(i) + " is other state in the other recording";
      auto ra = llvm::cast<mlir::RankedTensorType>(ta[i]), rb = llvm::cast<mlir::RankedTensorType>(tb[i]);
      if (ra.getRank() != rb.getRank() || ra.getElementType() != rb.getElementType())
        return "argument " + std::to_string(i) + " is " + printed(ra) + " and " + printed(rb);
      for (int64_t d = 0; d < ra.getRank(); ++d) {
        if (ra.getDimSize(d) == rb.getDimSize(d)) continue;
        if (i >= numInputs_)
          return "state argument " + std::to_string(i) + " is " + printed(ra) + " and " + printed(rb);
        if (!allowed_.empty() && (i >= allowed_.size() || size_t(d) >= allowed_[i].size() || !allowed_[i][d]))
          return "input " + std::to_string(i) + " dim " + std::to_string(d) +
                 " differs but is not one of the dynamic dims";
        if (std::min(ra.getDimSize(d), rb.getDimSize(d)) < 2)
          return "input " + std::to_string(i) + " dim " + std::to_string(d) +
                 " has size 1 at one call (sizes 0 and 1 are traced on their own, because "
                 "eager code may broadcast or squeeze a dim of size 1)";
        anyDynamic = true;
      }
    }
    if (!anyDynamic) return "no input dim differs";
    if (a_.getResAttrsAttr() != b_.getResAttrsAttr() ||
        a_.getFunctionType().getNumResults() != b_.getFunctionType().getNumResults())
      return "the recordings have different results";
    std::vector<mlir::Operation*> opsA = opsOf(a_), opsB = opsOf(b_);
    if (opsA.size() != opsB.size())
      return "the function records " + std::to_string(opsA.size()) + " ops at one size and " +
             std::to_string(opsB.size()) + " at the other";
    Numbering na(a_), nb(b_);
    for (size_t k = 0; k < opsA.size(); ++k) {
      mlir::Operation *oa = opsA[k], *ob = opsB[k];
      if (std::string diff = structuralDifference(oa, ob, na, nb); !diff.empty()) return diff;
      if (oa->getAttrDictionary() != ob->getAttrDictionary() && sizeAttribute(oa).empty())
        return where(oa) + " has other attributes at the other size";
      for (auto [x, y] : llvm::zip_equal(oa->getResultTypes(), ob->getResultTypes())) {
        auto rx = llvm::dyn_cast<mlir::RankedTensorType>(x), ry = llvm::dyn_cast<mlir::RankedTensorType>(y);
        if (!rx || !ry || rx.getRank() != ry.getRank() || rx.getElementType() != ry.getElementType())
          return where(oa) + " has results of other ranks or types at the other size";
      }
      na.addResults(oa);
      nb.addResults(ob);
    }
    return "";
  }

  // The attribute of `op` that holds sizes a dynamic program computes ("" if none).
  static llvm::StringRef sizeAttribute(mlir::Operation* op) {
    if (llvm::isa<mk::ReshapeOp, mk::BroadcastInDimOp, mk::RngOp>(op)) return "shape";
    if (llvm::isa<mk::ScatterAddOp>(op)) return "size";
    if (llvm::isa<mk::SliceOp>(op)) return "limit";
    if (llvm::isa<mk::ConstantOp>(op)) return "value";
    return "";
  }

  std::string build(std::vector<std::vector<int>>& symbols) {
    mlir::Block& body = d_.getBody().front();
    std::vector<mlir::Operation*> opsD = opsOf(d_), opsA = opsOf(a_), opsB = opsOf(b_);
    // The inputs' dynamic dims and their sizes (tensor.dim), before the first op.
    builder_.setInsertionPointToStart(&body);
    auto ta = a_.getArgumentTypes(), tb = b_.getArgumentTypes();
    symbols.assign(numInputs_, {});
    for (size_t i = 0; i < numInputs_; ++i) {
      auto ra = llvm::cast<mlir::RankedTensorType>(ta[i]), rb = llvm::cast<mlir::RankedTensorType>(tb[i]);
      llvm::SmallVector<int64_t> shape(rb.getShape());
      symbols[i].assign(size_t(ra.getRank()), -1);
      for (int64_t d = 0; d < ra.getRank(); ++d) {
        if (ra.getDimSize(d) == rb.getDimSize(d)) continue;
        shape[d] = mlir::ShapedType::kDynamic;
        symbols[i][d] = symbolOf(ra.getDimSize(d), rb.getDimSize(d), body.getArgument(unsigned(i)), d);
      }
      body.getArgument(unsigned(i)).setType(mlir::RankedTensorType::get(shape, rb.getElementType()));
    }
    for (size_t k = 0; k < opsD.size(); ++k) {
      mlir::Operation *od = opsD[k], *oa = opsA[k], *ob = opsB[k];
      if (llvm::isa<mlir::func::ReturnOp>(od)) break;
      if (oa->getAttrDictionary() != ob->getAttrDictionary()) {
        auto rebuilt = llvm::isa<mk::ConstantOp>(od) ? constant(od, oa, ob) : sizes(od, oa, ob);
        if (auto* why = std::get_if<std::string>(&rebuilt)) return *why;
        od = std::get<mlir::Operation*>(rebuilt);
      } else {
        bridge::CapturedDiagnostics diagnostics(d_.getContext());
        if (mlir::failed(mk::refineResultTypes(od)))
          return where(od) + " does not take the dynamic sizes: " + diagnostics.first();
      }
      for (auto [r, types] : llvm::enumerate(llvm::zip_equal(oa->getResultTypes(), ob->getResultTypes(),
                                                             od->getResultTypes()))) {
        auto [x, y, z] = types;
        auto ra = llvm::cast<mlir::RankedTensorType>(x), rb = llvm::cast<mlir::RankedTensorType>(y);
        auto rd = llvm::cast<mlir::RankedTensorType>(z);
        for (int64_t dim = 0; dim < ra.getRank(); ++dim) {
          const bool same = ra.getDimSize(dim) == rb.getDimSize(dim);
          if ((same && !rd.isDynamicDim(dim) && rd.getDimSize(dim) != ra.getDimSize(dim)) ||
              (!same && !rd.isDynamicDim(dim)))
            return where(od) + ": dim " + std::to_string(dim) + " of result " + std::to_string(r) +
                   " is " + std::to_string(ra.getDimSize(dim)) + " and " +
                   std::to_string(rb.getDimSize(dim)) + " at the two calls but " +
                   printed(rd) + " in the dynamic program";
        }
      }
    }
    auto ret = llvm::cast<mlir::func::ReturnOp>(body.getTerminator());
    d_.setFunctionType(mlir::FunctionType::get(d_.getContext(), body.getArgumentTypes(),
                                               ret.getOperandTypes()));
    bridge::CapturedDiagnostics diagnostics(d_.getContext());
    if (mlir::failed(mlir::verify(d_)))
      return "the dynamic program does not verify: " + diagnostics.all();
    return "";
  }

  int symbolOf(int64_t a, int64_t b, mlir::Value input, int64_t dim) {
    for (size_t s = 0; s < symbols_.size(); ++s)
      if (symbols_[s].a == a && symbols_[s].b == b) return int(s);
    mlir::Location loc = builder_.getUnknownLoc();
    mlir::Value index = mlir::arith::ConstantIndexOp::create(builder_, loc, dim);
    mlir::Value size = mlir::tensor::DimOp::create(builder_, loc, input, index);
    symbols_.push_back({a, b, size});
    return int(symbols_.size() - 1);
  }

  // The size that is `a` at one call and `b` at the other as c x a product of symbols,
  // computed at the start of the program; an error when no product, or more than one,
  // fits both.
  std::variant<mlir::Value, std::string> sizeValue(int64_t a, int64_t b, mlir::Operation* op) {
    using Fit = std::pair<int64_t, std::vector<size_t>>;
    std::vector<Fit> fits;
    const size_t n = symbols_.size();
    auto consider = [&](const std::vector<size_t>& product) {
      int64_t pa = 1, pb = 1;
      for (size_t s : product) {
        if (pa > a || pb > b) return;
        pa *= symbols_[s].a;
        pb *= symbols_[s].b;
      }
      if (a % pa == 0 && b % pb == 0 && a / pa == b / pb && a / pa >= 1) fits.push_back({a / pa, product});
    };
    for (size_t i = 0; i < n; ++i) {
      consider({i});
      for (size_t j = i; j < n; ++j) {
        consider({i, j});
        for (size_t k = j; k < n; ++k) consider({i, j, k});
      }
    }
    if (fits.size() != 1)
      return where(op) + " has a size that is " + std::to_string(a) + " at one call and " +
             std::to_string(b) + " at the other, which " +
             (fits.empty() ? "is not" : "is more than one way") +
             " a whole multiple of a product of the dynamic dims";
    auto [c, product] = fits.front();
    auto cached = sizes_.find(fits.front());
    if (cached != sizes_.end()) return cached->second;
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointAfterValue(symbols_.back().value);
    mlir::Location loc = builder_.getUnknownLoc();
    mlir::Value value = symbols_[product.front()].value;
    for (size_t s : llvm::drop_begin(product))
      value = mlir::arith::MulIOp::create(builder_, loc, value, symbols_[s].value);
    if (c != 1)
      value = mlir::arith::MulIOp::create(builder_, loc, value,
                                          mlir::arith::ConstantIndexOp::create(builder_, loc, c));
    sizes_[fits.front()] = value;
    return value;
  }

  using Rebuilt = std::variant<mlir::Operation*, std::string>;

  // Entries of two size lists as a mixed static/dynamic list.
  std::optional<std::string> mixedSizes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                                        mlir::Operation* op, llvm::SmallVector<int64_t>& entries,
                                        llvm::SmallVector<mlir::Value>& dynamic) {
    if (a.size() != b.size()) return where(op) + " has sizes of other ranks at the two calls";
    for (auto [x, y] : llvm::zip_equal(a, b)) {
      if (x == y) {
        entries.push_back(x);
        continue;
      }
      auto value = sizeValue(x, y, op);
      if (auto* why = std::get_if<std::string>(&value)) return *why;
      entries.push_back(mlir::ShapedType::kDynamic);
      dynamic.push_back(std::get<mlir::Value>(value));
    }
    return std::nullopt;
  }

  Rebuilt replace(mlir::Operation* od, mlir::Operation* made) {
    od->replaceAllUsesWith(made->getResults());
    od->erase();
    return made;
  }

  // reshape, broadcast_in_dim and rng (`shape`) and scatter_add (`size`).
  Rebuilt sizes(mlir::Operation* od, mlir::Operation* oa, mlir::Operation* ob) {
    llvm::StringRef name = sizeAttribute(od);
    if (name.empty() || name == "value") return where(od) + " has other attributes at the other size";
    for (mlir::NamedAttribute attr : oa->getAttrs())
      if (attr.getName() != name && attr.getValue() != ob->getAttr(attr.getName()))
        return where(od) + " has other attributes at the other size";
    llvm::SmallVector<int64_t> entries;
    llvm::SmallVector<mlir::Value> dynamic;
    mlir::Attribute filled;
    if (name == "size") {
      int64_t a = llvm::cast<mlir::IntegerAttr>(oa->getAttr(name)).getInt();
      int64_t b = llvm::cast<mlir::IntegerAttr>(ob->getAttr(name)).getInt();
      if (auto why = mixedSizes({a}, {b}, od, entries, dynamic)) return *why;
      filled = builder_.getI64IntegerAttr(entries.front());
    } else {
      if (auto why = mixedSizes(llvm::cast<mlir::DenseI64ArrayAttr>(oa->getAttr(name)).asArrayRef(),
                                llvm::cast<mlir::DenseI64ArrayAttr>(ob->getAttr(name)).asArrayRef(),
                                od, entries, dynamic))
        return *why;
      filled = builder_.getDenseI64ArrayAttr(entries);
    }
    builder_.setInsertionPoint(od);
    mlir::OperationState state(od->getLoc(), od->getName());
    state.addOperands(od->getOperands());
    state.addOperands(dynamic);  // the size operands come last in each of these ops
    for (mlir::NamedAttribute attr : od->getAttrs())
      state.addAttribute(attr.getName(), attr.getName() == name ? filled : attr.getValue());
    state.addTypes(od->getResultTypes());
    mlir::Operation* made = builder_.create(state);
    bridge::CapturedDiagnostics diagnostics(d_.getContext());
    if (mlir::failed(mk::refineResultTypes(made))) {
      made->erase();
      return where(od) + " does not take the dynamic sizes: " + diagnostics.first();
    }
    return replace(od, made);
  }

  // A splat constant of a dynamic shape becomes a broadcast of the splat; an arange of a
  // dynamic length a kiln.iota.
  Rebuilt constant(mlir::Operation* od, mlir::Operation* oa, mlir::Operation* ob) {
    auto va = llvm::dyn_cast<mlir::DenseElementsAttr>(llvm::cast<mk::ConstantOp>(oa).getValue());
    auto vb = llvm::dyn_cast<mlir::DenseElementsAttr>(llvm::cast<mk::ConstantOp>(ob).getValue());
    const std::string differs = where(od) + " has other values at the other size";
    if (!va || !vb) return differs;
    auto ta = llvm::cast<mlir::RankedTensorType>(va.getType());
    auto tb = llvm::cast<mlir::RankedTensorType>(vb.getType());
    llvm::SmallVector<int64_t> entries;
    llvm::SmallVector<mlir::Value> dynamic;
    if (ta.getShape() == tb.getShape()) return differs;
    if (auto why = mixedSizes(ta.getShape(), tb.getShape(), od, entries, dynamic)) return *why;
    builder_.setInsertionPoint(od);
    mlir::Location loc = od->getLoc();
    if (va.isSplat() && vb.isSplat() && va.getSplatValue<mlir::Attribute>() == vb.getSplatValue<mlir::Attribute>()) {
      auto scalarType = mlir::RankedTensorType::get({}, tb.getElementType());
      mlir::Value scalar = mk::ConstantOp::create(builder_, loc,
                                                  llvm::cast<mlir::ElementsAttr>(vb.resizeSplat(scalarType)));
      return replace(od, mk::BroadcastInDimOp::create(builder_, loc, scalar, dynamic,
                                                      llvm::ArrayRef<int64_t>{}, entries));
    }
    if (isIota(va) && isIota(vb))
      return replace(od, mk::IotaOp::create(builder_, loc, dynamic, /*dim=*/0, entries,
                                            tb.getElementType()));
    return differs;
  }

    // The dynamic program specialized to each recording's sizes is that recording.
  std::string validate() {
    for (mlir::func::FuncOp recorded : {a_, b_})
      if (std::string diff = specializationDifference(d_, recorded); !diff.empty()) return diff;
    return "";
  }

  mlir::func::FuncOp a_, b_, d_;
  size_t numInputs_;
  const std::vector<std::vector<bool>>& allowed_;
  mlir::OpBuilder builder_;
  std::vector<Symbol> symbols_;
  std::map<std::pair<int64_t, std::vector<size_t>>, mlir::Value> sizes_;
};

}  // namespace

Generalized generalize(mlir::func::FuncOp a, mlir::func::FuncOp b, size_t numInputs,
                       const std::vector<std::vector<bool>>& allowed) {
  return Generalizer(a, b, numInputs, allowed).run();
}

std::string specializationDifference(mlir::func::FuncOp dynamic, mlir::func::FuncOp recorded) {
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(dynamic.getLoc());
  auto copy = dynamic.clone();
  module->push_back(copy);
  auto expected = recorded.clone();
  module->push_back(expected);
  llvm::SmallVector<llvm::SmallVector<int64_t>> shapes;
  for (mlir::Type type : recorded.getArgumentTypes())
    shapes.emplace_back(llvm::cast<mlir::RankedTensorType>(type).getShape());
  bridge::CapturedDiagnostics diagnostics(dynamic.getContext());
  if (mlir::failed(mk::specializeShapes(copy, shapes)))
    return "the dynamic program does not specialize to the recording's sizes: " +
           diagnostics.first();
  normalize(expected);
  normalize(copy);
  if (std::string diff = programDifference(expected, copy); !diff.empty())
    return "the dynamic program specialized to the recording's sizes is not that recording: " + diff;
  return "";
}

std::string programDifference(mlir::func::FuncOp a, mlir::func::FuncOp b) {
  if (a.getFunctionType() != b.getFunctionType())
    return "the function types differ: " + printed(a.getFunctionType()) + " and " +
           printed(b.getFunctionType());
  for (unsigned i = 0; i < a.getNumArguments(); ++i)
    if (a.getArgAttrDict(i) != b.getArgAttrDict(i))
      return "argument " + std::to_string(i) + " has other attributes";
  if (a.getResAttrsAttr() != b.getResAttrsAttr()) return "the results have other attributes";
  std::vector<mlir::Operation*> opsA = opsOf(a), opsB = opsOf(b);
  if (opsA.size() != opsB.size())
    return std::to_string(opsA.size()) + " ops against " + std::to_string(opsB.size());
  Numbering na(a), nb(b);
  for (size_t k = 0; k < opsA.size(); ++k) {
    mlir::Operation *oa = opsA[k], *ob = opsB[k];
    if (std::string diff = structuralDifference(oa, ob, na, nb); !diff.empty()) return diff;
    if (oa->getAttrDictionary() != ob->getAttrDictionary())
      return where(oa) + " has attributes " + printed(oa->getAttrDictionary()) + " against " +
             printed(ob->getAttrDictionary());
    if (oa->getResultTypes() != ob->getResultTypes()) return where(oa) + " has other result types";
    na.addResults(oa);
    nb.addResults(ob);
  }
  return "";
}

}  // namespace kiln::jit
