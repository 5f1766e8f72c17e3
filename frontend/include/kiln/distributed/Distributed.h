// kiln::distributed: the process group of an MPI job (mpirun) and collectives on tensors,
// as torch.distributed with its MPI backend. docs/DISTRIBUTED.md has how to run it.
//
//   distributed::init();                        // once per process, under mpirun
//   distributed::all_reduce(grad, distributed::ReduceOp::Mean);
//   Work work = distributed::all_reduce_async(grad);  ...  work.wait();
//
// Every rank must issue the same collectives in the same order with matching shapes and
// dtypes (as in MPI). Tensors are contiguous, of any Kiln dtype; CUDA tensors are copied to
// the host, reduced there and copied back. Every wait gives up after the timeout (the
// environment variable KILN_DIST_TIMEOUT, in seconds, default 300) with a kiln::Error
// naming the collective: a peer that died or hangs ends the job with a message, not a hang.
// After a timeout the job's communicator is unusable: end the process (abort()).
// Calls may come from any thread, one at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln::distributed {

// How all_reduce and reduce_scatter combine the ranks' values; torch's ReduceOp SUM, AVG
// and MAX. Mean needs a floating dtype; on bool tensors Sum and Max are a logical or.
enum class ReduceOp : uint8_t { Sum, Mean, Max };

std::ostream& operator<<(std::ostream& os, ReduceOp op);

// Whether Kiln was built with MPI. When not, every other function raises kiln::Error
// "built without MPI" (is_initialized() returns false).
bool is_available();

// Joins the job mpirun started (MPI_Init_thread); a process run without mpirun is a job
// of one. Reads KILN_DIST_TIMEOUT. kiln::Error when already initialized or finalized
// (MPI allows one init per process), or when the timeout is not a positive number.
void init(const SourceLoc& loc = SourceLoc::current());
bool is_initialized();
// Leaves the job (MPI_Finalize); every Work must have been waited for.
void finalize(const SourceLoc& loc = SourceLoc::current());
// Ends every rank of the job at once (MPI_Abort), the way out after a timeout.
[[noreturn]] void abort(int exit_code = 1);

// This process's rank in [0, world_size()) and the number of processes in the job.
int rank(const SourceLoc& loc = SourceLoc::current());
int world_size(const SourceLoc& loc = SourceLoc::current());
// Seconds a wait gives the other ranks before raising kiln::Error.
double timeout_seconds();

// ---- progress and timing ----------------------------------------------------------------

// Whether a background thread polls the collectives in flight so that they progress while
// this rank computes (Open MPI advances a non-blocking collective only inside MPI calls;
// without the thread, an all_reduce_async started during the backward waits for its
// wait()). On by default; KILN_DIST_PROGRESS=0 turns it off at init(). Turning it off
// stops the thread; collectives started after either call follow the new setting.
void set_async_progress(bool on);
bool async_progress();

// What this process's waits cost since init() or reset_comm_stats(): per Work::wait on a
// collective that ran (not one a trace recorded), the time from its start to the wait
// (the window in which it could overlap other work) and the time blocked in the wait.
struct CommStats {
  int64_t waits = 0;
  int64_t completed_before_wait = 0;  // done when its wait began: fully hidden
  double issue_to_wait_seconds = 0;
  double blocked_seconds = 0;
};
CommStats comm_stats();
void reset_comm_stats();

namespace detail {
class WorkState;
}  // namespace detail

// A collective in flight (torch's Work). wait() returns when this rank's part is done and
// the results are in the tensors; a default-constructed Work is complete. Wait for every
// Work before reading its tensors, writing them, or calling finalize().
class Work {
 public:
  Work() = default;
  explicit Work(std::shared_ptr<detail::WorkState> state) : state_(std::move(state)) {}

  // Polls without blocking; true once done (and the results are written).
  bool is_completed();
  // kiln::Error naming the collective, its tensors and the line that started it when the
  // other ranks do not take part within timeout_seconds(); `loc` is where wait is called.
  void wait(const SourceLoc& loc = SourceLoc::current());

 private:
  std::shared_ptr<detail::WorkState> state_;
};

// ---- collectives (each blocking, and an _async variant returning its Work) ---------------

// Returns once every rank has entered it.
void barrier(const SourceLoc& loc = SourceLoc::current());
Work barrier_async(const SourceLoc& loc = SourceLoc::current());

// Replaces `tensor` on every rank with the ranks' tensors combined elementwise.
void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum,
                const SourceLoc& loc = SourceLoc::current());
Work all_reduce_async(const Tensor& tensor, ReduceOp op = ReduceOp::Sum,
                      const SourceLoc& loc = SourceLoc::current());

// Replaces `tensor` on every rank with rank `src`'s.
void broadcast(const Tensor& tensor, int src, const SourceLoc& loc = SourceLoc::current());
Work broadcast_async(const Tensor& tensor, int src, const SourceLoc& loc = SourceLoc::current());

// outputs[r] receives rank r's `input`. There is one output per rank, of input's dtype;
// shards may differ in size (outputs[r] has rank r's number of elements, and every rank
// passes the same sizes), and outputs[rank()] has as many elements as `input`.
void all_gather(const std::vector<Tensor>& outputs, const Tensor& input,
                const SourceLoc& loc = SourceLoc::current());
Work all_gather_async(const std::vector<Tensor>& outputs, const Tensor& input,
                      const SourceLoc& loc = SourceLoc::current());

// `output` receives inputs[rank()] combined over the ranks. There is one input per rank,
// of output's dtype; shards may differ in size as in all_gather.
void reduce_scatter(const Tensor& output, const std::vector<Tensor>& inputs,
                    ReduceOp op = ReduceOp::Sum, const SourceLoc& loc = SourceLoc::current());
Work reduce_scatter_async(const Tensor& output, const std::vector<Tensor>& inputs,
                          ReduceOp op = ReduceOp::Sum,
                          const SourceLoc& loc = SourceLoc::current());

}  // namespace kiln::distributed
