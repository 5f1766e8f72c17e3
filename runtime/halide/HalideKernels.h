// HALIDE's kernel generator (runtime/KernelCodegen.h): each fused kernel of kiln-fuse as one
// Halide 14 pipeline (elementwise ops as Funcs, broadcasts and transposes as index maps,
// reductions as RDoms, row reductions computed per row of their consumer), vectorized to
// the host's width, parallel over rows on Kiln's thread pool, JIT-compiled and cached in
// memory by kernel text. A kernel with an op or type it does not translate is declined
// (MLIR lowers it).
#pragma once

#include "runtime/KernelCodegen.h"

namespace kiln::runtime::halide {

const KernelCodegen& halideKernels();

}  // namespace kiln::runtime::halide
