// Routing of ops on CUDA tensors to their kernel family (see Kernels.h).
#include "frontend/core/cuda/Kernels.h"

namespace kiln::cuda {

void runKernel(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs) {
  if (isElementwise(op)) return elementwise(op, args, outputs);
  throw Error::make(args.loc, op.name, "has no CUDA kernel yet (operand shapes and devices: ",
                    args.inputs.empty() ? Shape{} : args.inputs[0].sizes(), " on ",
                    outputs[0].device(), ")");
}

std::vector<KernelSource> allKernelSources() {
  std::vector<KernelSource> out;
  elementwiseSources(out);
  return out;
}

}  // namespace kiln::cuda
