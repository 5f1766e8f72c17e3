// kiln_rt_parallel_for (see Parallel.h).
#include "runtime/cpu/Parallel.h"

#include "kiln/core/ThreadPool.h"

namespace kiln::runtime {

extern "C" void kiln_rt_parallel_for(ChunkFunction chunk, void* captures, int64_t begin,
                                     int64_t end) {
  // A grain of 1 lets the pool cut the range into one piece per thread.
  ThreadPool::global().parallelFor(begin, end, 1, [&](int64_t b, int64_t e) {
    chunk(captures, b, e);
  });
}

}  // namespace kiln::runtime
