// The shared oneDNN engine, per-thread streams and scratchpads, and the reordered-weights
// cache (see OneDnn.h).
#include "frontend/core/kernels/OneDnn.h"

#include <omp.h>

#include <memory>
#include <mutex>

#include "frontend/core/kernels/Scratch.h"
#include "kiln/core/Storage.h"
#include "kiln/core/ThreadPool.h"

namespace kiln::kernels::onednn {

dnnl::engine& engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

void useKilnThreads() {
  const int n = get_num_threads();
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

dnnl::stream& stream() {
  thread_local dnnl::stream stream(engine());
  return stream;
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void Primitive::run(std::unordered_map<int, dnnl::memory> args) const {
  if (const size_t bytes = scratchpad.get_size())
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad, engine(), threadScratch(ScratchSlot::kOneDnn, bytes)));
  primitive.execute(stream(), args);
  stream().wait();
}

Primitive makeReorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  return makePrimitive<dnnl::reorder>(
      dnnl::reorder::primitive_desc(engine(), from, engine(), to, userScratchpad()));
}

std::optional<dnnl::memory::desc> stridedDesc(const Shape& dims, const Strides& strides) {
  Strides s = contiguousStrides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    if (strides[d] <= 0) return std::nullopt;
    s[d] = strides[d];
  }
  // oneDNN accepts strides only where, sorted, each dim's stride covers the next one's
  // extent; a strided slice can interleave dims without overlapping elements and still
  // fail that (kiln-fuzz seed 400002). Those are nullopt too: the caller copies.
  try {
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, s);
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// ---- reordered weights ---------------------------------------------------------------------

namespace {

struct WeightKey {
  std::weak_ptr<Storage> storage;  // weak: the cache must not keep weights alive
  int64_t offset;
  dnnl::memory::desc plain, target;

  bool operator==(const WeightKey& o) const {
    // Same control block: a storage allocated where a dead one was is another storage.
    return !storage.owner_before(o.storage) && !o.storage.owner_before(storage) &&
           offset == o.offset && plain == o.plain && target == o.target;
  }
};

struct WeightValue {
  uint64_t version;
  dnnl::memory values;
  size_t bytes;
};

// A few dozen layers' weights, and at most 256 MiB of copies.
constexpr size_t kMaxWeightEntries = 64;
constexpr size_t kMaxWeightBytes = size_t(256) << 20;

struct WeightCache {
  std::mutex mutex;
  LruCache<WeightKey, WeightValue> entries{kMaxWeightEntries};
  uint64_t hits = 0, misses = 0;
};

WeightCache& weightCache() {
  static WeightCache* cache = new WeightCache;  // never destroyed: used until exit
  return *cache;
}

}  // namespace

dnnl::memory reorderedWeights(const Tensor& w, const dnnl::memory::desc& plain,
                              const dnnl::memory::desc& target) {
  const std::shared_ptr<Storage>& storage = w.impl()->storage;
  WeightKey key{storage, w.storage_offset(), plain, target};
  const uint64_t version = storage->version();
  WeightCache& cache = weightCache();
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (WeightValue* v = cache.entries.find(key); v && v->version == version) {
      ++cache.hits;
      return v->values;
    }
    ++cache.misses;
  }
  // Reorder outside the lock: other threads' hits need not wait for it.
  dnnl::memory from(plain, engine(), w.rawData()), to(target, engine());
  makeReorder(plain, target).run({{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.entries.eraseIf([](const WeightKey& k, const WeightValue&) { return k.storage.expired(); });
  cache.entries.put(std::move(key), WeightValue{version, to, target.get_size()});
  auto bytes = [](const WeightValue& v) { return v.bytes; };
  while (cache.entries.total(bytes) > kMaxWeightBytes && cache.entries.size() > 1)
    cache.entries.popOldest();
  return to;
}

WeightCacheStats weightCacheStats() {
  WeightCache& cache = weightCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return WeightCacheStats{cache.hits, cache.misses, cache.entries.size(),
                          cache.entries.total([](const WeightValue& v) { return v.bytes; })};
}

}  // namespace kiln::kernels::onednn
