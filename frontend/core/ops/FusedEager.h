// When a composite op (gelu's tanh form, softmax, layer_norm) may run as one fused eager
// kernel instead of its primitive ops.
#pragma once

#include <initializer_list>

#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Tensor.h"

namespace kiln::ops {

// Composites are made of primitives so the tracer records their insides and autograd
// differentiates them. Eagerly, with no tracer hook installed and no gradient to record,
// nobody can tell the ops apart from one kernel that computes the same float operations
// in the same order, and that kernel reads memory once instead of once per op. Only f32
// and f64 (the narrower dtypes round after every primitive, which a fused kernel would
// have to repeat to stay bitwise equal), and only host values on the CPU.
inline bool mayFuseEagerly(std::initializer_list<const Tensor*> inputs) {
  if (currentDispatchHook()) return false;
  bool grad = isGradEnabled();
  for (const Tensor* t : inputs) {
    if (!t->defined()) continue;
    if (t->is_placeholder()) return false;  // the ops raise the leaked-placeholder error
    if (!t->device().isCPU()) return false;
    if (grad && t->requires_grad()) return false;
    if (t->dtype() != kFloat32 && t->dtype() != kFloat64) return false;
  }
  return true;
}

}  // namespace kiln::ops
