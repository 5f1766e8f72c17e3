// The op side of the bridge (OpBridge.h): one schema per kiln op lists how each of its
// dialect attributes reads from and writes to the op table's Attrs, and both directions
// walk it, so an attribute is described once.
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dialect/KilnDialect.h"
#include "dialect/KilnOps.h"
#include "frontend/core/ops/OpTable.h"
#include "bridge/OpBridge.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::bridge {

namespace {

namespace mk = mlir::kiln;

// How one dialect attribute is spelled in Attrs.
enum class AttrKind {
  I64,            // int64_t <-> I64Attr
  I64Array,       // std::vector<int64_t> <-> DenseI64ArrayAttr
  Flag,           // bool <-> UnitAttr (present when true)
  ElementType,    // DType <-> TypeAttr of the element type
  Direction,      // "lt" <-> #kiln<direction lt>
  ReduceKind,     // "sum" <-> #kiln<reduce_kind sum>
  PoolKind,       // "max" <-> #kiln<pool_kind max>
  Distribution,   // "normal" <-> #kiln<distribution normal>
  AllReduceKind,  // "mean" <-> #kiln<all_reduce_kind mean>
  RngParams,      // doubles "a", "b" <-> params = [a, b] ([a] for bernoulli)
};

struct AttrSpec {
  std::string_view name;  // the dialect's attribute name (a literal: Attrs keeps views)
  AttrKind kind;
};

struct OpSchema {
  std::string_view kilnOp;
  std::vector<AttrSpec> attrs;
};

using K = AttrKind;

// Every kiln op the table records that has attributes; the rest (unary and binary
// elementwise ops, select, gelu) have none.
const std::vector<OpSchema>& schemas() {
  static const std::vector<OpSchema> kSchemas = {
      {"kiln.compare", {{"direction", K::Direction}}},
      {"kiln.convert", {{"dtype", K::ElementType}}},
      {"kiln.broadcast_in_dim", {{"dims", K::I64Array}, {"shape", K::I64Array}}},
      {"kiln.reshape", {{"shape", K::I64Array}}},
      {"kiln.transpose", {{"permutation", K::I64Array}}},
      {"kiln.slice", {{"start", K::I64Array}, {"limit", K::I64Array}, {"stride", K::I64Array}}},
      {"kiln.concat", {{"dim", K::I64}}},
      {"kiln.reduce", {{"kind", K::ReduceKind}, {"dims", K::I64Array}, {"keep_dims", K::Flag}}},
      {"kiln.matmul", {{"transpose_a", K::Flag}, {"transpose_b", K::Flag}}},
      {"kiln.addmm", {{"transpose_a", K::Flag}, {"transpose_b", K::Flag}, {"relu", K::Flag}}},
      {"kiln.conv2d",
       {{"stride", K::I64Array}, {"padding", K::I64Array}, {"dilation", K::I64Array},
        {"groups", K::I64}, {"relu", K::Flag}}},
      {"kiln.pool2d",
       {{"kind", K::PoolKind}, {"window", K::I64Array}, {"stride", K::I64Array},
        {"padding", K::I64Array}}},
      {"kiln.gather", {{"dim", K::I64}}},
      {"kiln.scatter_add", {{"dim", K::I64}, {"size", K::I64}}},
      {"kiln.all_reduce", {{"kind", K::AllReduceKind}}},
      {"kiln.all_reduce_start", {{"kind", K::AllReduceKind}}},
      {"kiln.rng",
       {{"distribution", K::Distribution}, {"shape", K::I64Array}, {"dtype", K::ElementType},
        {"params", K::RngParams}}},
  };
  return kSchemas;
}

const std::vector<AttrSpec>& attrSpecsFor(std::string_view kilnOp) {
  static const std::vector<AttrSpec> kNone;
  for (const OpSchema& schema : schemas())
    if (schema.kilnOp == kilnOp) return schema.attrs;
  return kNone;
}

// Whether the Attrs entry `name` is read by `spec` (params reads "a" and "b").
bool consumes(const AttrSpec& spec, std::string_view name) {
  return spec.kind == K::RngParams ? (name == "a" || name == "b") : name == spec.name;
}

bool isFactory(const OpDef& op) { return op.kilnOp == "kiln.constant"; }

// ---- table to dialect -----------------------------------------------------------------

class AttrWriter {
 public:
  AttrWriter(mlir::OpBuilder& builder, const OpDef& op, std::string_view kilnOp, const Attrs& attrs,
             const SourceLoc& where)
      : b_(builder), op_(op), kilnOp_(kilnOp), attrs_(attrs), where_(where) {}

  void write(const AttrSpec& spec, mlir::OperationState& state) {
    if (mlir::Attribute value = convert(spec)) state.addAttribute(spec.name, value);
  }

 private:
  template <class T>
  const T& need(std::string_view name, const char* what) {
    const T* value = attrs_.getIf<T>(name);
    if (!value)
      throw TraceError::make(where_, op_.name, "attribute '", name, "' of ", kilnOp_,
                             " is missing or not ", what);
    return *value;
  }

  template <class EnumAttr>
  mlir::Attribute enumAttr(const AttrSpec& spec) {
    using Enum = decltype(std::declval<EnumAttr>().getValue());
    const std::string& text = need<std::string>(spec.name, "a string");
    std::optional<Enum> value = mk::symbolizeEnum<Enum>(text);
    if (!value)
      throw TraceError::make(where_, op_.name, "'", text, "' is not a ", spec.name, " of ",
                             kilnOp_);
    return EnumAttr::get(b_.getContext(), *value);
  }

  mlir::Attribute rngParams() {
    const double a = need<double>("a", "a double");
    const double bValue = need<double>("b", "a double");
    const bool bernoulli = need<std::string>("distribution", "a string") == "bernoulli";
    if (bernoulli) return b_.getDenseF64ArrayAttr({a});
    return b_.getDenseF64ArrayAttr({a, bValue});
  }

  mlir::Attribute convert(const AttrSpec& spec) {
    switch (spec.kind) {
      case K::I64: return b_.getI64IntegerAttr(need<int64_t>(spec.name, "an int64"));
      case K::I64Array: return b_.getDenseI64ArrayAttr(need<Shape>(spec.name, "an int64 list"));
      case K::Flag: return need<bool>(spec.name, "a bool") ? b_.getUnitAttr() : mlir::Attribute();
      case K::ElementType:
        return mlir::TypeAttr::get(elementTypeFor(b_.getContext(), need<DType>(spec.name, "a dtype")));
      case K::Direction: return enumAttr<mk::CompareDirectionAttr>(spec);
      case K::ReduceKind: return enumAttr<mk::ReduceKindAttr>(spec);
      case K::PoolKind: return enumAttr<mk::PoolKindAttr>(spec);
      case K::Distribution: return enumAttr<mk::RngDistributionAttr>(spec);
      case K::AllReduceKind: return enumAttr<mk::AllReduceKindAttr>(spec);
      case K::RngParams: return rngParams();
    }
    return {};
  }

  mlir::OpBuilder& b_;
  const OpDef& op_;
  std::string_view kilnOp_;
  const Attrs& attrs_;
  const SourceLoc& where_;
};

// The kiln op `op` is recorded as: its own, except that bool add/maximum and mul/minimum
// (which the eager kernels accept, as PyTorch) become the logical ops the dialect has
// for i1.
std::string_view kilnOpFor(const OpDef& op, std::span<const TensorMeta> outputs) {
  const bool boolResult = !outputs.empty() && outputs[0].dtype == kBool;
  if (boolResult && (&op == &ops::kAdd || &op == &ops::kMax)) return ops::kOr.kilnOp;
  if (boolResult && (&op == &ops::kMul || &op == &ops::kMin)) return ops::kAnd.kilnOp;
  return op.kilnOp;
}

// conv2d's dilation and relu may be left out of its Attrs (the kernel defaults them to 1
// and false).
Attrs withDefaults(const OpDef& op, const Attrs& attrs) {
  Attrs filled = attrs;
  if (&op == &ops::kConv2d && !attrs.has("dilation")) filled.set("dilation", Shape{1, 1});
  if (&op == &ops::kConv2d && !attrs.has("relu")) filled.set("relu", false);
  return filled;
}

// ---- dialect to table -----------------------------------------------------------------

[[noreturn]] void throwAt(mlir::Operation* op, const SourceLoc& where, const std::string& what) {
  throw Error::make(where, "jit", "'", op->getName().getStringRef().str(), "' at ",
                    formatLocation(op->getLoc()), ": ", what);
}

// kiln op name -> the OpDef that computes it. Factories are kiln.constant (their value is
// in the attribute) and clone is a same-shape reshape, resolved in tableCallFor.
const std::unordered_map<std::string_view, const OpDef*>& opsByKilnName() {
  static const auto kMap = [] {
    std::unordered_map<std::string_view, const OpDef*> map;
    for (const OpDef* op : ops::allOps()) {
      if (isFactory(*op) || op == &ops::kCopy) continue;
      auto [it, inserted] = map.emplace(op->kilnOp, op);
      if (!inserted)
        throw Error::make(SourceLoc::current(), "jit", "ops '", it->second->name, "' and '",
                          op->name, "' are both recorded as ", op->kilnOp,
                          "; the bridge cannot tell them apart");
    }
    return map;
  }();
  return kMap;
}

class AttrReader {
 public:
  AttrReader(mlir::Operation* op, const SourceLoc& where) : op_(op), where_(where) {}

  void read(const AttrSpec& spec, Attrs& attrs) {
    mlir::Attribute value = op_->getAttr(spec.name);
    if (spec.kind == K::Flag) {
      attrs.set(spec.name, bool(value));
      return;
    }
    if (!value) throwAt(op_, where_, "attribute '" + std::string(spec.name) + "' is missing");
    switch (spec.kind) {
      case K::I64: attrs.set(spec.name, as<mlir::IntegerAttr>(spec, value).getInt()); break;
      case K::I64Array: {
        llvm::ArrayRef<int64_t> dims = as<mlir::DenseI64ArrayAttr>(spec, value).asArrayRef();
        attrs.set(spec.name, Shape(dims.begin(), dims.end()));
        break;
      }
      case K::ElementType:
        attrs.set(spec.name, dtypeFor(as<mlir::TypeAttr>(spec, value).getValue(), where_));
        break;
      case K::Direction: attrs.set(spec.name, enumText<mk::CompareDirectionAttr>(spec, value)); break;
      case K::ReduceKind: attrs.set(spec.name, enumText<mk::ReduceKindAttr>(spec, value)); break;
      case K::PoolKind: attrs.set(spec.name, enumText<mk::PoolKindAttr>(spec, value)); break;
      case K::Distribution: attrs.set(spec.name, enumText<mk::RngDistributionAttr>(spec, value)); break;
      case K::AllReduceKind: attrs.set(spec.name, enumText<mk::AllReduceKindAttr>(spec, value)); break;
      case K::RngParams: {
        llvm::ArrayRef<double> params = as<mlir::DenseF64ArrayAttr>(spec, value).asArrayRef();
        if (params.empty()) throwAt(op_, where_, "'params' is empty");
        attrs.set("a", params[0]);
        attrs.set("b", params.size() > 1 ? params[1] : 0.0);
        break;
      }
      case K::Flag: break;
    }
  }

 private:
  template <class EnumAttr>
  std::string enumText(const AttrSpec& spec, mlir::Attribute value) {
    return mk::stringifyEnum(as<EnumAttr>(spec, value).getValue()).str();
  }

  template <class A>
  A as(const AttrSpec& spec, mlir::Attribute value) {
    auto typed = llvm::dyn_cast<A>(value);
    if (!typed) {
      std::string text;
      llvm::raw_string_ostream os(text);
      value.print(os);
      throwAt(op_, where_, "attribute '" + std::string(spec.name) + "' = " + text + " has the wrong kind");
    }
    return typed;
  }

  mlir::Operation* op_;
  const SourceLoc& where_;
};

}  // namespace

mlir::Operation* buildKilnOp(mlir::OpBuilder& builder, mlir::Location loc, const OpDef& op,
                             mlir::ValueRange operands, const Attrs& attrs,
                             std::span<const TensorMeta> outputs, const SourceLoc& where) {
  if (isFactory(op))
    throw TraceError::make(where, op.name, "a factory is recorded as kiln.constant; record its "
                           "value with bridge::buildConstant");
  const std::string_view kilnOp = kilnOpFor(op, outputs);
  mlir::MLIRContext* context = builder.getContext();
  if (!mlir::RegisteredOperationName::lookup(kilnOp, context))
    throw TraceError::make(where, op.name, kilnOp, " is not registered: load the kiln dialect ",
                           "into the builder's context");
  const Attrs filled = withDefaults(op, attrs);
  const std::vector<AttrSpec>& specs = attrSpecsFor(kilnOp);
  for (const auto& [name, value] : filled.items())
    if (std::none_of(specs.begin(), specs.end(), [&](const AttrSpec& s) { return consumes(s, name); }))
      throw TraceError::make(where, op.name, "attribute '", name, "' has no counterpart on ", kilnOp);

  mlir::OperationState state(loc, kilnOp);
  state.addOperands(operands);
  AttrWriter writer(builder, op, kilnOp, filled, where);
  for (const AttrSpec& spec : specs) writer.write(spec, state);
  for (const TensorMeta& meta : outputs) state.addTypes(tensorTypeFor(context, meta));
  return builder.create(state);
}

TableCall tableCallFor(mlir::Operation* op, const SourceLoc& where) {
  const llvm::StringRef name = op->getName().getStringRef();
  const auto& byName = opsByKilnName();
  auto found = byName.find(std::string_view(name.data(), name.size()));
  if (found == byName.end()) {
    const char* why = name == "kiln.constant" ? "constants are not table calls; read the value "
                                                "with bridge::tensorFromElements"
                                              : "no op of the table computes it";
    throwAt(op, where, why);
  }
  for (mlir::Value operand : op->getOperands())
    if (operand.getType().isIndex())
      throwAt(op, where, "it has dynamic size operands; specialize the program to its "
                         "arguments' shapes first (mlir::kiln::specializeShapes)");
  const OpDef* def = found->second;
  // clone/contiguous are recorded as a reshape to the operand's own shape: a copy.
  if (def == &ops::kReshape && op->getNumOperands() == 1 && op->getNumResults() == 1 &&
      op->getOperand(0).getType() == op->getResult(0).getType())
    def = &ops::kCopy;
  TableCall call{def, {}};
  AttrReader reader(op, where);
  for (const AttrSpec& spec : attrSpecsFor(def->kilnOp)) reader.read(spec, call.attrs);
  return call;
}

std::vector<std::string_view> mappedAttributes(std::string_view kilnOp) {
  std::vector<std::string_view> names;
  for (const AttrSpec& spec : attrSpecsFor(kilnOp)) names.push_back(spec.name);
  return names;
}

std::string formatLocation(mlir::Location loc) {
  mlir::FileLineColLoc fileLoc;
  loc->walk([&](mlir::Location inner) {
    if (auto f = llvm::dyn_cast<mlir::FileLineColLoc>(inner)) {
      fileLoc = f;
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  if (!fileLoc) return "unknown location";
  return (fileLoc.getFilename().getValue() + ":" + llvm::Twine(fileLoc.getLine()) + ":" +
          llvm::Twine(fileLoc.getColumn()))
      .str();
}

CapturedDiagnostics::CapturedDiagnostics(mlir::MLIRContext* context)
    : handler_(context, [this](mlir::Diagnostic& diag) {
        if (diag.getSeverity() != mlir::DiagnosticSeverity::Error) return mlir::success();
        std::string line = formatLocation(diag.getLocation()) + ": " + diag.str();
        if (first_.empty()) first_ = line;
        all_ += line + "\n";
        return mlir::success();
      }) {}

}  // namespace kiln::bridge
