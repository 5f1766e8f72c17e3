// Kiln's training step on a CUDA device for examples/fashion_mnist_mlp's model, eager and
// traced (jit::trace compiled by MLIR, then by NVRTC), timed as scripts/gpu/torch_mlp_step.py
// times PyTorch's eager and torch.compile steps: the same 784-256-256-10 MLP, batch 64,
// cross_entropy, SGD (lr 0.05, momentum 0.9), random data of the example's shapes; the
// median over --steps steps after --warmup, each from a device synchronize to the next. For
// the traced steps, also the first two calls (recording, then compiling: the cold compile,
// with KILN_CACHE_DIR as the caller set it).
// scripts/gpu-check.sh runs both on the same card; docs/GPU.md records the lines.
//   bazel run -c opt //bench:cuda_step -- [--steps 200] [--warmup 20] [--batch-size 64]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/Cuda.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/SGD.h"

int main(int argc, char** argv) {
  using namespace kiln;
  int steps = 200, warmup = 20, batch = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--steps") steps = value;
    else if (flag == "--warmup") warmup = value;
    else if (flag == "--batch-size") batch = value;
    else {
      std::fprintf(stderr, "cuda_step: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (steps < 1 || warmup < 0 || batch < 1) {
    std::fprintf(stderr, "cuda_step: --steps and --batch-size must be at least 1, --warmup at least 0\n");
    return 2;
  }
  if (!cuda::is_available()) {
    std::fprintf(stderr, "cuda_step: no CUDA device: %s\n", cuda::unavailable_reason().c_str());
    return 2;
  }
  Tensor x = randn({batch, 784}, kCUDA), y = randint(0, 10, {batch}, kCUDA);
  auto median = [&](const std::function<void()>& step) {
    for (int i = 0; i < warmup; ++i) step();
    cuda::synchronize();
    std::vector<double> ms;
    for (int i = 0; i < steps; ++i) {
      const auto start = std::chrono::steady_clock::now();
      step();
      cuda::synchronize();
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    return ms[ms.size() / 2];
  };
  // A fresh model and optimizer per mode, from the same seed.
  struct Setup {
    static nn::Sequential onDevice() {
      manual_seed(0);
      nn::Sequential m(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 256), nn::ReLU(), nn::Linear(256, 10));
      m->to(kCUDA);
      return m;
    }
    nn::Sequential model = onDevice();
    optim::SGD optimizer{model->parameters(), optim::SGDOptions(0.05).momentum(0.9)};
    Tensor step(const Tensor& input, const Tensor& target) {
      optimizer.zero_grad(/*set_to_none=*/true);
      Tensor loss = cross_entropy(model->forward(input), target);
      loss.backward();
      optimizer.step();
      return loss;
    }
  };
  auto setup = [] { return std::make_unique<Setup>(); };
  {
    auto eager = setup();
    const double ms = median([&] { eager->step(x, y); });
    std::printf("kiln eager mlp step: %.3f ms (median of %d, batch %d, %s)\n", ms, steps, batch,
                cuda::device_name().c_str());
  }
  for (const char* backend : {"MLIR", "NVRTC"}) {
    auto traced = setup();
    auto step = jit::trace([&](Tensor input, Tensor target) { return traced->step(input, target); },
                           {.compile = {.backend = backend}});
    auto since = [](std::chrono::steady_clock::time_point start) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    try {
      auto start = std::chrono::steady_clock::now();
      step(x, y);
      cuda::synchronize();
      const double recording = since(start);
      start = std::chrono::steady_clock::now();
      step(x, y);
      cuda::synchronize();
      const double compiling = since(start);
      const double ms = median([&] { step(x, y); });
      std::printf("kiln traced mlp step (%s): %.3f ms (median of %d, batch %d); first call (records) %.0f ms, "
                  "second (compiles) %.0f ms\n",
                  backend, ms, steps, batch, recording, compiling);
    } catch (const std::exception& e) {
      std::printf("kiln traced mlp step (%s): FAILED: %s\n", backend, e.what());
      return 1;
    }
  }
  const cuda::MemoryStats stats = cuda::memory_stats();
  std::printf("kiln allocator: %.1f MiB allocated, %.1f MiB peak, %.1f MiB cached, %llu device allocations, "
              "%llu of %llu blocks from the cache\n",
              stats.allocated_bytes / 1048576.0, stats.peak_allocated_bytes / 1048576.0,
              stats.cached_bytes / 1048576.0, (unsigned long long)stats.device_allocations,
              (unsigned long long)stats.cache_hits, (unsigned long long)stats.allocations);
  return 0;
}
