// Shape and dtype rules shared by several ops of the table.
#include "frontend/core/ops/ShapeRules.h"

#include "kiln/core/Error.h"

namespace kiln::ops {

namespace {

bool belongs(DType dtype, DTypeClass cls) {
  switch (cls) {
    case DTypeClass::Any: return true;
    case DTypeClass::Floating: return isFloatingPoint(dtype);
    case DTypeClass::Numeric: return dtype != kBool;
    case DTypeClass::Bool: return dtype == kBool;
  }
  return false;
}

const char* describe(DTypeClass cls) {
  switch (cls) {
    case DTypeClass::Any: return "any";
    case DTypeClass::Floating: return "a floating-point";
    case DTypeClass::Numeric: return "a numeric (non-bool)";
    case DTypeClass::Bool: return "a bool";
  }
  return "";
}

}  // namespace

void requireDType(const OpDef& op, const TensorMeta& meta, DTypeClass cls, const SourceLoc& loc) {
  if (!belongs(meta.dtype, cls))
    throw TypeError::make(loc, op.name, "expected ", describe(cls), " tensor, got ", meta.dtype,
                          " tensor of shape ", meta.shape);
}

void requireSameShapeAndDType(const OpDef& op, std::span<const TensorMeta> inputs,
                              const SourceLoc& loc) {
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].shape != inputs[0].shape)
      throw ShapeError::make(loc, op.name, "operand ", i, " has shape ", inputs[i].shape,
                             " but operand 0 has shape ", inputs[0].shape);
    if (inputs[i].dtype != inputs[0].dtype)
      throw TypeError::make(loc, op.name, "operand ", i, " has dtype ", inputs[i].dtype,
                            " but operand 0 has dtype ", inputs[0].dtype);
  }
}

std::vector<TensorMeta> sameAsFirst(const OpDef&, std::span<const TensorMeta> inputs,
                                    const Attrs&, const SourceLoc&) {
  return {inputs[0]};
}

std::vector<TensorMeta> withDType(const TensorMeta& meta, DType dtype) {
  TensorMeta out = meta;
  out.dtype = dtype;
  return {out};
}

std::vector<TensorMeta> factoryShape(const OpDef& op, std::span<const TensorMeta>,
                                     const Attrs& attrs, const SourceLoc& loc) {
  const Shape& shape = attrs.get<Shape>("shape");
  checkedNumel(shape, op.name, loc);
  return {TensorMeta{shape, attrs.get<DType>("dtype"), detail::factoryDevice()}};
}

}  // namespace kiln::ops
