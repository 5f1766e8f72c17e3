// nn::DistributedDataParallel: one model replica per rank of an MPI job, kept identical by
// averaging gradients over the ranks (PyTorch's DistributedDataParallel, eager; link
// //frontend:distributed). docs/DISTRIBUTED.md has a training loop.
//
//   auto model = Net();  nn::DistributedDataParallel ddp(model);  // rank 0's weights
//   loss.backward();  ddp.synchronize_gradients();  optimizer.step();
//
// Kiln's autograd has no per-gradient hooks yet, so the averaging is not started from
// inside backward() as PyTorch's is: synchronize_gradients() starts every bucket's
// all_reduce at once after backward, then waits for them.
#pragma once

#include <memory>
#include <vector>

#include "kiln/nn/Module.h"
#include "kiln/nn/ModuleHolder.h"

namespace kiln::nn {

struct DistributedDataParallelOptions {
  // Gradients are averaged in buckets of at most this many MiB (one all_reduce each; a
  // larger parameter gets a bucket of its own), filled in reverse registration order,
  // the order backward produces them.
  double bucket_cap_mb = 25;
  // Whether construction also broadcasts the buffers (BatchNorm statistics) from rank 0.
  bool broadcast_buffers = true;
};

class DistributedDataParallel {
 public:
  // Broadcasts the module's parameters (and buffers) from rank 0, so every replica starts
  // from the same weights. Needs distributed::init(); kiln::Error for a null module or a
  // bucket_cap_mb that is not positive.
  explicit DistributedDataParallel(std::shared_ptr<Module> module,
                                   DistributedDataParallelOptions options = {},
                                   const SourceLoc& loc = SourceLoc::current());
  template <class M>
  explicit DistributedDataParallel(const ModuleHolder<M>& module,
                                   DistributedDataParallelOptions options = {},
                                   const SourceLoc& loc = SourceLoc::current())
      : DistributedDataParallel(std::static_pointer_cast<Module>(module.ptr()), options, loc) {}

  // Replaces every parameter's gradient with its mean over the ranks (a parameter without
  // a gradient counts as zeros, and gets one). Call after backward and before the
  // optimizer's step, on every rank; does nothing inside no_sync().
  void synchronize_gradients(const SourceLoc& loc = SourceLoc::current());

  // While the guard lives, synchronize_gradients() does nothing, so gradients accumulate
  // locally; the first synchronize after it averages the accumulated ones (PyTorch's
  // no_sync(), for gradient accumulation).
  class NoSyncGuard {
   public:
    explicit NoSyncGuard(DistributedDataParallel& ddp) : ddp_(ddp), previous_(ddp.syncing_) {
      ddp_.syncing_ = false;
    }
    ~NoSyncGuard() { ddp_.syncing_ = previous_; }
    NoSyncGuard(const NoSyncGuard&) = delete;
    NoSyncGuard& operator=(const NoSyncGuard&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  [[nodiscard]] NoSyncGuard no_sync() { return NoSyncGuard(*this); }

  Module& module() const { return *module_; }
  // The parameters of each bucket, in the order they are reduced.
  const std::vector<std::vector<Tensor>>& buckets() const { return buckets_; }

 private:
  std::shared_ptr<Module> module_;
  DistributedDataParallelOptions options_;
  std::vector<std::vector<Tensor>> buckets_;
  bool syncing_ = true;
};

}  // namespace kiln::nn
