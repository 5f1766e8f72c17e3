// kiln.all_reduce as an op of the table: how a traced program (jit::trace, nn::Graph)
// carries a data-parallel step's gradient all-reduce. The core runs no MPI; kiln::distributed
// (//frontend:distributed) installs the kernel's communication when distributed::init()
// runs (docs/DISTRIBUTED.md, "Traced programs").
#pragma once

#include <string_view>

#include "kiln/core/Tensor.h"

namespace kiln {

// `x` combined elementwise over the ranks of the MPI job, as a new tensor the same on every
// rank: `kind` "sum", "mean" (floating dtypes only) or "max". Every rank must call it in
// the same order with the same shape and dtype. Dispatched as kiln.all_reduce, so a trace
// records it and its compiled program runs it; not differentiable. Error naming the op,
// `x` and `loc` when distributed::init() has not run.
Tensor all_reduce_op(const Tensor& x, std::string_view kind,
                     const SourceLoc& loc = SourceLoc::current());

namespace detail {

// Reduces `buffer` (a contiguous tensor the kernel owns, holding this rank's values) in
// place over the ranks, blocking; `kind` as all_reduce_op's.
using AllReduceRunner = void (*)(const Tensor& buffer, std::string_view kind,
                                 const SourceLoc& loc);
// Installed by distributed::init(); nullptr uninstalls (distributed::finalize()).
void setAllReduceRunner(AllReduceRunner runner);

}  // namespace detail
}  // namespace kiln
