// Async progress: a background thread that polls the collectives in flight, and the
// counters of comm_stats().
//
// Open MPI advances a non-blocking collective only inside MPI calls on the process that
// started it (Debian's build has no progress thread of its own: `ompi_info` says "OMPI
// progress: no"). Without a poll between MPI_Iallreduce and the wait, a bucket started in
// the middle of the backward moves its first message and then sits until the wait, so
// nothing overlaps. The thread below tests each request in flight every
// kPollInterval while there are any, and sleeps on a condition variable while there are
// none. It never runs a Work's completion (copies and divisions stay on the caller's
// thread); it only lets MPI move the bytes.
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "WorkState.h"
#include "kiln/distributed/Distributed.h"

namespace kiln::distributed {

namespace detail {
namespace {

constexpr auto kPollInterval = std::chrono::microseconds(50);

class ProgressThread {
 public:
  ~ProgressThread() { stop(); }

  void setEnabled(bool on) {
    if (!on) stop();
    std::lock_guard lock(mutex_);
    enabled_ = on;
  }
  bool enabled() {
    std::lock_guard lock(mutex_);
    return enabled_;
  }

  void track(const std::shared_ptr<WorkState>& state) {
    std::lock_guard lock(mutex_);
    if (!enabled_) return;
    if (!thread_.joinable()) {
      stopping_ = false;
      thread_ = std::thread([this] { loop(); });
    }
    inFlight_.push_back(state);
    wake_.notify_one();
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (!thread_.joinable()) return;
      stopping_ = true;
      wake_.notify_one();
    }
    thread_.join();
    std::lock_guard lock(mutex_);
    inFlight_.clear();
  }

 private:
  void loop() {
    std::vector<std::weak_ptr<WorkState>> polling;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !inFlight_.empty() || !polling.empty(); });
        if (stopping_) return;
        polling.insert(polling.end(), inFlight_.begin(), inFlight_.end());
        inFlight_.clear();
      }
      std::erase_if(polling, [](const std::weak_ptr<WorkState>& weak) {
        std::shared_ptr<WorkState> state = weak.lock();
        return !state || state->advance();
      });
      if (!polling.empty()) std::this_thread::sleep_for(kPollInterval);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::weak_ptr<WorkState>> inFlight_;  // handed over to loop()'s list
  std::thread thread_;
  bool enabled_ = true;
  bool stopping_ = false;
};

ProgressThread& progressThread() {
  static ProgressThread thread;
  return thread;
}

std::mutex gStatsMutex;
CommStats gStats;

}  // namespace

void trackProgress(const std::shared_ptr<WorkState>& state) { progressThread().track(state); }

void stopProgress() { progressThread().stop(); }

void configureProgress() {
  const char* text = std::getenv("KILN_DIST_PROGRESS");
  progressThread().setEnabled(text == nullptr || std::strcmp(text, "0") != 0);
}

void recordWait(double issueToWait, double blocked, bool completedBeforeWait) {
  std::lock_guard lock(gStatsMutex);
  ++gStats.waits;
  gStats.completed_before_wait += completedBeforeWait ? 1 : 0;
  gStats.issue_to_wait_seconds += issueToWait;
  gStats.blocked_seconds += blocked;
}

}  // namespace detail

void set_async_progress(bool on) { detail::progressThread().setEnabled(on); }

bool async_progress() { return detail::progressThread().enabled(); }

CommStats comm_stats() {
  std::lock_guard lock(detail::gStatsMutex);
  return detail::gStats;
}

void reset_comm_stats() {
  std::lock_guard lock(detail::gStatsMutex);
  detail::gStats = CommStats{};
}

}  // namespace kiln::distributed
