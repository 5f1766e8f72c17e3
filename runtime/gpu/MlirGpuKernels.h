// The MLIR backend's fused kernels for a CUDA device: the planned module's fusion kernels
// through buildGpuKernelPipeline (kiln-gpu-pipeline after planning), each kernel's host
// side (its gpu.launch_func ops, with constant grids) read into a LaunchPlan.
#pragma once

#include <map>
#include <string>

#include "mlir/IR/BuiltinOps.h"
#include "passes/Passes.h"
#include "runtime/gpu/CudaLaunch.h"

namespace kiln::runtime::gpu {

struct GpuKernels {
  std::map<std::string, LaunchPlan> plans;     // by kernel function name
  std::map<std::string, std::string> declined;  // kernel -> why it has no plan
};

// The launch plans of a module buildGpuKernelPipeline compiled (`pipelined`, holding the
// nested module kiln_kernels and the host's declarations). A kernel whose host side does
// more than launch (a temporary buffer, a bound known only at run time) is declined.
GpuKernels readLaunchPlans(mlir::ModuleOp pipelined);

}  // namespace kiln::runtime::gpu
