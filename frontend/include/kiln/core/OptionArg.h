// KILN_ARG, the field of an options struct in LibTorch's style (torch's TORCH_ARG):
// `LinearOptions(4, 2).bias(false)`, `DataLoaderOptions(64).workers(2)`.
#pragma once

#include <utility>

// A field `name` of type T with `name()` to read it and `name(value)` to set it and return
// the options, so settings chain (torch's TORCH_ARG).
#define KILN_ARG(T, name)                                    \
 public:                                                     \
  auto name(const T& new_##name)->decltype(*this) {          \
    this->name##_ = new_##name;                              \
    return *this;                                            \
  }                                                          \
  auto name(T&& new_##name)->decltype(*this) {               \
    this->name##_ = std::move(new_##name);                   \
    return *this;                                            \
  }                                                          \
  const T& name() const noexcept { return this->name##_; }   \
  T& name() noexcept { return this->name##_; }               \
                                                             \
 private:                                                    \
  T name##_
