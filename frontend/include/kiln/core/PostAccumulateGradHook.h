// Post-accumulate-grad hooks, PyTorch's Tensor.register_post_accumulate_grad_hook: a
// function backward() runs on a leaf once that pass has accumulated all of its gradient
// into the leaf's .grad, while the rest of the pass still has to run. Data-parallel
// training starts a bucket's all-reduce from them (nn::DistributedDataParallel), so the
// communication overlaps the backward of the earlier layers.
//
//   auto handle = autograd::register_post_accumulate_grad_hook(w, [](const Tensor& w) {
//     use(w.grad());                       // complete for this backward()
//   });
//   handle.remove();
//
// A free function rather than a Tensor method (LibTorch's C++ Tensor has none), so that
// adding it left every file that includes Tensor.h alone.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "kiln/core/Tensor.h"

namespace kiln::autograd {

using PostAccumulateGradHook = std::function<void(const Tensor& leaf)>;

// Unregisters its hook with remove() (torch.utils.hooks.RemovableHandle); destroying the
// handle leaves the hook in place. remove() twice, or on a default handle, does nothing.
class RemovableHandle {
 public:
  RemovableHandle() = default;
  explicit RemovableHandle(uint64_t id) : id_(id) {}
  void remove();

 private:
  uint64_t id_ = 0;
};

// Runs `hook(leaf)` in every backward() (not autograd::grad(), which accumulates into no
// .grad) that sends `leaf` a gradient, once the pass is done with every node that could
// send it one, before backward() returns: once per pass however many uses of the leaf
// the pass went through. A leaf's hooks run in the order they were registered; leaves'
// in the order their gradients become complete (the last layer's parameters first). A
// hook's exception ends the backward pass. kiln::Error when `leaf` is undefined, not a
// leaf (it has a grad_fn) or does not require grad.
RemovableHandle register_post_accumulate_grad_hook(const Tensor& leaf, PostAccumulateGradHook hook,
                                                   const SourceLoc& loc = SourceLoc::current());

namespace detail {
// For the backward pass (Autograd.cpp): whether `leaf` has hooks, and running them.
bool hasPostAccumulateGradHooks(const TensorImpl* leaf);
void runPostAccumulateGradHooks(const std::shared_ptr<TensorImpl>& leaf);
}  // namespace detail

}  // namespace kiln::autograd
