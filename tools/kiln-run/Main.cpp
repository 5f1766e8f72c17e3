// kiln-run's entry point; the tool itself is kilnRun (KilnRun.h).
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "tools/kiln-run/KilnRun.h"

int main(int argc, char** argv) {
  // `bazel run` starts tools in their runfiles tree; resolve the user's relative paths
  // from the directory they ran bazel in.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir && chdir(dir) != 0) {
    std::cerr << "kiln-run: cannot change to BUILD_WORKING_DIRECTORY " << dir << "\n";
    return 2;
  }
  return kiln::tools::kilnRun(argc, argv);
}
