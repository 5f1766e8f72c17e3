// The registry of post-accumulate-grad hooks (kiln/core/PostAccumulateGradHook.h). Kept
// beside the tensors rather than in TensorImpl so that a tensor without hooks pays nothing;
// backward() asks it only about the leaves its pass reaches.
#include "kiln/core/PostAccumulateGradHook.h"

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::autograd {

namespace {

struct Registered {
  uint64_t id;
  std::weak_ptr<TensorImpl> leaf;  // a dead leaf's address may be reused by a new tensor
  PostAccumulateGradHook hook;
};

struct Registry {
  std::mutex mutex;
  std::unordered_map<const TensorImpl*, std::vector<Registered>> byLeaf;
  std::atomic<size_t> count{0};  // lets a pass with no hooks anywhere skip the lock
  uint64_t nextId = 1;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: hooks may be removed at exit
  return *r;
}

// The hooks registered on `leaf` itself, not on an earlier tensor at its address (those
// are dropped). Caller holds the lock.
std::vector<Registered>* liveHooks(Registry& r, const TensorImpl* leaf) {
  auto it = r.byLeaf.find(leaf);
  if (it == r.byLeaf.end()) return nullptr;
  if (it->second.front().leaf.expired()) {
    r.count -= it->second.size();
    r.byLeaf.erase(it);
    return nullptr;
  }
  return &it->second;
}

}  // namespace

RemovableHandle register_post_accumulate_grad_hook(const Tensor& leaf, PostAccumulateGradHook hook,
                                                   const SourceLoc& loc) {
  constexpr const char* kOp = "register_post_accumulate_grad_hook";
  if (!leaf.defined()) throw Error::make(loc, kOp, "called on an undefined tensor");
  if (!leaf.is_leaf())
    throw Error::make(loc, kOp, "the tensor (shape ", leaf.sizes(), ") is not a leaf: it has a "
                      "grad_fn, and only leaves accumulate a .grad");
  if (!leaf.requires_grad())
    throw Error::make(loc, kOp, "the tensor (shape ", leaf.sizes(), ") does not require grad");
  if (!hook) throw Error::make(loc, kOp, "got an empty hook");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  liveHooks(r, leaf.impl());  // drops a dead tensor's hooks at this address
  const uint64_t id = r.nextId++;
  r.byLeaf[leaf.impl()].push_back(Registered{id, leaf.implPtr(), std::move(hook)});
  ++r.count;
  return RemovableHandle(id);
}

void RemovableHandle::remove() {
  if (id_ == 0) return;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (auto it = r.byLeaf.begin(); it != r.byLeaf.end(); ++it) {
    std::vector<Registered>& hooks = it->second;
    for (auto h = hooks.begin(); h != hooks.end(); ++h) {
      if (h->id != id_) continue;
      hooks.erase(h);
      --r.count;
      if (hooks.empty()) r.byLeaf.erase(it);
      id_ = 0;
      return;
    }
  }
  id_ = 0;
}

namespace detail {

bool hasPostAccumulateGradHooks(const TensorImpl* leaf) {
  Registry& r = registry();
  if (r.count.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard lock(r.mutex);
  return liveHooks(r, leaf) != nullptr;
}

void runPostAccumulateGradHooks(const std::shared_ptr<TensorImpl>& leaf) {
  std::vector<PostAccumulateGradHook> hooks;
  {
    // Copied out, so a hook may register or remove hooks.
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (std::vector<Registered>* registered = liveHooks(r, leaf.get()))
      for (const Registered& h : *registered) hooks.push_back(h.hook);
  }
  const Tensor tensor(leaf);
  for (const PostAccumulateGradHook& hook : hooks) hook(tensor);
}

}  // namespace detail

}  // namespace kiln::autograd
