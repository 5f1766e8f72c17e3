#include "kiln/nn/Sequential.h"

#include <algorithm>

namespace kiln::nn {

std::shared_ptr<Module> ModuleListBase::ptr(int64_t index, const SourceLoc& loc) const {
  const int64_t n = int64_t(modules_.size());
  if (index < -n || index >= n)
    throw Error::make(loc, name(), "index ", index, " is out of range for ", n, " modules");
  return modules_[size_t(index < 0 ? index + n : index)];
}

void ModuleListBase::add(std::shared_ptr<Module> module, std::string name, const SourceLoc& loc) {
  register_module(std::move(name), module, loc);
  modules_.push_back(std::move(module));
}

void ModuleListBase::replaceChild(const std::string& name, std::shared_ptr<Module> module,
                                  const SourceLoc& loc) {
  OrderedDict<std::shared_ptr<Module>> before = named_children();
  Module::replaceChild(name, module, loc);  // the error when there is no such child
  std::replace(modules_.begin(), modules_.end(), before.at(name), module);
}

void SequentialImpl::replaceChild(const std::string& name, std::shared_ptr<Module>,
                                  const SourceLoc& loc) {
  throw Error::make(loc, "replace_module", "cannot replace child '", name, "' of a Sequential: its "
                    "forward calls are bound to the children's types when they are added; build a "
                    "new Sequential");
}

Tensor SequentialImpl::forward(const Tensor& x, const SourceLoc& loc) {
  if (calls_.empty()) throw Error::make(loc, name(), "forward() on an empty Sequential");
  detail::ForwardScope scope(*this, {&x, 1});  // `model->forward(x)` bypasses the holder
  Tensor y = x;
  for (const auto& call : calls_) y = call(y, loc);
  scope.outputs({&y, 1});
  return y;
}

}  // namespace kiln::nn
