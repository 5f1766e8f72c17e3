// Element loops over vexp and vlog as the eager kernels write them, compiled at -O3 for
// x86-64-v4: VecMathVectorizedTest reads their machine code, and both must be vector
// loops (AVX-512). A loop the vectorizer gives up on still computes the right values,
// ten times slower, so no value test notices (the eager exp ran scalar for a day).
#include "frontend/core/kernels/VecMath.h"

extern "C" void kilnProbeExp(float* __restrict y, const float* __restrict x, long n) {
  for (long i = 0; i < n; ++i) y[i] = kiln::kernels::vexp(x[i]);
}

extern "C" void kilnProbeLog(float* __restrict y, const float* __restrict x, long n) {
  for (long i = 0; i < n; ++i) y[i] = kiln::kernels::vlog(x[i]);
}

int main() { return 0; }
