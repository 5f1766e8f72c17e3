// kiln.all_reduce and its non-blocking pair (kiln.all_reduce_start, kiln.wait) as ops of
// the table: how a traced program (jit::trace, nn::Graph) carries a data-parallel step's
// gradient all-reduce. The core runs no MPI; kiln::distributed (//frontend:distributed)
// installs the kernels' communication when distributed::init() runs (docs/DISTRIBUTED.md,
// "Traced programs and nn::Graph").
#pragma once

#include <string_view>
#include <vector>

#include "kiln/core/Tensor.h"

namespace kiln {

// `x` combined elementwise over the ranks of the MPI job, as a new tensor the same on every
// rank: `kind` "sum", "mean" (floating dtypes only) or "max". Every rank must call it in
// the same order with the same shape and dtype. Dispatched as kiln.all_reduce, so a trace
// records it and its compiled program runs it; not differentiable. Error naming the op,
// `x` and `loc` when distributed::init() has not run.
Tensor all_reduce_op(const Tensor& x, std::string_view kind,
                     const SourceLoc& loc = SourceLoc::current());

// The same in two halves (kiln.all_reduce_start, kiln.wait): the start returns at once
// with a tensor the other ranks write into, which nothing may read but the wait; the wait
// blocks until they are done and returns the combined values. Every start must be waited.
Tensor all_reduce_start_op(const Tensor& x, std::string_view kind,
                           const SourceLoc& loc = SourceLoc::current());
Tensor wait_op(const Tensor& started, const SourceLoc& loc = SourceLoc::current());

namespace detail {

// How the kernels communicate, on contiguous tensors the kernels own: `allReduce` reduces
// `buffer` in place, blocking; `start` starts that and returns; `wait` blocks until the
// start on `buffer` (the same storage) is complete. `kind` as all_reduce_op's.
// `broadcastFromRank0` replaces each of `tensors` (any, outside a trace) with rank 0's.
struct CollectiveRunner {
  void (*allReduce)(const Tensor& buffer, std::string_view kind, const SourceLoc& loc);
  void (*start)(const Tensor& buffer, std::string_view kind, const SourceLoc& loc);
  void (*wait)(const Tensor& buffer, const SourceLoc& loc);
  void (*broadcastFromRank0)(const std::vector<Tensor>& tensors, const SourceLoc& loc);
};
// Installed by distributed::init(); nullptr uninstalls (distributed::finalize()).
void setCollectiveRunner(const CollectiveRunner* runner);

// Replaces each of `tensors` with rank 0's copy, as nn::DistributedDataParallel's
// construction does (a data-parallel nn::Graph's first call: its modules' parameters and
// buffers). Error naming `op` when distributed::init() has not run.
void broadcastFromRank0(std::string_view op, const std::vector<Tensor>& tensors,
                        const SourceLoc& loc);

}  // namespace detail
}  // namespace kiln
