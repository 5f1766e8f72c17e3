// Launching a fused kernel's plan (see CudaLaunch.h).
#include "runtime/gpu/CudaLaunch.h"

#include <mutex>

#include "frontend/core/cuda/Nvrtc.h"
#include "kiln/core/Error.h"
#include "kiln/core/Tensor.h"

namespace kiln::runtime::gpu {
namespace {

class CudaKernel final : public ExternalKernel {
 public:
  CudaKernel(LaunchPlan plan, Device device) : plan_(std::move(plan)), device_(device) {}

  void run(void* const* operands, void* const* results) const override {
    const std::string op = "run compiled @" + plan_.name;
    const SourceLoc loc = SourceLoc::current();
    std::call_once(loaded_, [&] {
      std::vector<cuda::CUfunction> functions;
      for (const Launch& launch : plan_.launches)
        functions.push_back(plan_.cudaSource.empty()
                                ? cuda::imageKernel(device_.index, launch.image, launch.entry, op, loc)
                                : cuda::kernel(device_.index, plan_.cudaSource, launch.entry, op, loc));
      functions_ = std::move(functions);
    });
    if (functions_.size() != plan_.launches.size())
      throw Error::make(loc, op, "its kernels did not load on ", device_.str());
    // Scratch for the whole run, freed (back to the cache, in stream order) after it.
    Tensor scratch = plan_.scratchBytes > 0
                         ? detail::emptyTensor({(plan_.scratchBytes + 7) / 8}, kInt64, device_,
                                               /*placeholder=*/false, loc)
                         : Tensor();
    std::vector<cuda::CUdeviceptr> addresses;
    std::vector<void*> params;
    for (size_t l = 0; l < plan_.launches.size(); ++l) {
      const Launch& launch = plan_.launches[l];
      addresses.assign(launch.params.size(), 0);
      params.clear();
      for (size_t p = 0; p < launch.params.size(); ++p) {
        const KernelParam& param = launch.params[p];
        if (param.kind == KernelParam::Scalar) {
          params.push_back(const_cast<char*>(param.bytes.data()));
          continue;
        }
        const auto b = size_t(param.buffer);
        void* address = param.kind == KernelParam::Scratch ? static_cast<char*>(scratch.rawData()) + b
                        : b < plan_.operands                ? operands[b]
                                                            : results[b - plan_.operands];
        addresses[p] = reinterpret_cast<cuda::CUdeviceptr>(address);
        params.push_back(&addresses[p]);
      }
      cuda::launch(device_.index, functions_[l], {launch.grid[0], launch.grid[1], launch.grid[2]},
                   {launch.block[0], launch.block[1], launch.block[2]}, 0, params.data(), op, loc);
    }
  }
  std::string describe() const override { return plan_.schedule; }
  std::string lowered() const override {
    if (!plan_.cudaSource.empty()) return plan_.cudaSource;
    std::string text;
    for (const Launch& launch : plan_.launches) text += launch.image;
    return text;
  }

 private:
  LaunchPlan plan_;
  Device device_;
  mutable std::once_flag loaded_;
  mutable std::vector<cuda::CUfunction> functions_;
};

}  // namespace

std::shared_ptr<const ExternalKernel> cudaKernel(LaunchPlan plan, Device device) {
  return std::make_shared<CudaKernel>(std::move(plan), device);
}

}  // namespace kiln::runtime::gpu
