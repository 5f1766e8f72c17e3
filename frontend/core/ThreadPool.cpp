#include "kiln/core/ThreadPool.h"

#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>

#include "kiln/core/Error.h"

namespace kiln {

namespace {

thread_local bool tInParallelRegion = false;

// Marks the current thread as inside a parallel region for its lifetime.
class RegionGuard {
 public:
  RegionGuard() : previous_(tInParallelRegion) { tInParallelRegion = true; }
  ~RegionGuard() { tInParallelRegion = previous_; }

 private:
  bool previous_;
};

constexpr int kMaxThreads = 1024;

// libgomp's workers do not survive fork(): a child that starts an OpenMP team after its
// parent had one waits for the parent's workers forever. A forked child runs every
// parallelFor on the calling thread (its chunks in turn), as LibTorch's pool does.
std::atomic<bool> gForkedChild{false};

void markForkedChild() { gForkedChild.store(true, std::memory_order_relaxed); }

// Registered before the first team starts: a fork before any team needs nothing.
void watchForks() {
  [[maybe_unused]] static const int registered = pthread_atfork(nullptr, nullptr, markForkedChild);
}

// One parallelFor call. Chunks are claimed through an atomic counter, so a team thread that
// starts late finds its chunk already taken by one that was free.
struct Job {
  Job(int64_t begin, int64_t end, int64_t chunkSize, detail::ChunkFn fn)
      : begin(begin),
        end(end),
        chunkSize(chunkSize),
        numChunks((end - begin + chunkSize - 1) / chunkSize),
        fn(fn) {}

  void claimAndRunChunks() {
    for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < numChunks;) runChunk(c);
  }

  // Exceptions must not leave an OpenMP region: the first is kept for the caller.
  void runChunk(int64_t c) {
    if (failed.load(std::memory_order_relaxed)) return;
    try {
      int64_t b = begin + c * chunkSize;
      fn(b, std::min(end, b + chunkSize));
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!error) error = std::current_exception();
      failed = true;
    }
  }

  const int64_t begin, end, chunkSize, numChunks;
  const detail::ChunkFn fn;
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::exception_ptr error;
};

}  // namespace

namespace detail {

int threadCountFromEnv(const char* value, unsigned hardware) {
  if (!value || !*value) return int(std::clamp<unsigned>(hardware, 1, kMaxThreads));
  std::string_view text(value);
  int count = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (ec != std::errc() || end != text.data() + text.size() || count < 1 || count > kMaxThreads)
    throw Error::make(std::source_location::current(), "num_threads",
                      "KILN_NUM_THREADS must be an integer from 1 to ", kMaxThreads, ", got '",
                      text, "'");
  return count;
}

}  // namespace detail

bool inParallelRegion() { return tInParallelRegion; }

ThreadPool::ThreadPool(int numThreads) : numThreads_(std::clamp(numThreads, 1, kMaxThreads)) {}

void ThreadPool::setNumThreads(int numThreads) {
  numThreads_.store(std::clamp(numThreads, 1, kMaxThreads), std::memory_order_relaxed);
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(detail::threadCountFromEnv(std::getenv("KILN_NUM_THREADS"),
                                                    std::thread::hardware_concurrency()));
  return pool;
}

void ThreadPool::run(int64_t begin, int64_t end, int64_t grain, detail::ChunkFn fn) {
  int64_t length = end - begin;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::min<int64_t>(numThreads(), length / grain + (length % grain != 0));
  int64_t chunkSize = length / chunks + (length % chunks != 0);
  Job job(begin, end, chunkSize, fn);
  watchForks();
  // The calling thread is the team's thread 0. Inside a user's own OpenMP region (nested
  // parallelism is off by default), and in a forked child (the `if` clause), the team has
  // one thread, the caller, which runs every chunk.
  const bool forked = gForkedChild.load(std::memory_order_relaxed);
#pragma omp parallel num_threads(int(chunks)) if (!forked)
  {
    RegionGuard region;
    job.claimAndRunChunks();
  }
  if (job.error) std::rethrow_exception(job.error);
}

int get_num_threads() { return ThreadPool::global().numThreads(); }

void set_num_threads(int n) {
  if (n < 1 || n > kMaxThreads)
    throw Error::make(std::source_location::current(), "set_num_threads",
                      "the thread count must be from 1 to ", kMaxThreads, ", got ", n);
  ThreadPool::global().setNumThreads(n);
}

}  // namespace kiln
