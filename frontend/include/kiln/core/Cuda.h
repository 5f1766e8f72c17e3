// CUDA devices as torch.cuda shows them: whether one is there, how many, memory statistics
// of Kiln's caching allocator, and synchronization. Everything here works on a machine
// without a GPU, driver or toolkit: is_available() is then false, device_count() is 0 and
// the rest raise kiln::Error "no CUDA device: <why>".
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <string>

namespace kiln::cuda {

bool is_available();
int device_count();
// Why is_available() is false ("" when it is true): the driver library is missing, cuInit
// failed, or the driver sees no device. Tests print it when they report SKIPPED.
std::string unavailable_reason();

// The device's name ("NVIDIA H100 80GB HBM3") and compute capability as "sm_90".
std::string device_name(int device = 0,
                        const std::source_location& loc = std::source_location::current());
std::string device_arch(int device = 0,
                        const std::source_location& loc = std::source_location::current());

// Waits until all work queued on the device's stream has finished (torch.cuda.synchronize).
void synchronize(int device = 0, const std::source_location& loc = std::source_location::current());

// torch.cuda.memory_stats, in bytes and counts for one device.
struct MemoryStats {
  size_t allocated_bytes = 0;       // held by live tensors (sizes as rounded to blocks)
  size_t peak_allocated_bytes = 0;  // most held at once since reset_peak_memory_stats
  size_t cached_bytes = 0;          // freed blocks kept for reuse
  size_t reserved_bytes = 0;        // allocated + cached: what Kiln holds of the device
  uint64_t allocations = 0;         // blocks handed out
  uint64_t cache_hits = 0;          // of those, served from the cache
  uint64_t device_allocations = 0;  // cuMemAlloc calls
  uint64_t retries = 0;             // allocations that emptied the cache and tried again
  uint64_t out_of_memory = 0;       // allocations that failed after their retry
};
MemoryStats memory_stats(int device = 0);
void reset_peak_memory_stats(int device = 0);
// Returns every cached block to the driver (torch.cuda.empty_cache).
void empty_cache();

}  // namespace kiln::cuda
