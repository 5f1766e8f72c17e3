// What the generator and the minimizer know about each value without running it: bounds
// on its elements (so ops stay in their well-conditioned domain), whether it is surely
// contiguous (so view() is valid), and the longest reduction feeding it (for tolerances).
#pragma once

#include <cstdint>
#include <vector>

#include "tools/kiln-fuzz/Program.h"

namespace kiln::fuzz {

struct Facts {
  double lo = 0, hi = 0;    // every element lies in [lo, hi]
  bool contiguous = true;   // surely contiguous (false: maybe not)
  int64_t reduce = 1;       // longest reduction or contraction feeding the value
  // The largest term any reduction feeding the value adds up (an operand's magnitude, or
  // the product of both for a contraction): a sum that cancels to nearly 0 still carries
  // rounding of that size, so its tolerance scales with this, not with the result.
  double reducedMag = 0;
  bool single = false;      // float32 somewhere in its history: rounds as float32 does
  double mag() const { return -lo > hi ? -lo : hi; }  // the largest |element|
};

// The facts of `node`, given those of the nodes before it in `p`.
Facts infer(const Program& p, const std::vector<Facts>& before, const Node& node);
// The facts of every node of `p`.
std::vector<Facts> analyze(const Program& p);
// Whether every op of `p` stays in the domain the generator keeps it in (operands of
// log, sqrt and divisors at least 0.5, arguments of exp bounded, ...): the minimizer's
// check that dropping an op did not make the program ill-conditioned. A batch program is
// checked at kLargestBatch.
bool wellConditioned(const Program& p);
// The number of elements an op reduces or contracts per output element (1 for others).
int64_t reductionLength(const Program& p, const Node& node);

}  // namespace kiln::fuzz
