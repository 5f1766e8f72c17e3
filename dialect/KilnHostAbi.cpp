// Verifies the host ABI: the `kiln.` discardable attributes on functions, their
// arguments and results, and the ops of a planned host schedule (the names are
// KilnDialect's get...AttrName()). Each is checked for its place, its type and
// its value; a `kiln.` name that is none of them is an error.

#include "dialect/KilnDialect.h"
#include "dialect/KilnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::kiln;

namespace {

// Where an attribute goes.
enum class Place {
  Argument,
  Result,
  ArgumentOrResult,
  Function,
  FunctionOrFusion,
  ScheduledOp
};

// What it holds.
enum class Holds {
  Index,
  Bytes,
  RowDims,
  StateName,
  Name,
  KernelKind,
  Offsets,
  ArgumentIndices
};

struct AbiAttr {
  StringRef name;
  Place place;
  Holds holds;
  // Says what its argument or result is: an argument is an input or a state, a
  // result one of output, state update, gradient update or created tensor.
  bool isRole;
};

ArrayRef<AbiAttr> abiAttrs() {
  using D = KilnDialect;
  static const AbiAttr attrs[] = {
      {D::getInputAttrName(), Place::Argument, Holds::Index, true},
      {D::getStateAttrName(), Place::Argument, Holds::StateName, true},
      {D::getOutputAttrName(), Place::Result, Holds::Index, true},
      {D::getStateUpdateAttrName(), Place::Result, Holds::StateName, true},
      {D::getGradUpdateAttrName(), Place::Result, Holds::StateName, true},
      {D::getCreatedAttrName(), Place::Result, Holds::Index, true},
      {D::getNameAttrName(), Place::ArgumentOrResult, Holds::Name, false},
      {D::getKernelAttrName(), Place::Function, Holds::KernelKind, false},
      {D::getRowDimsAttrName(), Place::FunctionOrFusion, Holds::RowDims, false},
      {D::getArenaBytesAttrName(), Place::Function, Holds::Bytes, false},
      {D::getNaiveBytesAttrName(), Place::Function, Holds::Bytes, false},
      {D::getOffsetsAttrName(), Place::ScheduledOp, Holds::Offsets, false},
      {D::getOverwritesAttrName(), Place::Result, Holds::ArgumentIndices, false},
  };
  return attrs;
}

const AbiAttr *lookup(StringRef name) {
  for (const AbiAttr &attr : abiAttrs())
    if (attr.name == name)
      return &attr;
  return nullptr;
}

StringRef placeName(Place place) {
  switch (place) {
  case Place::Argument: return "a function argument";
  case Place::Result: return "a function result";
  case Place::ArgumentOrResult: return "a function argument or result";
  case Place::Function: return "a function";
  case Place::FunctionOrFusion: return "a function or a kiln.fusion";
  case Place::ScheduledOp: return "an op of a host schedule";
  }
  llvm_unreachable("unknown place");
}

// An argument or result of a function, or an op's own attributes (index < 0).
struct Site {
  Operation *op;
  enum { Argument, Result, Op } kind;
  int64_t index;

  bool accepts(Place place) const {
    bool isFunction = isa<FunctionOpInterface>(op);
    switch (place) {
    case Place::Argument: return kind == Argument;
    case Place::Result: return kind == Result;
    case Place::ArgumentOrResult: return kind != Op;
    case Place::Function: return kind == Op && isFunction;
    case Place::FunctionOrFusion:
      return kind == Op && (isFunction || isa<FusionOp>(op));
    case Place::ScheduledOp: return kind == Op && !isFunction;
    }
    llvm_unreachable("unknown place");
  }

  std::string describe() const {
    if (kind == Op)
      return isa<FunctionOpInterface>(op) ? "the function itself" : "this op";
    return (kind == Argument ? "argument #" : "result #") +
           std::to_string(index);
  }

  // How many arguments or results the function has.
  unsigned count() const {
    auto function = cast<FunctionOpInterface>(op);
    return kind == Argument ? function.getNumArguments()
                            : function.getNumResults();
  }

  DictionaryAttr attrsAt(unsigned at) const {
    auto function = cast<FunctionOpInterface>(op);
    return kind == Argument ? function.getArgAttrDict(at)
                            : function.getResultAttrDict(at);
  }
};

std::optional<int64_t> i64Of(Attribute value) {
  auto integer = dyn_cast<IntegerAttr>(value);
  if (!integer || !integer.getType().isSignlessInteger(64))
    return std::nullopt;
  return integer.getInt();
}

// Whether `value` is what `attr` holds at `site`; else what it should be.
std::optional<std::string> mismatch(const AbiAttr &attr, Attribute value,
                                    const Site &site) {
  auto i64 = i64Of(value);
  auto string = dyn_cast<StringAttr>(value);
  switch (attr.holds) {
  case Holds::Index:
    if (i64 && *i64 >= 0 && *i64 < site.count())
      return std::nullopt;
    return "an i64 index below " + std::to_string(site.count());
  case Holds::Bytes:
    if (i64 && *i64 >= 0)
      return std::nullopt;
    return "a non-negative i64 byte count";
  case Holds::RowDims:
    if (i64 && *i64 >= 1)
      return std::nullopt;
    return "a positive i64 count of leading dims";
  case Holds::StateName:
    if (string && !string.getValue().empty())
      return std::nullopt;
    return "a non-empty string";
  case Holds::Name:
    if (string)
      return std::nullopt;
    return "a string";
  case Holds::KernelKind:
    if (string &&
        (string.getValue() == "fusion" || string.getValue() == "library" ||
         string.getValue() == "external"))
      return std::nullopt;
    return "\"fusion\", \"library\" or \"external\"";
  case Holds::Offsets: {
    // -1: the caller's buffer; -2: the state argument it updates, in place.
    auto offsets = dyn_cast<DenseI64ArrayAttr>(value);
    if (offsets &&
        llvm::all_of(offsets.asArrayRef(), [](int64_t o) { return o >= -2; }))
      return std::nullopt;
    return "an array<i64> of arena offsets, -1 or -2";
  }
  case Holds::ArgumentIndices: {
    auto indices = dyn_cast<DenseI64ArrayAttr>(value);
    const auto arguments =
        int64_t(cast<FunctionOpInterface>(site.op).getNumArguments());
    if (indices && !indices.empty() &&
        llvm::all_of(indices.asArrayRef(),
                     [&](int64_t i) { return i >= 0 && i < arguments; }))
      return std::nullopt;
    return "a non-empty array<i64> of argument indices below " +
           std::to_string(arguments);
  }
  }
  llvm_unreachable("unknown value kind");
}

// Two roles on one argument or result, reported at the later name of the two.
LogicalResult verifyOneRole(const AbiAttr &attr, const Site &site) {
  for (NamedAttribute other : site.attrsAt(site.index)) {
    if (other.getName().strref() == attr.name)
      return success();
    if (const AbiAttr *known = lookup(other.getName().strref());
        known && known->isRole)
      return site.op->emitOpError()
             << site.describe() << " is both '" << other.getName().strref()
             << "' and '" << attr.name << "'";
  }
  return success();
}

// An index repeated by an earlier argument or result.
LogicalResult verifyUniqueIndex(const AbiAttr &attr, Attribute value,
                                const Site &site) {
  for (unsigned at = 0; at < site.index; ++at)
    if (DictionaryAttr earlier = site.attrsAt(at);
        earlier && earlier.get(attr.name) == value)
      return site.op->emitOpError()
             << "'" << attr.name << "' on " << site.describe()
             << " repeats the index of "
             << Site{site.op, site.kind, at}.describe();
  return success();
}

LogicalResult verifyAbiAttr(NamedAttribute named, const Site &site) {
  const AbiAttr *attr = lookup(named.getName().strref());
  if (!attr)
    return site.op->emitOpError()
           << "'" << named.getName().strref() << "' on " << site.describe()
           << " is not a kiln host-ABI attribute";
  if (!site.accepts(attr->place))
    return site.op->emitOpError()
           << "'" << attr->name << "' goes on " << placeName(attr->place)
           << ", not on " << site.describe();
  if (std::optional<std::string> expected =
          mismatch(*attr, named.getValue(), site))
    return site.op->emitOpError()
           << "'" << attr->name << "' on " << site.describe() << " must be "
           << *expected << ", not " << named.getValue();
  if (attr->isRole && failed(verifyOneRole(*attr, site)))
    return failure();
  if (attr->holds == Holds::Index)
    return verifyUniqueIndex(*attr, named.getValue(), site);
  return success();
}

} // namespace

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  return verifyAbiAttr(attr, Site{op, Site::Op, -1});
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned /*regionIndex*/,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  return verifyAbiAttr(attr, Site{op, Site::Argument, argIndex});
}

LogicalResult KilnDialect::verifyRegionResultAttribute(Operation *op,
                                                       unsigned /*regionIndex*/,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  return verifyAbiAttr(attr, Site{op, Site::Result, resultIndex});
}
