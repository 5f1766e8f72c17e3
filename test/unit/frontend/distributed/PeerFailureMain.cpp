// A job in which one rank fails: rank 1's step throws before its all_reduce, and the rank
// stays alive without taking part (as a rank stuck in I/O or a debugger would). The other
// ranks must end with kiln::distributed's timeout error, not hang. peer_failure_test.sh
// runs it and checks the messages; the driver is bounded by `timeout` in case they hang.
//
// With the argument "traced" the step is a compiled jit::trace'd program whose
// kiln.all_reduce times out: rank 1 takes part in the first two calls (the recording and
// the first compiled run) and fails in the third. The ranks meet before each of the first
// two calls (meet(), which has no deadline), so that a rank that took longer to start or
// to compile (the recording's call compiles) cannot make another's all_reduce time out.
//
// Only rank 0 ends the job (distributed::abort): the others report their timeout and wait
// for it, so that no other rank's abort ends rank 0 before it reports its own.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"
#include "kiln/jit/Trace.h"

using namespace kiln;

namespace {

// Waits, without a deadline, until every rank has called meet(`name`): each rank creates
// the file <dir>/<name>.<rank> and waits for the others' (dir: $KILN_PEER_FAILURE_MEET_DIR,
// a fresh directory per job; unset, no meeting). peer_failure_test.sh's `timeout` bounds it.
void meet(const std::string& name, int rank) {
  const char* dir = std::getenv("KILN_PEER_FAILURE_MEET_DIR");
  if (dir == nullptr || *dir == '\0') return;
  auto path = [&](int r) { return std::string(dir) + "/" + name + "." + std::to_string(r); };
  const int fd = ::open(path(rank).c_str(), O_CREAT | O_WRONLY, 0644);
  if (fd < 0) throw std::runtime_error("rank " + std::to_string(rank) + ": cannot create " + path(rank));
  ::close(fd);
  for (int r = 0; r < distributed::world_size(); ++r)
    while (::access(path(r).c_str(), F_OK) != 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

Tensor reduce(Tensor grad) {
  distributed::all_reduce(grad);
  return grad;
}

void step(int rank, bool traced) {
  if (!traced) {
    if (rank == 1) throw std::runtime_error("rank 1: the step failed on purpose");
    reduce(ones({4}));
  } else {
    jit::TraceOptions options;
    options.compile.backend = "MLIR";
    auto program = jit::trace([](Tensor x) { return reduce(x * 1); }, options);
    for (int call = 0; call < 3; ++call) {
      if (rank == 1 && call == 2) throw std::runtime_error("rank 1: the step failed on purpose");
      if (call < 2) meet("call" + std::to_string(call), rank);
      program(ones({4}));
    }
  }
  std::cout << "rank " << rank << ": UNEXPECTED: the all_reduce completed" << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  const bool traced = argc > 1 && std::string(argv[1]) == "traced";
  distributed::init();
  const int rank = distributed::rank();
  try {
    step(rank, traced);
  } catch (const Error& e) {
    std::cout << "rank " << rank << " caught: " << e.what() << std::endl;
    if (rank == 0) distributed::abort(3);
    // Rank 0 times out too and ends the job; bounded, as below, should it not.
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return 3;
  } catch (const std::exception& e) {
    std::cout << e.what() << std::endl;
    // Stuck, not gone: only the others' timeout can end the job now. Bounded, so that a
    // broken timeout fails the test rather than hanging it.
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return 1;
  }
  distributed::finalize();
  return 0;
}
