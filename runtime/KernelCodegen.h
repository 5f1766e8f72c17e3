// Fused kernels compiled outside MLIR's own lowering (the HALIDE backend): the interface
// runtime::Executable takes a kernel generator through. The host schedule, memory plan and
// arena stay the MLIR CPU pipeline's; a kernel the generator takes is called by the host
// schedule through the runtime like a library op, and one it declines is lowered by MLIR.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "runtime/cache/DiskCache.h"

namespace kiln::runtime {

// One compiled kernel.
class ExternalKernel {
 public:
  virtual ~ExternalKernel() = default;
  // Runs on contiguous buffers of the kernel function's argument and result types.
  // Failures are kiln::Errors naming the kernel.
  virtual void run(void* const* operands, void* const* results) const = 0;
  // One line for KILN_LOG=compile: how it was scheduled.
  virtual std::string describe() const = 0;
  // The generator's own IR of the kernel, for KILN_DUMP_IR (Halide's lowered statement).
  virtual std::string lowered() const = 0;
};

class KernelCodegen {
 public:
  virtual ~KernelCodegen() = default;
  // "HALIDE": part of the disk cache's key and of messages.
  virtual std::string_view name() const = 0;
  // `kernel` (a kiln.kernel = "fusion" function of kiln ops) compiled; null with `why`
  // set where this generator does not take it, and MLIR then lowers it as usual.
  // `inPlace`: a result may be written over an operand's buffer (a state updated in place),
  // so every result must be computed from operands not yet overwritten. `cache`: where the
  // generator may keep compiled code across processes (it may be disabled). Called from
  // several threads at once for the kernels of one program (Executable::takeKernels), so
  // it only reads `kernel`, and the same kernel text arriving twice is compiled once.
  virtual std::shared_ptr<const ExternalKernel> compile(mlir::func::FuncOp kernel, bool inPlace,
                                                        const DiskCache& cache,
                                                        std::string& why) const = 0;
  // Whether the plan may write a result of a kernel of several results over its state
  // (kiln-plan-memory's several-results-in-place). False for a generator that would
  // decline such kernels (it takes buffers not to alias) and should take them instead:
  // their updates then go to buffers of their own, which the caller copies into the states.
  virtual bool severalResultsInPlace() const { return true; }
};

}  // namespace kiln::runtime
