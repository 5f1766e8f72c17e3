#include "kiln/core/Storage.h"

#include <sys/mman.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <string_view>
#include <utility>

#include "frontend/core/cuda/Allocator.h"
#include "kiln/core/Error.h"

namespace kiln {

namespace {

// What data() points at for zero bytes: aligned, shared, never written.
alignas(Storage::kAlignment) std::byte gEmpty[Storage::kAlignment];

void alignedFree(void* p) { ::operator delete(p, std::align_val_t{Storage::kAlignment}); }

// glibc's initial mmap threshold: from this size on, glibc maps a block fresh from the
// system, or trims it off the top of its heap when it is freed, so reusing it faults again.
constexpr size_t kLargeBlock = size_t(128) << 10;
constexpr size_t kHugePage = size_t(2) << 20;

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

size_t defaultCacheLimit() {
#if defined(__SANITIZE_ADDRESS__)
  return 0;  // reused blocks would hide use-after-free from ASan
#else
  size_t megabytes = 1024;
  if (const char* env = std::getenv("KILN_CPU_CACHE_MB")) {
    std::string_view text(env);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), megabytes);
    if (ec != std::errc() || end != text.data() + text.size())
      throw Error::make(std::source_location::current(), "empty",
                        "KILN_CPU_CACHE_MB must be a whole number of megabytes, got '", text,
                        "'");
  }
  return megabytes << 20;
#endif
}

// Freed large blocks by (rounded) size. Blocks of a huge page or more are huge-page aligned
// and advised as such, so a first touch faults 2 MiB at a time where THP is in madvise mode.
class LargeBlockCache {
 public:
  static LargeBlockCache& global() {
    static LargeBlockCache* cache = new LargeBlockCache;  // outlives static tensors
    return *cache;
  }

  static size_t blockSize(size_t nbytes) {
    return nbytes >= kHugePage ? roundUp(nbytes, kHugePage) : roundUp(nbytes, 4096);
  }

  void* take(size_t size) {
    {
      std::lock_guard lock(mutex_);
      // The block of this size freed last (a multimap inserts equal keys at the end of
      // their range): the one most likely still in cache. Taking the first instead cycled
      // through every cached block of the size, so a loop of 1M-element ops wrote each
      // result to memory the caches had long dropped (2x slower than one block reused).
      auto [first, last] = free_.equal_range(size);
      if (first != last) {
        auto it = std::prev(last);
        void* p = it->second;
        free_.erase(it);
        held_ -= size;
        return p;
      }
    }
    void* p = nullptr;
    if (posix_memalign(&p, size >= kHugePage ? kHugePage : Storage::kAlignment, size) != 0)
      return nullptr;
#ifdef MADV_HUGEPAGE
    if (size >= kHugePage) madvise(p, size, MADV_HUGEPAGE);  // advice only: ignore failure
#endif
    return p;
  }

  void give(void* p, size_t size) {
    {
      std::lock_guard lock(mutex_);
      if (held_ + size <= limit_) {
        free_.emplace(size, p);
        held_ += size;
        return;
      }
    }
    std::free(p);
  }

  size_t held() {
    std::lock_guard lock(mutex_);
    return held_;
  }

  void release(size_t keep) {
    std::multimap<size_t, void*> dropped;
    {
      std::lock_guard lock(mutex_);
      while (held_ > keep && !free_.empty()) {  // largest first
        auto last = std::prev(free_.end());
        held_ -= last->first;
        dropped.insert(*last);
        free_.erase(last);
      }
    }
    for (auto& [size, p] : dropped) std::free(p);
  }

  size_t setLimit(size_t bytes) {
    size_t previous;
    {
      std::lock_guard lock(mutex_);
      previous = std::exchange(limit_, bytes);
    }
    release(bytes);
    return previous;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  size_t held_ = 0;
  size_t limit_ = defaultCacheLimit();
};

// Live and peak bytes of allocate()d storage (allocatedBytes, peakAllocatedBytes).
std::atomic<size_t> gAllocated{0};
std::atomic<size_t> gPeak{0};

void countAllocation(size_t nbytes) {
  const size_t now = gAllocated.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  size_t peak = gPeak.load(std::memory_order_relaxed);
  while (now > peak && !gPeak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void countRelease(size_t nbytes) { gAllocated.fetch_sub(nbytes, std::memory_order_relaxed); }

}  // namespace

Storage::Storage(void* data, size_t nbytes, Deleter deleter, Device device)
    : data_(data), nbytes_(nbytes), deleter_(std::move(deleter)), device_(device) {}

Storage::~Storage() {
  if (deleter_) deleter_(data_);
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device, std::string_view op,
                                           const std::source_location& loc) {
  if (device.isCUDA()) return cuda::allocateStorage(device.index, nbytes, op, loc);
  if (nbytes == 0) return std::shared_ptr<Storage>(new Storage(gEmpty, 0, {}, device));
  if (nbytes >= kLargeBlock) {
    size_t size = LargeBlockCache::blockSize(nbytes);
    void* p = LargeBlockCache::global().take(size);
    if (!p) throw Error::make(loc, op, "out of memory allocating ", nbytes, " bytes");
    auto give = [size, nbytes](void* block) {
      LargeBlockCache::global().give(block, size);
      countRelease(nbytes);
    };
    countAllocation(nbytes);
    try {
      return std::shared_ptr<Storage>(new Storage(p, nbytes, give, device));
    } catch (...) {
      give(p);
      throw;
    }
  }
  void* p = ::operator new(nbytes, std::align_val_t{kAlignment}, std::nothrow);
  if (!p) throw Error::make(loc, op, "out of memory allocating ", nbytes, " bytes");
  auto release = [nbytes](void* block) {
    alignedFree(block);
    countRelease(nbytes);
  };
  countAllocation(nbytes);
  try {
    return std::shared_ptr<Storage>(new Storage(p, nbytes, release, device));
  } catch (...) {
    release(p);
    throw;
  }
}

size_t Storage::cachedBytes() { return LargeBlockCache::global().held(); }

void Storage::emptyCache() { LargeBlockCache::global().release(0); }

size_t Storage::setCacheLimit(size_t bytes) { return LargeBlockCache::global().setLimit(bytes); }

size_t Storage::allocatedBytes() { return gAllocated.load(std::memory_order_relaxed); }

size_t Storage::peakAllocatedBytes() { return gPeak.load(std::memory_order_relaxed); }

void Storage::resetPeakAllocatedBytes() {
  gPeak.store(gAllocated.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

std::shared_ptr<Storage> Storage::fromBlob(void* data, size_t nbytes, Deleter deleter,
                                           Device device) {
  return std::shared_ptr<Storage>(new Storage(data, nbytes, std::move(deleter), device));
}

}  // namespace kiln
