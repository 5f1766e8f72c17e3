// What a Work handle points to: one MPI request, what to do once it completes (copy staged
// results back, divide for a mean), and what to say if it never does.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "Mpi.h"
#include "kiln/core/Tensor.h"

namespace kiln::distributed::detail {

class WorkState {
 public:
  using Clock = std::chrono::steady_clock;

  // `what` describes the call for messages ("float32 [4, 3], sum"); `keepAlive` holds the
  // buffers MPI reads and writes until it is done; `finish` runs once, after completion,
  // on the thread that waits or polls (never the progress thread). A null `request` is a
  // collective a trace recorded: it completes when first polled, running `finish`.
  WorkState(std::string op, std::string what, const SourceLoc& started,
            std::unique_ptr<Request> request, std::vector<Tensor> keepAlive,
            std::function<void()> finish);

  bool poll(const SourceLoc& loc);
  void wait(const SourceLoc& loc);
  // The progress thread's poll: tests the request unless the caller's thread is testing
  // it; never runs `finish`. True once MPI has completed it (or testing failed: the
  // caller's own poll then reports the failure), when the thread can forget it.
  bool advance();

 private:
  // MPI's test, under mutex_; false (and leaves reporting to the caller) when it throws
  // and `rethrow` is false.
  bool testRequest(bool rethrow);
  void complete();

  std::string op_;
  std::string what_;
  SourceLoc started_;
  Clock::time_point issued_ = Clock::now();
  std::mutex mutex_;  // the request, tested by the caller's and the progress thread
  std::unique_ptr<Request> request_;
  std::atomic<bool> mpiDone_{false};
  std::vector<Tensor> keepAlive_;
  std::function<void()> finish_;
  bool done_ = false;
};

// Starts a background thread that polls `state` (advance()) while it is in flight, when
// async progress is on (Progress.cpp).
void trackProgress(const std::shared_ptr<WorkState>& state);
// Stops and joins the progress thread (finalize() calls it before MPI_Finalize).
void stopProgress();
// Reads KILN_DIST_PROGRESS at init(): "0" turns async progress off.
void configureProgress();

// Adds one wait to comm_stats().
void recordWait(double issueToWait, double blocked, bool completedBeforeWait);

}  // namespace kiln::distributed::detail
