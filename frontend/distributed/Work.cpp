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

bool WorkState::poll(const SourceLoc& loc) {
  if (done_) return true;
  if (!request_) {  // recorded by a trace: finish_ records the wait
    complete();
    return true;
  }
  bool completed = false;
  try {
    completed = request_->test();
  } catch (const MpiFailure& failure) {
    throw Error::make(loc, op_, failure.what(), " (", what_, ")");
  }
  if (completed) complete();
  return done_;
}

void WorkState::complete() {
  done_ = true;
  request_.reset();
  if (finish_) finish_();
  finish_ = nullptr;
  keepAlive_.clear();
}

// MPI_Wait would block forever on a dead peer, so wait polls MPI_Test: spinning briefly
// (most collectives of a training step finish within microseconds of the last rank
// arriving), then sleeping between polls so that a slow peer does not cost a core.
void WorkState::wait(const SourceLoc& loc) {
  using Clock = std::chrono::steady_clock;
  const double timeout = timeout_seconds();
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
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
}

}  // namespace detail

bool Work::is_completed() { return !state_ || state_->poll(SourceLoc::current()); }

void Work::wait(const SourceLoc& loc) {
  if (state_) state_->wait(loc);
}

}  // namespace kiln::distributed
