// Scratch memory that a kernel keeps on its thread from call to call.
#pragma once

#include <cstddef>

namespace kiln::kernels {

// Who uses a thread's scratch buffer: each user has its own, so that one may call another.
enum class ScratchSlot { kOneDnn, kPlaneDot, kCount };

// This thread's buffer for `slot`, at least `bytes` long, aligned to Storage::kAlignment,
// its contents left from the last use: it grows to the largest size asked for and is kept
// until the thread ends. Freeing and allocating a few hundred KiB on every call hands the
// pages back and faults them in again (glibc trims or maps blocks of that size). Throws
// std::bad_alloc where memory runs out.
void* threadScratch(ScratchSlot slot, size_t bytes);

}  // namespace kiln::kernels
