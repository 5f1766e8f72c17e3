// The callback table (see HostCallbacks.h).
#include "runtime/HostCallbacks.h"

namespace kiln::runtime {

int64_t CallbackTable::add(HostCallback callback) {
  callbacks_.push_back(std::move(callback));
  return int64_t(callbacks_.size()) - 1;
}

const HostCallback* CallbackTable::find(int64_t callee) const {
  if (callee < 0 || callee >= int64_t(callbacks_.size())) return nullptr;
  return &callbacks_[size_t(callee)];
}

}  // namespace kiln::runtime
