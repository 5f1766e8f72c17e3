// ModuleHolder and KILN_MODULE: `nn::Linear(784, 256)` makes a shared LinearImpl and holds
// it, so modules are passed and stored by reference as in LibTorch (TORCH_MODULE).
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include "kiln/nn/Module.h"

namespace kiln::nn {

namespace detail {
template <class T, class Contained>
inline constexpr bool kIsHolderOf = std::is_base_of_v<ModuleHolder<Contained>, std::decay_t<T>>;

// Calls m.forward(args..., loc) where forward takes a location (every built-in module),
// else m.forward(args...).
template <class M, class... Args>
decltype(auto) invokeForward(M& m, const SourceLoc& loc, Args&&... args) {
  if constexpr (requires { m.forward(std::forward<Args>(args)..., loc); })
    return m.forward(std::forward<Args>(args)..., loc);
  else
    return m.forward(std::forward<Args>(args)...);
}

// invokeForward, reported to the thread's ForwardObserver.
template <class M, class... Args>
Tensor observedForward(M& m, const SourceLoc& loc, const Args&... args) {
  const Tensor inputs[] = {args...};
  ForwardScope scope(m, inputs);
  Tensor output = invokeForward(m, loc, args...);
  scope.outputs({&output, 1});
  return output;
}

// The forward call of holders and containers: invokeForward, and when a ForwardObserver
// is installed and the call maps Tensors to a Tensor, reported to it.
template <class M, class... Args>
decltype(auto) callForward(M& m, const SourceLoc& loc, Args&&... args) {
  using Result = decltype(invokeForward(m, loc, std::forward<Args>(args)...));
  if constexpr (std::is_same_v<Result, Tensor> &&
                (std::is_same_v<std::remove_cvref_t<Args>, Tensor> && ...)) {
    if (currentForwardObserver()) return observedForward(m, loc, args...);
  }
  return invokeForward(m, loc, std::forward<Args>(args)...);
}
}  // namespace detail

template <class Contained>
class ModuleHolder {
 public:
  using ContainedType = Contained;

  // Default-constructs the module where it has a default constructor (nn::ReLU()).
  ModuleHolder()
    requires std::is_default_constructible_v<Contained>
      : impl_(std::make_shared<Contained>()) {}
  // An empty holder, to be assigned later (`nn::Linear fc{nullptr};`).
  ModuleHolder(std::nullptr_t) {}  // NOLINT: implicit, as LibTorch
  ModuleHolder(std::shared_ptr<Contained> module) : impl_(std::move(module)) {}  // NOLINT
  // Constructs the module from the arguments of its constructor.
  template <class Head, class... Tail>
    requires(!(sizeof...(Tail) == 0 && (detail::kIsHolderOf<Head, Contained> ||
                                        std::is_convertible_v<Head, std::shared_ptr<Contained>>)))
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}

  Contained* operator->() const { return checked(); }
  Contained& operator*() const { return *checked(); }
  Contained* get() const { return impl_.get(); }
  const std::shared_ptr<Contained>& ptr() const { return impl_; }
  bool is_empty() const noexcept { return impl_ == nullptr; }
  explicit operator bool() const noexcept { return impl_ != nullptr; }

  // sequential[i], module_list[i].
  template <class Arg>
  decltype(auto) operator[](Arg&& arg) const
    requires requires(Contained& m) { m[std::forward<Arg>(arg)]; }
  {
    return (*checked())[std::forward<Arg>(arg)];
  }

  // module(x) and loss(input, target): forward with the caller's source line.
  Tensor operator()(const Tensor& x, const SourceLoc& loc = SourceLoc::current()) const
    requires requires(Contained& m, const Tensor& t) { m.forward(t); }
  {
    return detail::callForward(*checked(), loc, x);
  }
  Tensor operator()(const Tensor& a, const Tensor& b,
                    const SourceLoc& loc = SourceLoc::current()) const
    requires requires(Contained& m, const Tensor& t) { m.forward(t, t); }
  {
    return detail::callForward(*checked(), loc, a, b);
  }

 protected:
  Contained* checked(const SourceLoc& loc = SourceLoc::current()) const {
    if (!impl_)
      throw Error::make(loc, "ModuleHolder", "accessing an empty holder (constructed from nullptr "
                        "and never assigned a module)");
    return impl_.get();
  }

  std::shared_ptr<Contained> impl_;
};

template <class Contained>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Contained>& holder) {
  return os << *holder;
}

}  // namespace kiln::nn

// Declares the holder `Name` of `NameImpl` (torch's TORCH_MODULE).
#define KILN_MODULE_IMPL(Name, ImplType)                        \
  class Name : public ::kiln::nn::ModuleHolder<ImplType> {      \
   public:                                                      \
    using ::kiln::nn::ModuleHolder<ImplType>::ModuleHolder;     \
    using ::kiln::nn::ModuleHolder<ImplType>::get;              \
  }
#define KILN_MODULE(Name) KILN_MODULE_IMPL(Name, Name##Impl)
