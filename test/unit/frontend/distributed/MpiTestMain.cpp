// main() of the distributed tests that need an MPI job: runs the tests between
// distributed::init() and finalize(); built without MPI it says so and runs none (the
// "built without MPI" errors are DistributedTest's to check).
#include <gtest/gtest.h>

#include <iostream>

#include "kiln/distributed/Distributed.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!kiln::distributed::is_available()) {
    std::cout << "built without MPI: DistributedTest checks that every call says so\n";
    return 0;
  }
  kiln::distributed::init();
  const int status = RUN_ALL_TESTS();
  kiln::distributed::finalize();
  return status;
}
