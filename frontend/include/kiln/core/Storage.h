// Storage: a reference-counted, 64-byte aligned byte buffer that tensors view.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <source_location>
#include <string_view>

#include "kiln/core/Device.h"

namespace kiln {

// Tensors share one Storage through std::shared_ptr; views differ only in shape, strides
// and offset. Buffers are 64-byte aligned (a cache line, an AVX-512 vector) so kernels
// may use aligned loads at offset 0.
class Storage {
 public:
  static constexpr size_t kAlignment = 64;

  using Deleter = std::function<void(void*)>;

  // Uninitialized bytes. Zero bytes is fine: data() is then a non-null aligned pointer that
  // must not be dereferenced (so memcpy(dst, src, 0) stays defined). kiln::Error naming
  // `op`, the byte count and `loc` when memory runs out. CUDA storage comes from the
  // caching device allocator (kiln/core/Cuda.h); its data() is a device address.
  static std::shared_ptr<Storage> allocate(
      size_t nbytes, Device device = kCPU, std::string_view op = "empty",
      const std::source_location& loc = std::source_location::current());

  // Wraps memory Kiln does not own (from_blob). `deleter`, if any, runs when the last
  // tensor viewing it goes away; without one the caller keeps the memory alive.
  static std::shared_ptr<Storage> fromBlob(void* data, size_t nbytes, Deleter deleter = {},
                                           Device device = kCPU);

  // Large CPU blocks (128 KiB and up) are not returned to the system when freed but kept,
  // by size, for the next allocation of the same size: eager code allocates the same
  // sizes every step, and fresh memory costs a page fault per 4 KiB. The cache holds at
  // most KILN_CPU_CACHE_MB megabytes (default 1024; 0 turns it off; off under ASan).
  // Returns the bytes now held, and frees them all (as torch.cuda.empty_cache()).
  static size_t cachedBytes();
  static void emptyCache();
  // Sets the cache's limit in bytes and returns the previous one (for tests and tools).
  static size_t setCacheLimit(size_t bytes);

  // Memory statistics, as torch.cuda.memory_allocated / max_memory_allocated: the bytes of
  // storage allocate() handed out that are still alive (fromBlob memory is not counted;
  // blocks the cache above holds are not counted), and the most that were alive at once
  // since the last resetPeakAllocatedBytes() (or the start of the process). Sizes are the
  // requested byte counts. Thread-safe; bench/traced reads them around one training step.
  static size_t allocatedBytes();
  static size_t peakAllocatedBytes();
  // Sets the peak to allocatedBytes() now.
  static void resetPeakAllocatedBytes();

  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // Bumped by every in-place write through any view of this storage, so autograd can tell
  // that a tensor it saved was overwritten (PyTorch shares one counter among views).
  uint64_t version() const { return version_; }
  void bumpVersion() { ++version_; }

 private:
  Storage(void* data, size_t nbytes, Deleter deleter, Device device);

  void* data_;
  size_t nbytes_;
  Deleter deleter_;
  Device device_;
  uint64_t version_ = 0;
};

}  // namespace kiln
