// Shape and dtype rules shared by several ops of the table.
#pragma once

#include <span>
#include <vector>

#include "kiln/core/OpDef.h"

namespace kiln::ops {

enum class DTypeClass { Any, Floating, Numeric, Bool };

// Throws TypeError unless `meta` belongs to `cls`, naming the op, dtype and shape.
void requireDType(const OpDef& op, const TensorMeta& meta, DTypeClass cls, const SourceLoc& loc);

// All operands have the first one's shape and dtype (primitive ops see no implicit
// broadcasting or promotion: the public functions insert expand and convert).
void requireSameShapeAndDType(const OpDef& op, std::span<const TensorMeta> inputs,
                              const SourceLoc& loc);

// Result rules: the first operand's meta; the same with another dtype.
std::vector<TensorMeta> sameAsFirst(const OpDef& op, std::span<const TensorMeta> inputs,
                                    const Attrs& attrs, const SourceLoc& loc);
std::vector<TensorMeta> withDType(const TensorMeta& meta, DType dtype);

// Factories (no operands): the "shape" and "dtype" attributes, on the CPU.
std::vector<TensorMeta> factoryShape(const OpDef& op, std::span<const TensorMeta> inputs,
                                     const Attrs& attrs, const SourceLoc& loc);

// PyTorch's result_type for two tensors: dimensioned tensors decide unless a 0-d tensor
// is of a higher category (bool < integral < floating).
DType resultType(const Tensor& a, const Tensor& b);

}  // namespace kiln::ops
