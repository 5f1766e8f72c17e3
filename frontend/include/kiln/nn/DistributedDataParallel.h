// nn::DistributedDataParallel: one model replica per rank of an MPI job, kept identical by
// averaging gradients over the ranks (PyTorch's DistributedDataParallel, eager; link
// //frontend:distributed). docs/DISTRIBUTED.md has a training loop.
//
//   auto model = Net();  nn::DistributedDataParallel ddp(model);  // rank 0's weights
//   loss.backward();  ddp.synchronize_gradients();  optimizer.step();
//
// As PyTorch's, eager DDP starts a bucket's all_reduce from inside backward(), as soon as
// the last of its gradients is accumulated (a post-accumulate-grad hook on each
// parameter), so the communication runs while the backward of the earlier layers does;
// synchronize_gradients() starts the buckets backward did not complete and waits for all.
// Inside jit::trace and nn::Graph the hooks start nothing: synchronize_gradients() records
// the collectives and kiln-schedule-collectives places them (docs/DISTRIBUTED.md).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "kiln/core/PostAccumulateGradHook.h"
#include "kiln/distributed/Distributed.h"
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

  // Unregisters the gradient hooks. A bucket started by a backward without the
  // synchronize_gradients() that waits for it is still in flight: wait first.
  ~DistributedDataParallel();
  // The hooks hold `this`.
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  // Replaces every parameter's gradient with its mean over the ranks (a parameter without
  // a gradient counts as zeros, and gets one). Call after backward and before the
  // optimizer's step, on every rank; does nothing inside no_sync(). Waits for the buckets
  // backward() started, after starting, in bucket order, those it did not (a parameter
  // got no gradient) or whose gradients changed after their start (a second backward).
  // Every rank's backward must complete the same buckets in the same order (the same
  // graph), as MPI matches collectives by the order they are started in.
  void synchronize_gradients(const SourceLoc& loc = SourceLoc::current());

  // While the guard lives, backward() starts no bucket and synchronize_gradients() does
  // nothing, so gradients accumulate locally; the first backward and synchronize after it
  // average the accumulated ones (PyTorch's no_sync(), for gradient accumulation).
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
  // How many buckets' all_reduces backward() has started since the last
  // synchronize_gradients() (they are in flight, or done and not yet copied back).
  size_t buckets_started() const;

 private:
  // A bucket's all_reduce from the hooks: how many of its gradients this backward has
  // completed, and once all have, its flat gradients and the collective in flight.
  struct BucketState {
    size_t ready = 0;
    bool started = false;
    bool stale = false;  // a gradient changed after the start
    Tensor flat;
    distributed::Work work;
  };
  void onGradientReady(size_t bucket);
  void start(size_t bucket, const SourceLoc& loc);

  std::shared_ptr<Module> module_;
  DistributedDataParallelOptions options_;
  std::vector<std::vector<Tensor>> buckets_;
  std::vector<BucketState> state_;
  std::vector<autograd::RemovableHandle> hooks_;
  SourceLoc loc_;  // the construction's, for the collectives the hooks start
  bool syncing_ = true;
};

}  // namespace kiln::nn
