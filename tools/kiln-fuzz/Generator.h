// Random well-typed programs: shapes and dtypes are tracked while generating, and operands
// are kept in the domain where each op is well-conditioned, so eager runs every program
// and a tolerance violation means a bug.
#pragma once

#include <cstdint>

#include "tools/kiln-fuzz/Program.h"

namespace kiln::fuzz {

struct GenOptions {
  int maxOps = 8;         // ops drawn (guards and rescales come on top)
  bool backward = true;   // may end in loss.backward() with parameter gradients as outputs
};

// The same seed and options give the same program.
Program generate(uint64_t seed, const GenOptions& options);

}  // namespace kiln::fuzz
