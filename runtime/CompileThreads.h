// Compile work spread over threads: the parts of a split LLVM module (JitEngine) and the
// kernels other generators compile one by one (HALIDE's on the CPU and CUDA, NVRTC's
// sources), each an independent task.
#pragma once

#include <cstddef>
#include <functional>

namespace kiln::runtime {

// The threads a compile may use: the machine's cores, at most `cap`, at least 1.
unsigned compileThreads(unsigned cap);

// The threads for the kernels a generator compiles one by one (HALIDE, NVRTC): each is a
// small compile of its own (Halide's lowering and LLVM), so up to 16.
inline unsigned kernelCompileThreads() { return compileThreads(16); }

// Runs task(i) once for every i in [0, count) on up to `threads` threads, the caller's one
// of them, which take the indices in order from a shared queue (so long tasks do not leave
// one thread with the rest). Returns when every task has finished; then rethrows the
// exception of the lowest index that threw, if any. With one thread (or one task) every
// task runs on the caller's thread, in order.
void forEachOnThreads(size_t count, unsigned threads, const std::function<void(size_t)>& task);

}  // namespace kiln::runtime
