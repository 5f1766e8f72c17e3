// The op table's entry type: one OpDef per tensor op, holding everything the eager
// runtime, autograd and the tracer need to know about it (ARCHITECTURE.md §2, "One dispatcher").
#pragma once

#include <source_location>
#include <span>
#include <string_view>
#include <vector>

#include "kiln/core/Attrs.h"
#include "kiln/core/Device.h"
#include "kiln/core/DType.h"
#include "kiln/core/Shape.h"

namespace kiln {

class Tensor;

// What an op knows of a value before computing it.
struct TensorMeta {
  Shape shape;
  DType dtype = kFloat32;
  Device device = kCPU;
};

// Everything one call of an op sees; passed to shape rules, kernels and gradients.
struct OpArgs {
  std::span<const Tensor> inputs;
  const Attrs& attrs;
  const std::source_location& loc;
};

// Checks operands and attributes and returns the output metas. Errors are ShapeError or
// TypeError naming the op, the operands' shapes/dtypes and `loc`.
struct OpDef;
using ShapeFn = std::vector<TensorMeta> (*)(const OpDef& op, std::span<const TensorMeta> inputs,
                                            const Attrs& attrs, const std::source_location& loc);

// Computes into freshly allocated contiguous outputs.
using KernelFn = void (*)(const OpArgs& args, std::span<Tensor> outputs);

// For view ops (reshape, transpose, expand, slice): returns an output that shares the
// input's storage, so eager views cost no copy. The tracer still records the op.
using ViewFn = Tensor (*)(const OpArgs& args, const TensorMeta& output);

// Gradients of the inputs given the gradients of the outputs, written with ordinary
// frontend ops so a traced backward() records ordinary ops. An undefined Tensor stands
// for "no gradient" both ways.
struct GradArgs {
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<const Tensor> gradOutputs;
  const Attrs& attrs;
  const std::source_location& loc;
};
using GradFn = std::vector<Tensor> (*)(const GradArgs& args);

// Which saved values an op's gradient reads (shapes and dtypes are always available).
// Overwriting such a value in place before backward is reported at backward time.
enum GradReads : uint8_t { kReadsNothing = 0, kReadsInputs = 1, kReadsOutputs = 2, kReadsBoth = 3 };

struct OpDef {
  std::string_view name;    // the frontend's name: "add", "reshape"
  std::string_view kilnOp;  // the kiln dialect op it is recorded as: "kiln.add"
  ShapeFn shape = nullptr;
  KernelFn kernel = nullptr;  // exactly one of kernel and view is set
  ViewFn view = nullptr;
  GradFn grad = nullptr;  // null: not differentiable (comparisons, integer ops)
  GradReads gradReads = kReadsBoth;
  // Output element i reads only element i of each input (same shape), so the kernel may
  // write into an input it exactly aliases: in-place ops then need no temporary.
  bool elementwise = false;
};

}  // namespace kiln
