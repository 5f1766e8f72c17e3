#include "kiln/core/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <utility>

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

// How long an idle worker, or a caller waiting for its job's last chunk, polls before it
// sleeps. Waking a sleeping thread takes tens of microseconds on a VM, longer than a
// 1M-element op; OpenMP's workers spin for the same reason (GOMP_SPINCOUNT).
constexpr std::chrono::microseconds kSpin{50};

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls `ready` for up to kSpin; true as soon as it holds.
template <class Ready>
bool spinUntil(Ready ready) {
  auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    cpuRelax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return false;
  }
}

}  // namespace

// One parallelFor call. Chunks are claimed through an atomic counter, so whoever is free
// (the caller or any worker) takes the next one, and the caller alone can finish the job:
// concurrent calls from several threads never wait on each other.
struct ThreadPool::Job {
  Job(int64_t begin, int64_t end, int64_t chunkSize, detail::ChunkFn fn)
      : begin(begin),
        end(end),
        chunkSize(chunkSize),
        numChunks((end - begin + chunkSize - 1) / chunkSize),
        fn(fn),
        pending(numChunks) {}

  void claimAndRunChunks() {
    for (int64_t c; (c = next.fetch_add(1)) < numChunks;) runChunk(c);
  }

  void runChunk(int64_t c) {
    if (!failed.load(std::memory_order_relaxed)) {
      try {
        int64_t b = begin + c * chunkSize;
        fn(b, std::min(end, b + chunkSize));
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
    if (pending.fetch_sub(1) == 1) {
      std::lock_guard lock(mutex);  // pairs with the caller's wait: no lost wake-up
      done.notify_all();
    }
  }

  void wait() {
    // The acquire pairs with the last chunk's decrement, which follows its write of
    // `error`; the worker still holds the job, so its pending notify_all is safe.
    if (spinUntil([&] { return pending.load(std::memory_order_acquire) == 0; })) return;
    std::unique_lock lock(mutex);
    done.wait(lock, [&] { return pending.load() == 0; });
  }

  const int64_t begin, end, chunkSize, numChunks;
  const detail::ChunkFn fn;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> pending;
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::condition_variable done;
  std::exception_ptr error;
};

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

ThreadPool::ThreadPool(int numThreads) {
  try {
    for (int i = 1; i < numThreads; ++i) workers_.emplace_back([this] { workerLoop(); });
  } catch (...) {
    stop();  // join the workers that did start; the destructor will not run
    throw;
  }
}

ThreadPool::~ThreadPool() { stop(); }

void ThreadPool::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_)
    if (worker.joinable()) worker.join();
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
  auto job = std::make_shared<Job>(begin, end, chunkSize, fn);
  RegionGuard region;
  enqueue(job);
  job->claimAndRunChunks();
  dequeue(job);
  job->wait();
  // Taken out of the job so the exception is released on this thread, not by whichever
  // worker drops the job last.
  if (std::exception_ptr error = std::exchange(job->error, nullptr)) std::rethrow_exception(error);
}

void ThreadPool::enqueue(const std::shared_ptr<Job>& job) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(job);
    queued_.store(int(queue_.size()), std::memory_order_release);
  }
  wake_.notify_all();
}

void ThreadPool::dequeue(const std::shared_ptr<Job>& job) {
  std::lock_guard lock(mutex_);
  auto it = std::find(queue_.begin(), queue_.end(), job);
  if (it != queue_.end()) queue_.erase(it);
  queued_.store(int(queue_.size()), std::memory_order_release);
}

void ThreadPool::workerLoop() {
  tInParallelRegion = true;
  std::unique_lock lock(mutex_);
  while (true) {
    if (queue_.empty() && !stopping_) {
      lock.unlock();
      spinUntil([&] { return queued_.load(std::memory_order_acquire) > 0; });
      lock.lock();
    }
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    std::shared_ptr<Job> job = queue_.front();
    lock.unlock();
    job->claimAndRunChunks();
    lock.lock();
    if (!queue_.empty() && queue_.front() == job) {  // exhausted
      queue_.pop_front();
      queued_.store(int(queue_.size()), std::memory_order_release);
    }
  }
}

int get_num_threads() { return ThreadPool::global().numThreads(); }

}  // namespace kiln
