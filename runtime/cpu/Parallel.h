// kiln_rt_parallel_for: how compiled kernels (kiln-parallelize's chunk functions) run
// their large loops on the eager thread pool.
#pragma once

#include <cstdint>

namespace kiln::runtime {

// A chunk function: runs iterations [begin, end) of one outlined loop.
using ChunkFunction = void (*)(void* captures, int64_t begin, int64_t end);

// Runs chunk(captures, b, e) over disjoint pieces covering [begin, end) on
// ThreadPool::global(), one piece per thread (the compiler only outlines loops big
// enough to be worth it), and returns when all are done. Inline inside a parallel
// region, as every parallelFor.
extern "C" void kiln_rt_parallel_for(ChunkFunction chunk, void* captures, int64_t begin,
                                     int64_t end);

}  // namespace kiln::runtime
