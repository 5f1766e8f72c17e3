// A job in which one rank fails: rank 1's step throws before its all_reduce, and the rank
// stays alive without taking part (as a rank stuck in I/O or a debugger would). The other
// ranks must end with kiln::distributed's timeout error, not hang. peer_failure_test.sh
// runs it and checks the messages; the driver is bounded by `timeout` in case they hang.
//
// With the argument "traced" the step is a compiled jit::trace'd program whose
// kiln.all_reduce times out: rank 1 takes part in the first two calls (the recording and
// the first compiled run) and fails in the third.
#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>

#include "kiln/core/Ops.h"
#include "kiln/distributed/Distributed.h"
#include "kiln/jit/Trace.h"

using namespace kiln;

namespace {

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
