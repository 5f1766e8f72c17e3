// The MPI calls kiln::distributed makes, behind one seam so that the rest builds without
// mpi.h: Mpi.cpp implements them on Open MPI when KILN_HAVE_MPI, else as stubs that are
// never reached (Environment.cpp refuses every call first).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "kiln/distributed/Distributed.h"

namespace kiln::distributed::detail {

// An MPI call that failed, with MPI's own description; callers turn it into a kiln::Error
// that names the collective.
class MpiFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Element types MPI reduces natively; 16-bit floats travel as float32 (Collectives.cpp).
enum class Elem : uint8_t { Float32, Float64, Int32, Int64, Bool };

// A non-blocking call in flight. test() makes progress (Open MPI's non-blocking
// collectives advance only inside MPI calls) and says whether it has completed.
class Request {
 public:
  virtual ~Request() = default;
  virtual bool test() = 0;
};

bool mpiBuilt();
void mpiInit();
void mpiFinalize();
int mpiRank();
int mpiSize();
[[noreturn]] void mpiAbort(int exitCode);

// Mean is not an MPI op: the caller reduces with Sum and divides.
std::unique_ptr<Request> startBarrier();
std::unique_ptr<Request> startAllReduce(void* data, int count, Elem elem, ReduceOp op);
std::unique_ptr<Request> startBroadcast(void* data, int count, Elem elem, int root);
std::unique_ptr<Request> startAllGather(const void* send, void* recv,
                                        const std::vector<int>& counts, Elem elem);
std::unique_ptr<Request> startReduceScatter(const void* send, void* recv,
                                            const std::vector<int>& counts, Elem elem,
                                            ReduceOp op);

}  // namespace kiln::distributed::detail
