// A job in which one rank fails: rank 1's step throws before its all_reduce, and the rank
// stays alive without taking part (as a rank stuck in I/O or a debugger would). The other
// ranks must end with kiln::distributed's timeout error, not hang. peer_failure_test.sh
// runs it and checks the messages; the driver is bounded by `timeout` in case they hang.
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"

using namespace kiln;

namespace {

void step(int rank) {
  if (rank == 1) throw std::runtime_error("rank 1: the step failed on purpose");
  Tensor grad = ones({4});
  distributed::all_reduce(grad);
  std::cout << "rank " << rank << ": UNEXPECTED: the all_reduce completed" << std::endl;
}

}  // namespace

int main() {
  distributed::init();
  const int rank = distributed::rank();
  try {
    step(rank);
  } catch (const Error& e) {
    std::cout << "rank " << rank << " caught: " << e.what() << std::endl;
    distributed::abort(3);
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
