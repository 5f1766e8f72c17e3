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
  // concatenate along or normalize over (unless `dims` says otherwise); leaves of fixed
  // shape are state. Values are kept
  // well-conditioned at every batch size up to kLargestBatch.
  bool batch = false;
  // Dims drawn also from 128 and 133 (rows wider than the default sizes' 33; the same
  // seed gives other programs than without it).
  bool wideDims = false;
  // Writes in place: some floating leaves are buffers (state no gradient reaches), and
  // in_place writes a buffer or an earlier value of its own storage (moving averages,
  // sub_ toward a value, copies; often from values the target itself gave, transposed or
  // reduced), which later ops and, for state, later calls read (the same seed gives other
  // programs than without it).
  bool inPlace = false;
  // Which dims of a batch program's inputs are dynamic. First: dim 0, B. Any: one dim per
  // input, B, at a position drawn per program (dim 0, dim 1, the last or a middle dim);
  // the ops may then also contract over it (matmul), concatenate inputs along it and
  // slice a fixed prefix of it. Two: as Any, and a second size S independent of B at
  // another dim of some inputs (a batch and a sequence length).
  enum class Dims : uint8_t { First, Any, Two };
  Dims dims = Dims::First;
};

// The same seed and options give the same program.
Program generate(uint64_t seed, const GenOptions& options);

}  // namespace kiln::fuzz
