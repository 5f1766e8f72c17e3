// Containers: Sequential (children called in order, each output feeding the next) and
// ModuleList (an indexable list of children without a forward), as in LibTorch.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

namespace detail {

template <class T>
struct IsSharedPtr : std::false_type {};
template <class T>
struct IsSharedPtr<std::shared_ptr<T>> : std::true_type {};

// The shared module behind a holder, a shared_ptr, or a module passed by value.
template <class M>
auto sharedModule(M&& module) {
  using T = std::decay_t<M>;
  if constexpr (requires { typename T::ContainedType; }) {
    return module.ptr();
  } else if constexpr (IsSharedPtr<T>::value) {
    static_assert(std::is_base_of_v<Module, typename T::element_type>, "not a module");
    return std::forward<M>(module);
  } else {
    static_assert(std::is_base_of_v<Module, T>, "not a module, a holder or a shared_ptr to one");
    return std::make_shared<T>(std::forward<M>(module));
  }
}

// One argument that is a Self: copy construction, not a list of one child.
template <class Self, class... Args>
inline constexpr bool kIsCopyOf =
    sizeof...(Args) == 1 && (std::is_base_of_v<Self, std::decay_t<Args>> && ...);

}  // namespace detail

// Children indexed from 0, in order. Shared by Sequential and ModuleList.
class ModuleListBase : public Module {
 public:
  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  // The child at `index` (negative counts from the end); kiln::Error when out of range.
  std::shared_ptr<Module> ptr(int64_t index, const SourceLoc& loc = SourceLoc::current()) const;
  template <class M>
  std::shared_ptr<M> ptr(int64_t index, const SourceLoc& loc = SourceLoc::current()) const {
    return std::dynamic_pointer_cast<M>(ptr(index, loc));
  }
  std::shared_ptr<Module> operator[](int64_t index) const { return ptr(index); }
  // The child at `index` as an M; kiln::Error if it is not one.
  template <class M>
  M& at(int64_t index, const SourceLoc& loc = SourceLoc::current()) const {
    auto* m = dynamic_cast<M*>(ptr(index, loc).get());
    if (!m) throw Error::make(loc, name(), "module ", index, " is not of the requested type");
    return *m;
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 protected:
  using Module::Module;
  // Registers the child under its index (or `name`).
  void add(std::shared_ptr<Module> module, std::string name, const SourceLoc& loc);
  // Keeps the indexed list in step with the named children.
  void replaceChild(const std::string& name, std::shared_ptr<Module> module,
                    const SourceLoc& loc) override;

  std::vector<std::shared_ptr<Module>> modules_;
};

class SequentialImpl : public ModuleListBase {
 public:
  SequentialImpl() = default;
  // nn::Sequential(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 10)).
  template <class... Modules>
    requires(sizeof...(Modules) > 0 && !detail::kIsCopyOf<SequentialImpl, Modules...>)
  explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  // Appends a module (holder, shared_ptr or value) whose forward maps a Tensor to a Tensor;
  // it is named by its index unless `name` is given.
  template <class M>
  void push_back(M&& module, const SourceLoc& loc = SourceLoc::current()) {
    push_back(std::to_string(size()), std::forward<M>(module), loc);
  }
  template <class M>
  void push_back(std::string name, M&& module, const SourceLoc& loc = SourceLoc::current()) {
    auto shared = detail::sharedModule(std::forward<M>(module));
    using T = typename decltype(shared)::element_type;
    static_assert(requires(T& m, const Tensor& x) { { m.forward(x) } -> std::convertible_to<Tensor>; },
                  "a module in a Sequential needs Tensor forward(const Tensor&)");
    T* raw = shared.get();  // the shared_ptr stays in modules_ while the call exists
    add(std::move(shared), std::move(name), loc);
    calls_.push_back([raw](const Tensor& x, const SourceLoc& at) -> Tensor {
      return detail::callForward(*raw, at, x);
    });
  }
  template <class Container>
  void extend(const Container& modules) {
    for (const auto& m : modules) push_back(m);
  }

  // Each child's forward applied in order; kiln::Error when empty.
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());

 protected:
  void replaceChild(const std::string& name, std::shared_ptr<Module> module,
                    const SourceLoc& loc) override;

 private:
  std::vector<std::function<Tensor(const Tensor&, const SourceLoc&)>> calls_;
};
KILN_MODULE(Sequential);

class ModuleListImpl : public ModuleListBase {
 public:
  ModuleListImpl() = default;
  template <class... Modules>
    requires(sizeof...(Modules) > 0 && !detail::kIsCopyOf<ModuleListImpl, Modules...>)
  explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  template <class M>
  void push_back(M&& module, const SourceLoc& loc = SourceLoc::current()) {
    add(detail::sharedModule(std::forward<M>(module)), std::to_string(size()), loc);
  }
  template <class Container>
  void extend(const Container& modules) {
    for (const auto& m : modules) push_back(m);
  }
};
KILN_MODULE(ModuleList);

}  // namespace kiln::nn
