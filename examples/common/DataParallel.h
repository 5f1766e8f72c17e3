// The examples' --distributed: the ranks of an MPI job (kiln::distributed) as Replicas.
// Only the programs that take the flag link it (and MPI).
#pragma once

#include <memory>
#include <string>

#include "examples/common/FashionMnist.h"

namespace kiln::examples {

// With o.distributed, joins the MPI job (distributed::init(); a program started without
// mpirun is a job of one) and returns its ranks; they leave the job (finalize) when the
// object is destroyed, unless an exception is on its way out, in which case this rank
// exits unfinalized and mpirun ends the others. Exits with status 2 and a message when
// o.batchSize is not a multiple of the number of ranks. Without o.distributed: one process,
// and MPI is never initialized.
std::unique_ptr<Replicas> joinReplicas(const std::string& program, const TrainingOptions& o);

}  // namespace kiln::examples
