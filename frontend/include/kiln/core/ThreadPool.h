// The process-wide worker pool and parallelFor, which splits an index range across it.
//
// The workers are OpenMP's: oneDNN (Debian builds it on libgomp) and LibTorch run on the
// same runtime, and a second pool of spinning workers beside OpenMP's would take cores from
// it after every oneDNN call (docs/ARCHITECTURE.md, "Thread pool").
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace kiln {

namespace detail {

// A non-owning reference to fn(begin, end): parallelFor allocates nothing per call.
class ChunkFn {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cv_t<F>, ChunkFn>)  // copies stay copies
  explicit ChunkFn(F& fn)
      : object_(const_cast<void*>(static_cast<const void*>(&fn))),
        call_([](void* object, int64_t begin, int64_t end) {
          (*static_cast<F*>(object))(begin, end);
        }) {}

  void operator()(int64_t begin, int64_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, int64_t, int64_t);
};

// The pool size for a KILN_NUM_THREADS value (null or empty: `hardware`, at least 1).
// kiln::Error unless the value is an integer in [1, 1024].
int threadCountFromEnv(const char* value, unsigned hardware);

}  // namespace detail

// True on a pool worker and on a thread running a parallelFor: nested parallelFor calls then
// run inline instead of waiting on workers that are busy with the outer call.
bool inParallelRegion();

class ThreadPool {
 public:
  // `numThreads` (1 to 1024) counts the calling thread, which works too: a parallelFor runs
  // on an OpenMP team of at most that many threads, the caller being thread 0.
  explicit ThreadPool(int numThreads);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Sized to std::thread::hardware_concurrency(), or to KILN_NUM_THREADS when set.
  static ThreadPool& global();

  int numThreads() const { return numThreads_.load(std::memory_order_relaxed); }

  // Later parallelFor calls use at most `numThreads` threads (1 to 1024), the caller included.
  void setNumThreads(int numThreads);

  // Calls fn(b, e) on disjoint chunks covering [begin, end), each at least `grain` long
  // where possible, and returns when all are done. Runs inline when the range fits in one
  // grain or when called from inside a parallel region. The first exception a chunk throws
  // is rethrown here once every chunk has finished; later chunks are skipped.
  template <class F>
  void parallelFor(int64_t begin, int64_t end, int64_t grain, F&& fn) {
    if (begin >= end) return;
    if (end - begin <= grain || numThreads() == 1 || inParallelRegion()) {
      fn(begin, end);
      return;
    }
    run(begin, end, grain, detail::ChunkFn(fn));
  }

 private:
  void run(int64_t begin, int64_t end, int64_t grain, detail::ChunkFn fn);

  std::atomic<int> numThreads_;
};

// parallelFor on the global pool.
template <class F>
void parallelFor(int64_t begin, int64_t end, int64_t grain, F&& fn) {
  if (begin >= end) return;
  if (end - begin <= grain) {  // skip the pool entirely for small ranges
    fn(begin, end);
    return;
  }
  ThreadPool::global().parallelFor(begin, end, grain, fn);
}

// Threads parallelFor uses, the caller included (LibTorch's at::get_num_threads).
int get_num_threads();

// Sets the threads Kiln computes with, the caller included: parallelFor's and those of
// Kiln's oneDNN calls (matmul, conv2d, pooling). LibTorch's at::set_num_threads; it
// overrides KILN_NUM_THREADS. kiln::Error unless 1 <= n <= 1024.
void set_num_threads(int n);

}  // namespace kiln
