// The kernels' last conversion on the CPU: one dialect conversion to LLVM (see the .cpp).
#pragma once

#include <memory>

#include "mlir/Pass/Pass.h"

namespace mlir::kiln {

// memref, math, arith, func and cf ops of a kernel module to the LLVM dialect in one
// conversion; `barePointers`: kernels take one pointer per buffer (else descriptors).
std::unique_ptr<Pass> createKernelsToLLVMPass(bool barePointers);

// kiln-opt's `kiln-kernels-to-llvm{bare-pointers=...}` (registerCpuPipeline calls it).
void registerKernelsToLLVMPass();

}  // namespace mlir::kiln
