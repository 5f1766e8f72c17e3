// kiln/torch.h: compiles a LibTorch program with Kiln when it replaces
// `#include <torch/torch.h>`. Kiln spells its API as LibTorch does, so the shim is the
// namespace alias plus LibTorch's macro names; docs/LIBTORCH.md lists what still differs.
#pragma once

#include <cmath>  // LibTorch programs use std::isnan without including it
#include <optional>

#include "kiln/kiln.h"

namespace torch = kiln;

// torch::optional, as LibTorch's datasets spell size()'s type.
namespace kiln {
using std::nullopt;
using std::optional;
}  // namespace kiln

// TORCH_MODULE(Linear) declares the holder of LinearImpl.
#define TORCH_MODULE(Name) KILN_MODULE(Name)
#define TORCH_MODULE_IMPL(Name, ImplType) KILN_MODULE_IMPL(Name, ImplType)
// TORCH_ARG(double, lr) = 0.1; in an options struct.
#define TORCH_ARG(T, name) KILN_ARG(T, name)
// AT_ASSERT(cond), as LibTorch's examples check a loss: a kiln::Error naming the condition.
#define AT_ASSERT(cond) \
  ((cond) ? void(0) : throw ::kiln::Error::make(::kiln::SourceLoc::current(), "AT_ASSERT", #cond " failed"))
