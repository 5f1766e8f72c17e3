// The process's place in the job, shared by the collectives: whether init() ran, the rank,
// the world size and the wait timeout.
#pragma once

#include <string_view>

#include "kiln/core/Error.h"

namespace kiln::distributed::detail {

// kiln::Error naming `op` when Kiln was built without MPI.
void requireBuilt(std::string_view op, const SourceLoc& loc);
// kiln::Error naming `op` when Kiln was built without MPI or init() has not run (or
// finalize() has).
void requireInitialized(std::string_view op, const SourceLoc& loc);

}  // namespace kiln::distributed::detail
