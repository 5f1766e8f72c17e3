// The process's place in the job, shared by the collectives: whether init() ran, the rank,
// the world size and the wait timeout.
#pragma once

#include <string_view>
#include <vector>

#include "kiln/core/Error.h"
#include "kiln/core/Tensor.h"

namespace kiln::distributed::detail {

// kiln::Error naming `op` when Kiln was built without MPI.
void requireBuilt(std::string_view op, const SourceLoc& loc);
// kiln::Error naming `op` when Kiln was built without MPI or init() has not run (or
// finalize() has).
void requireInitialized(std::string_view op, const SourceLoc& loc);

// The kernels' communication (kiln/core/Collective.h's CollectiveRunner): all_reduce on
// the kernel's buffer, blocking or started and waited for. init() installs it, finalize()
// removes it.
void runAllReduce(const Tensor& buffer, std::string_view kind, const SourceLoc& loc);
void startAllReduce(const Tensor& buffer, std::string_view kind, const SourceLoc& loc);
void waitAllReduce(const Tensor& buffer, const SourceLoc& loc);
// Every tensor's broadcast from rank 0 started, then each waited for.
void broadcastFromRank0(const std::vector<Tensor>& tensors, const SourceLoc& loc);

}  // namespace kiln::distributed::detail
