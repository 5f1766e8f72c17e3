// A fused kernel as the GPU generators leave it: PTX (or CUDA C for NVRTC) and the launches
// that compute it, made an ExternalKernel the host schedule (runtime/schedule) runs on a
// CUDA device's stream with the buffers' device addresses.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/Device.h"
#include "runtime/KernelCodegen.h"

namespace kiln::runtime::gpu {

// One kernel parameter: a buffer of the fused kernel (its operands, then its results,
// numbered together) passed as its device address, or a scalar passed by value.
struct KernelParam {
  enum Kind { Buffer, Scalar, Scratch } kind = Buffer;
  int64_t buffer = 0;       // Buffer: which one; Scratch: its byte offset in the scratch block
  std::vector<char> bytes;  // Scalar: its value as the kernel takes it
};

struct Launch {
  std::string entry;  // the .entry / __global__ name
  std::string image;  // MLIR: the PTX module holding it (the driver compiles it for the device)
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  std::vector<KernelParam> params;
};

struct LaunchPlan {
  std::string name;       // the fused kernel function ("main_kernel_3")
  std::string generator;  // "MLIR", "NVRTC"
  // NVRTC: the CUDA C source of every entry (compiled by cuda::kernel for the device,
  // cached on disk); empty where each launch names its PTX image.
  std::string cudaSource;
  std::vector<Launch> launches;
  size_t operands = 0;   // buffers [0, operands) are operands, the rest results
  // Bytes of device memory the launches share for values inside the kernel (a row's max
  // that a later loop nest reads), taken per run from the device's allocator.
  int64_t scratchBytes = 0;
  std::string schedule;  // for KILN_LOG=compile
};

// `plan` run on CUDA device `device`: each launch queued on the device's stream in order.
std::shared_ptr<const ExternalKernel> cudaKernel(LaunchPlan plan, Device device);

}  // namespace kiln::runtime::gpu
