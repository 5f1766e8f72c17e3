// What every oneDNN kernel shares: the CPU engine, a stream per thread, primitives that can
// run on several threads at once, and a cache of weights reordered into oneDNN's layouts.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kiln/core/Tensor.h"

namespace kiln::kernels::onednn {

// The one CPU engine of the process.
dnnl::engine& engine();

// Makes this thread's OpenMP default team size, which oneDNN's primitives are built for and
// run with, Kiln's thread count (get_num_threads()), as ATen does before its oneDNN calls.
// Every op that creates or runs a primitive calls it first.
void useKilnThreads();

// This thread's stream on engine(). Streams are not shared between threads.
dnnl::stream& stream();

// Attributes asking a primitive to take its scratchpad from the caller
// (scratchpad_mode::user). With the default library scratchpad, oneDNN 2.x lets a
// primitive run only on the thread that created it; with this one, a cached primitive may
// run on any thread, and on several at once.
dnnl::primitive_attr userScratchpad();

// A primitive built with userScratchpad(), and the scratchpad it asks for.
struct Primitive {
  dnnl::primitive primitive;
  dnnl::memory::desc scratchpad;

  // Runs on this thread's stream with this thread's scratchpad buffer and waits for it.
  void run(std::unordered_map<int, dnnl::memory> args) const;
};

// makePrimitive<dnnl::convolution_forward>(pd): pd must have been built with userScratchpad().
template <class P>
Primitive makePrimitive(const typename P::primitive_desc& pd) {
  return Primitive{P(pd), pd.scratchpad_desc()};
}

// Copies values from the layout `from` into the layout `to` (same dims).
Primitive makeReorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to);

// f32 `dims` read with `strides` (in elements), or nullopt when oneDNN cannot describe
// them: a stride <= 0 on a dim longer than 1 (broadcast), or dims whose strides interleave
// (oneDNN calls them overlapping). Strides of dims of size 1 are
// normalised, so they never make two descriptions of the same elements differ.
std::optional<dnnl::memory::desc> stridedDesc(const Shape& dims, const Strides& strides);

// The values of f32 `w`, read through `plain` (a description of w's own elements, from
// stridedDesc), reordered into the layout `target`. The result is cached, keyed by w's
// storage, offset and both layouts, and reused while the storage's version counter is
// unchanged: every in-place op bumps it, so an update of the weights is never missed.
// Writes that bypass the dispatcher (through data_ptr() or into from_blob memory) do not
// bump it and are not seen, as with autograd's check of saved tensors. Bounded in entries
// and bytes, least recently used first out; entries whose storage died go first.
dnnl::memory reorderedWeights(const Tensor& w, const dnnl::memory::desc& plain,
                              const dnnl::memory::desc& target);

struct WeightCacheStats {
  uint64_t hits = 0, misses = 0;
  size_t entries = 0, bytes = 0;
};
WeightCacheStats weightCacheStats();

// A small least-recently-used map for caches of a few dozen entries, searched linearly.
// Not synchronised: callers hold their own lock.
template <class Key, class Value>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}

  // The value stored under `key`, now the most recently used, or null.
  Value* find(const Key& key) {
    for (auto it = items_.begin(); it != items_.end(); ++it)
      if (it->first == key) {
        items_.splice(items_.begin(), items_, it);
        return &items_.front().second;
      }
    return nullptr;
  }

  // Stores `value` under `key` (replacing an entry with that key), evicting the least
  // recently used entries beyond the capacity.
  Value& put(Key key, Value value) {
    eraseIf([&](const Key& k, const Value&) { return k == key; });
    items_.emplace_front(std::move(key), std::move(value));
    while (items_.size() > capacity_) items_.pop_back();
    return items_.front().second;
  }

  template <class Pred>
  void eraseIf(Pred pred) {
    items_.remove_if([&](const std::pair<Key, Value>& kv) { return pred(kv.first, kv.second); });
  }

  // Drops the least recently used entry; false when empty.
  bool popOldest() {
    if (items_.empty()) return false;
    items_.pop_back();
    return true;
  }

  size_t size() const { return items_.size(); }

  template <class Cost>
  size_t total(Cost cost) const {
    size_t sum = 0;
    for (const auto& [key, value] : items_) sum += cost(value);
    return sum;
  }

 private:
  size_t capacity_;
  std::list<std::pair<Key, Value>> items_;
};

// Plans (primitives and what goes with them) by the geometry they were built for, as a
// list of integers. Building one queries oneDNN, tens of microseconds; a lookup costs well
// under one. Thread-safe: plans are immutable and their primitives use userScratchpad().
template <class Plan>
class PlanCache {
 public:
  explicit PlanCache(size_t capacity) : plans_(capacity) {}

  template <class Make>
  std::shared_ptr<const Plan> get(std::vector<int64_t> key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto* plan = plans_.find(key)) return *plan;
    }
    std::shared_ptr<const Plan> plan = make();  // outside the lock: other lookups go on
    std::lock_guard<std::mutex> lock(mutex_);
    return plans_.put(std::move(key), std::move(plan));
  }

 private:
  std::mutex mutex_;
  LruCache<std::vector<int64_t>, std::shared_ptr<const Plan>> plans_;
};

}  // namespace kiln::kernels::onednn
