// Routing of ops on CUDA tensors to their kernel family (see Kernels.h).
#include "frontend/core/cuda/Kernels.h"

#include <mutex>

namespace kiln::cuda {

namespace {

struct RunOps {
  std::mutex mutex;
  std::set<std::string> names;
};

RunOps& runOps() {
  static RunOps* r = new RunOps;
  return *r;
}

void noteRun(const OpDef& op) {
  thread_local const OpDef* last = nullptr;  // skips the lock for runs of one op
  if (last == &op) return;
  last = &op;
  RunOps& r = runOps();
  std::lock_guard lock(r.mutex);
  r.names.emplace(op.name);
}

}  // namespace

std::set<std::string> opsRun() {
  RunOps& r = runOps();
  std::lock_guard lock(r.mutex);
  return r.names;
}

void runKernel(const OpDef& op, const OpArgs& args, std::span<Tensor> outputs) {
  noteRun(op);
  if (isElementwise(op)) return elementwise(op, args, outputs);
  if (isReduce(op)) return reduce(op, args, outputs);
  if (isIndexing(op)) return indexing(op, args, outputs);
  if (isBlas(op)) return blas(op, args, outputs);
  if (isConv(op)) return conv(op, args, outputs);
  throw Error::make(args.loc, op.name, "has no CUDA kernel yet (operand shapes and devices: ",
                    args.inputs.empty() ? Shape{} : args.inputs[0].sizes(), " on ",
                    outputs[0].device(), ")");
}

std::vector<KernelSource> allKernelSources() {
  std::vector<KernelSource> out;
  elementwiseSources(out);
  reduceSources(out);
  indexingSources(out);
  blasSources(out);
  convSources(out);
  return out;
}

}  // namespace kiln::cuda
