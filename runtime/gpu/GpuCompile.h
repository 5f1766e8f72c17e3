// Traced programs compiled for a CUDA device (docs/ARCHITECTURE.md, "Traced programs on the
// GPU"): planned as on the CPU (kiln-plan-memory's schedule and arena), the fused kernels
// compiled by one GPU generator and launched by the host schedule (ScheduledProgram), which
// runs everything else (library ops through cuBLASLt and Kiln's CUDA kernels, callbacks)
// eagerly on the device. A kernel the generator declines runs interpreted on the device.
#pragma once

#include <memory>
#include <string_view>

#include "kiln/core/Error.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "runtime/Backend.h"
#include "runtime/HostCallbacks.h"

namespace kiln::runtime::gpu {

enum class Generator {
  MLIR,   // kiln-gpu-pipeline: NVVM, PTX by LLVM's NVPTX backend, loaded by the driver
  NVRTC,  // each kernel as CUDA C (runtime/nvrtc), compiled by NVRTC to a cubin
};

// `main` compiled for `request.device` (a CUDA device, which must be present: its compute
// capability picks the chip). Failures are CompileErrors naming `op`.
std::shared_ptr<const Program> compileForCuda(mlir::func::FuncOp main, const CallbackTable* callbacks,
                                              const CompileRequest& request, Generator generator,
                                              std::string_view op, const SourceLoc& loc);

}  // namespace kiln::runtime::gpu
