// Per-thread scratch buffers (see Scratch.h).
#include "frontend/core/kernels/Scratch.h"

#include <array>
#include <cstdlib>
#include <new>

#include "kiln/core/Storage.h"

namespace kiln::kernels {

void* threadScratch(ScratchSlot slot, size_t bytes) {
  struct Buffer {
    void* data = nullptr;
    size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local std::array<Buffer, size_t(ScratchSlot::kCount)> buffers;
  Buffer& buffer = buffers[size_t(slot)];
  if (bytes > buffer.size) {
    std::free(buffer.data);
    buffer.size = (bytes + Storage::kAlignment - 1) / Storage::kAlignment * Storage::kAlignment;
    buffer.data = std::aligned_alloc(Storage::kAlignment, buffer.size);
    if (!buffer.data) {
      buffer.size = 0;
      throw std::bad_alloc();
    }
  }
  return buffer.data;
}

}  // namespace kiln::kernels
