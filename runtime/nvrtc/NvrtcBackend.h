// KILN_JIT_BACKEND=NVRTC (runtime/Backend.h): on a CUDA device, each fused kernel as CUDA C
// (NvrtcKernels.h) compiled by NVRTC, launched by the GPU host schedule (runtime/gpu).
#pragma once

#include "runtime/Backend.h"

namespace kiln::runtime::nvrtc {

const Backend& nvrtcBackend();

}  // namespace kiln::runtime::nvrtc
