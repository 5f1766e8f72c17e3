// The caching device allocator and the torch.cuda-style queries (see Allocator.h, Cuda.h).
#include "frontend/core/cuda/Allocator.h"

#include <map>
#include <mutex>
#include <vector>

#include "frontend/core/cuda/Driver.h"
#include "kiln/core/Cuda.h"

namespace kiln::cuda {

namespace {

constexpr size_t kSmallLimit = size_t(1) << 20;
constexpr size_t kSmallRound = 512;
constexpr size_t kLargeRound = size_t(2) << 20;

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Requests round up to 512 bytes below 1 MiB and to 2 MiB above: the same sizes recur
// every step, and a class holds blocks of one size.
size_t blockSize(size_t nbytes) {
  if (nbytes == 0) return kSmallRound;
  return nbytes < kSmallLimit ? roundUp(nbytes, kSmallRound) : roundUp(nbytes, kLargeRound);
}

std::string mib(size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.2f MiB", double(bytes) / double(1 << 20));
  return text;
}

class DeviceCache {
 public:
  explicit DeviceCache(int index) : index_(index) {}

  CUdeviceptr allocate(size_t nbytes, std::string_view op, const SourceLoc& loc) {
    const size_t size = blockSize(nbytes);
    const DriverApi& api = driver(op, loc);
    device(index_, op, loc);
    std::lock_guard lock(mutex_);
    ++stats_.allocations;
    CUdeviceptr ptr = 0;
    // A cached block of this size, or (large blocks) at most a quarter larger.
    auto it = free_.lower_bound(size);
    if (it != free_.end() && (it->first == size || (size >= kSmallLimit && it->first <= size + size / 4))) {
      ptr = it->second;
      const size_t have = it->first;
      free_.erase(it);
      stats_.cached_bytes -= have;
      ++stats_.cache_hits;
      return hand(ptr, have);
    }
    CUresult res = api.cuMemAlloc(&ptr, size);
    if (res == CUDA_ERROR_OUT_OF_MEMORY) {
      ++stats_.retries;
      releaseCachedLocked(api, op, loc);
      res = api.cuMemAlloc(&ptr, size);
    }
    if (res == CUDA_ERROR_OUT_OF_MEMORY) {
      ++stats_.out_of_memory;
      size_t freeBytes = 0, totalBytes = 0;
      api.cuMemGetInfo(&freeBytes, &totalBytes);
      throw Error::make(loc, op, "CUDA out of memory on cuda:", index_, ": tried to allocate ",
                        mib(nbytes), "; Kiln holds ", mib(stats_.allocated_bytes),
                        " in tensors and ", mib(stats_.cached_bytes), " cached (the cache was emptied and the "
                        "allocation retried); the device has ", mib(freeBytes), " free of ",
                        mib(totalBytes));
    }
    check(res, "cuMemAlloc", op, loc);
    ++stats_.device_allocations;
    return hand(ptr, size);
  }

  void release(CUdeviceptr ptr) {
    std::lock_guard lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return;
    const size_t size = it->second;
    live_.erase(it);
    stats_.allocated_bytes -= size;
    free_.emplace(size, ptr);
    stats_.cached_bytes += size;
  }

  void emptyCache() {
    const DriverApi& api = driver("empty_cache", SourceLoc::current());
    std::lock_guard lock(mutex_);
    releaseCachedLocked(api, "empty_cache", SourceLoc::current());
  }

  MemoryStats stats() {
    std::lock_guard lock(mutex_);
    MemoryStats s = stats_;
    s.reserved_bytes = s.allocated_bytes + s.cached_bytes;
    return s;
  }

  void resetPeak() {
    std::lock_guard lock(mutex_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
  }

 private:
  CUdeviceptr hand(CUdeviceptr ptr, size_t size) {
    live_.emplace(ptr, size);
    stats_.allocated_bytes += size;
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    return ptr;
  }

  // Queued work may still use a cached block's last owner's data: wait for the stream first.
  void releaseCachedLocked(const DriverApi& api, std::string_view op, const SourceLoc& loc) {
    if (free_.empty()) return;
    check(api.cuStreamSynchronize(device(index_, op, loc).stream), "cuStreamSynchronize", op, loc);
    for (auto& [size, ptr] : free_) check(api.cuMemFree(ptr), "cuMemFree", op, loc);
    free_.clear();
    stats_.cached_bytes = 0;
  }

  int index_;
  std::mutex mutex_;
  std::multimap<size_t, CUdeviceptr> free_;
  std::map<CUdeviceptr, size_t> live_;
  MemoryStats stats_;
};

DeviceCache& cache(int index) {
  static std::mutex mutex;
  static auto* caches = new std::vector<std::unique_ptr<DeviceCache>>;  // outlive tensors
  std::lock_guard lock(mutex);
  if (int(caches->size()) <= index) caches->resize(index + 1);
  if (!(*caches)[index]) (*caches)[index] = std::make_unique<DeviceCache>(index);
  return *(*caches)[index];
}

}  // namespace

std::shared_ptr<Storage> allocateStorage(int index, size_t nbytes, std::string_view op,
                                         const SourceLoc& loc) {
  DeviceCache& c = cache(index);
  const CUdeviceptr ptr = c.allocate(nbytes, op, loc);
  return Storage::fromBlob(reinterpret_cast<void*>(ptr), nbytes,
                           [&c](void* p) { c.release(reinterpret_cast<CUdeviceptr>(p)); },
                           Device(kCUDA, index));
}

bool is_available() { return unavailableReason().empty(); }

int device_count() {
  if (!is_available()) return 0;
  int count = 0;
  driver("device_count", SourceLoc::current()).cuDeviceGetCount(&count);
  return count;
}

std::string unavailable_reason() { return unavailableReason(); }

std::string device_name(int index, const std::source_location& loc) {
  return device(index, "device_name", loc).name;
}

std::string device_arch(int index, const std::source_location& loc) {
  return device(index, "device_arch", loc).arch();
}

void synchronize(int index, const std::source_location& loc) {
  cuda::synchronize(index, "synchronize", loc);
}

MemoryStats memory_stats(int index) {
  device(index, "memory_stats", SourceLoc::current());
  return cache(index).stats();
}

void reset_peak_memory_stats(int index) {
  device(index, "reset_peak_memory_stats", SourceLoc::current());
  cache(index).resetPeak();
}

void empty_cache() {
  for (int i = 0; i < device_count(); ++i) cache(i).emptyCache();
}

}  // namespace kiln::cuda
