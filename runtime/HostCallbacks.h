// Host code a traced program calls back into (`kiln.callback callee = N`): the table the
// tracer fills while it records, and every backend (the interpreter, compiled programs)
// looks callees up in when the program runs.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln::runtime {

// One callback: tensors in, tensors out.
using HostCallback = std::function<std::vector<Tensor>(std::span<const Tensor>)>;

// A trace's callbacks: `callee` indexes it.
class CallbackTable {
 public:
  // Appends `callback` and returns its callee id (0, 1, ...).
  int64_t add(HostCallback callback);
  // The callback with id `callee`, or null.
  const HostCallback* find(int64_t callee) const;
  size_t size() const { return callbacks_.size(); }

 private:
  std::vector<HostCallback> callbacks_;
};

}  // namespace kiln::runtime
