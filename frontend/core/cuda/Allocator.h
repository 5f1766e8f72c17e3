// Kiln's caching allocator for device memory (see kiln/core/Cuda.h for its statistics).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "kiln/core/Error.h"
#include "kiln/core/Storage.h"

namespace kiln::cuda {

// Device memory for a Storage of `nbytes` on cuda:`index`. A freed block goes back to a
// per-device cache by size class and is handed out again for a later allocation: every
// kernel and copy runs on the device's one stream, so work queued on the new owner runs
// after the old owner's. When cuMemAlloc fails, the cache is emptied and it is tried once
// more; then kiln::Error says how much was asked, held, cached and free.
std::shared_ptr<Storage> allocateStorage(int index, size_t nbytes, std::string_view op,
                                         const SourceLoc& loc);

}  // namespace kiln::cuda
