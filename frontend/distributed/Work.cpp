// Work: polling an MPI request to completion, with a timeout on every wait.
#include <chrono>
#include <thread>

#include "WorkState.h"
#include "kiln/distributed/Distributed.h"

namespace kiln::distributed {

namespace detail {

WorkState::WorkState(std::string op, std::string what, const SourceLoc& started,
                     std::unique_ptr<Request> request, std::vector<Tensor> keepAlive,
                     std::function<void()> finish)
    : op_(std::move(op)),
      what_(std::move(what)),
      started_(started),
      request_(std::move(request)),
      keepAlive_(std::move(keepAlive)),
      finish_(std::move(finish)) {}

bool WorkState::testRequest(bool rethrow) {
  std::lock_guard lock(mutex_);
  if (mpiDone_.load()) return true;
  try {
    if (request_->test()) mpiDone_.store(true);
  } catch (const MpiFailure&) {
    if (rethrow) throw;
    return false;
  }
  return mpiDone_.load();
}

bool WorkState::advance() {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;  // the caller's thread is testing it
  if (mpiDone_.load() || !request_) return true;
  try {
    if (request_->test()) mpiDone_.store(true);
  } catch (const MpiFailure&) {
    return true;
  }
  return mpiDone_.load();
}

bool WorkState::poll(const SourceLoc& loc) {
  if (done_) return true;
  if (!request_) {  // recorded by a trace: finish_ records the wait
    complete();
    return true;
  }
  try {
    if (!testRequest(/*rethrow=*/true)) return false;
  } catch (const MpiFailure& failure) {
    throw Error::make(loc, op_, failure.what(), " (", what_, ")");
  }
  complete();
  return true;
}

void WorkState::complete() {
  done_ = true;
  {
    std::lock_guard lock(mutex_);
    request_.reset();
  }
  if (finish_) finish_();
  finish_ = nullptr;
  keepAlive_.clear();
}

// MPI_Wait would block forever on a dead peer, so wait polls MPI_Test: spinning briefly
// (most collectives of a training step finish within microseconds of the last rank
// arriving), then sleeping between polls so that a slow peer does not cost a core.
void WorkState::wait(const SourceLoc& loc) {
  if (done_) return;
  const bool traced = !request_;
  const auto entered = Clock::now();
  const double timeout = timeout_seconds();
  const auto deadline =
      entered + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
  const bool doneOnEntry = poll(loc);
  for (int polls = 0; !poll(loc); ++polls) {
    if (Clock::now() > deadline)
      throw Error::make(loc, op_, "timed out after ", timeout, " s waiting for the other ranks (",
                        what_, "; rank ", rank(loc), " of ", world_size(loc), ", started at ",
                        kiln::detail::displayPath(started_.file_name()), ":", started_.line(),
                        "). A rank may have failed, hung, or called a different collective; ",
                        "the job cannot continue (distributed::abort). KILN_DIST_TIMEOUT sets ",
                        "the timeout in seconds.");
    if (polls < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  if (traced) return;  // a recording: nothing ran
  const auto left = Clock::now();
  recordWait(std::chrono::duration<double>(entered - issued_).count(),
             std::chrono::duration<double>(left - entered).count(), doneOnEntry);
}

}  // namespace detail

bool Work::is_completed() { return !state_ || state_->poll(SourceLoc::current()); }

void Work::wait(const SourceLoc& loc) {
  if (state_) state_->wait(loc);
}

}  // namespace kiln::distributed
