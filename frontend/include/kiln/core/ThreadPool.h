// The process-wide worker pool and parallelFor, which splits an index range across it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

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
  // `numThreads` counts the calling thread, which works too: numThreads - 1 workers start.
  explicit ThreadPool(int numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Sized to std::thread::hardware_concurrency(), or to KILN_NUM_THREADS when set.
  static ThreadPool& global();

  int numThreads() const { return int(workers_.size()) + 1; }

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
  struct Job;

  void run(int64_t begin, int64_t end, int64_t grain, detail::ChunkFn fn);
  void workerLoop();
  void stop();
  void enqueue(const std::shared_ptr<Job>& job);
  void dequeue(const std::shared_ptr<Job>& job);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;  // jobs that may still have unclaimed chunks
  std::atomic<int> queued_{0};               // queue_.size(), read by spinning workers
  bool stopping_ = false;
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

}  // namespace kiln
