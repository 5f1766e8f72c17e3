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
  // A batch program (Program::batch): every input's dim 0 is one batch size, which the
  // ops keep, move, merge with fixed dims or reduce over, but never slice, contract,
  // concatenate along or normalize over; leaves of fixed shape are state. Values are kept
  // well-conditioned at every batch size up to kLargestBatch.
  bool batch = false;
};

// The same seed and options give the same program.
Program generate(uint64_t seed, const GenOptions& options);

}  // namespace kiln::fuzz
