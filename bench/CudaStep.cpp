// Kiln's training step on a CUDA device for examples/fashion_mnist_mlp's model, eager and
// traced (jit::trace compiled by MLIR, NVRTC and HALIDE where this binary has it), timed as scripts/gpu/torch_mlp_step.py
// times PyTorch's eager and torch.compile steps: the same 784-256-256-10 MLP, batch 64,
// cross_entropy, SGD (lr 0.05, momentum 0.9), random data of the example's shapes; the
// median over --steps steps after --warmup, each from a device synchronize to the next. For
// the traced steps, also the first two calls (recording, then compiling: the cold compile,
// with KILN_CACHE_DIR as the caller set it).
// Then the bandwidth rows: Kiln's eager copy (clone) of 16M and 64M floats, and
// bench/traced's gelu chain (bias + scale + tanh GELU + scale on [rows, 1024]), softmax and
// layer_norm over the rows, eager and traced under each GPU backend, as GB/s of bytes read
// and written (each the median of 5 rounds of 20
// calls between synchronizes); torch_mlp_step.py measures the card's copy (torch's copy_)
// in the same run. Last, MobileNetV2's training step (bench/Cnn.h's: 10 classes, 32x32,
// batch 64, SGD with momentum) eager and traced under MLIR, median of --cnn-steps.
// scripts/gpu-check.sh runs both on the same card; docs/GPU.md records the lines.
//   bazel run -c opt //bench:cuda_step -- [--steps 200] [--warmup 20] [--batch-size 64] [--cnn-steps 20]
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
#include "kiln/vision/MobileNetV2.h"
#include "runtime/Backend.h"

namespace {

using namespace kiln;

// The GPU backends this binary has (HALIDE is left out of the main GPU bundle), saying which
// it lacks.
const std::vector<std::string>& gpuBackends() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> found;
    for (const char* name : {"MLIR", "NVRTC", "HALIDE"}) {
      if (runtime::findBackend(name)) found.push_back(name);
      else std::printf("cuda_step: backend %s is not built into this binary; its rows do not run\n", name);
    }
    return found;
  }();
  return names;
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// One training step as the example takes it: gradients cleared, cross_entropy of the
// model's output, backward, an SGD step.
template <class Model>
Tensor sgdStep(Model& model, optim::SGD& opt, const Tensor& x, const Tensor& y) {
  opt.zero_grad(/*set_to_none=*/true);
  Tensor loss = cross_entropy(model->forward(x), y);
  loss.backward();
  opt.step();
  return loss;
}

// The median of `steps` steps after `warmup` untimed, each from a device synchronize to the
// next, so a step's queued kernels are counted.
double medianStepMs(const std::function<void()>& step, int warmup, int steps) {
  for (int i = 0; i < warmup; ++i) step();
  cuda::synchronize();
  std::vector<double> ms;
  for (int i = 0; i < steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    step();
    cuda::synchronize();
    ms.push_back(msSince(start));
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

// Milliseconds a call of fn takes on the device when calls queue back to back: the median
// over 5 rounds of 20 calls, each round from a synchronize to the next.
double queuedMs(const std::function<void()>& fn) {
  for (int i = 0; i < 3; ++i) fn();
  cuda::synchronize();
  std::vector<double> rounds;
  for (int round = 0; round < 5; ++round) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) fn();
    cuda::synchronize();
    rounds.push_back(msSince(start) / 20);
  }
  std::nth_element(rounds.begin(), rounds.begin() + 2, rounds.end());
  return rounds[2];
}

// Kiln's eager copy, and the gelu chain, softmax over rows and layer_norm over rows (of
// 1024) eager and traced under each GPU backend, in GB/s of the bytes each call reads and
// writes (2 x 4 bytes an element; the [1024] vectors are left out).
void bandwidthRows(int& failures) {
  for (int64_t rows : {16384, 65536}) {
    const int64_t n = rows * 1024;
    const double gb = 2.0 * 4.0 * double(n) / 1e9;
    const std::string size = std::to_string(n >> 20) + "M";
    Tensor x = randn({rows, 1024}, kCUDA), bias = randn({1024}, kCUDA);
    try {
      const double copyMs = queuedMs([&] { (void)x.clone(); });
      std::printf("kiln eager copy %s: %.1f GB/s (%.3f ms)\n", size.c_str(), gb / copyMs * 1e3, copyMs);
    } catch (const std::exception& e) {
      std::printf("kiln eager copy %s: FAILED: %s\n", size.c_str(), e.what());
      ++failures;
    }
    // Each row's function of x and the [1024] vector b (the chain's bias; layer_norm's
    // weight and bias).
    const std::vector<std::pair<std::string, std::function<Tensor(Tensor, Tensor)>>> rowsOf = {
        {"gelu chain", [](Tensor in, Tensor b) { return mul(gelu(mul(add(in, b), 0.5), "tanh"), 2.0); }},
        {"softmax rows", [](Tensor in, Tensor) { return softmax(in, 1); }},
        {"layer_norm rows", [](Tensor in, Tensor b) { return layer_norm(in, {1024}, b, b); }},
    };
    std::vector<std::string> backends = gpuBackends();
    backends.insert(backends.begin(), "eager");
    for (const auto& [what, function] : rowsOf)
      for (const std::string& name : backends) {
        const char* backend = name.c_str();
        try {
          std::function<Tensor(Tensor, Tensor)> fn = function;
          if (name != "eager") fn = jit::trace(function, {.compile = {.backend = name}});
          const double ms = queuedMs([&] { (void)fn(x, bias); });
          std::printf("kiln %s %s (%s): %.1f GB/s (%.3f ms)\n", what.c_str(), size.c_str(), backend,
                      gb / ms * 1e3, ms);
        } catch (const std::exception& e) {
          std::printf("kiln %s %s (%s): FAILED: %s\n", what.c_str(), size.c_str(), backend, e.what());
          ++failures;
        }
        std::fflush(stdout);
      }
  }
}

// MobileNetV2's training step on the device, eager and traced under MLIR (bench/Cnn.h's model
// and optimizer; the traced step's first call warms SGD's momentum, the second records, the
// third compiles).
void cnnRows(int steps, int warmup, int& failures) {
  struct Cnn {
    vision::MobileNetV2 model = [] {
      manual_seed(0);
      auto m = vision::mobilenet_v2(10, 1.0);
      m->to(kCUDA);
      return m;
    }();
    optim::SGD opt{model->parameters(), optim::SGDOptions(0.01).momentum(0.9)};
    Tensor step(const Tensor& x, const Tensor& y) { return sgdStep(model, opt, x, y); }
  };
  manual_seed(1);
  Tensor x = randn({64, 3, 32, 32}, kCUDA), y = randint(0, 10, {64}, kCUDA);
  auto median = [&](const std::function<void()>& step) { return medianStepMs(step, std::min(warmup, 5), steps); };
  try {
    Cnn eager;
    const double ms = median([&] { eager.step(x, y); });
    std::printf("kiln eager mobilenet_v2 step: %.3f ms (median of %d, batch 64, 32x32)\n", ms, steps);
  } catch (const std::exception& e) {
    std::printf("kiln eager mobilenet_v2 step: FAILED: %s\n", e.what());
    ++failures;
  }
  std::fflush(stdout);
  try {
    Cnn cnn;
    auto step = jit::trace([&](Tensor input, Tensor target) { return cnn.step(input, target); },
                           {.compile = {.backend = "MLIR"}});
    std::vector<double> first;
    for (int call = 0; call < 3; ++call) {
      const auto start = std::chrono::steady_clock::now();
      Tensor loss = step(x, y);
      (void)loss.item<float>();
      first.push_back(msSince(start));
    }
    const double ms = median([&] { step(x, y); });
    std::printf("kiln traced mobilenet_v2 step (MLIR): %.3f ms (median of %d); first calls %.0f, %.0f, %.0f ms\n",
                ms, steps, first[0], first[1], first[2]);
  } catch (const std::exception& e) {
    std::printf("kiln traced mobilenet_v2 step (MLIR): FAILED: %s\n", e.what());
    ++failures;
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kiln;
  int steps = 200, warmup = 20, batch = 64, cnnSteps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--steps") steps = value;
    else if (flag == "--warmup") warmup = value;
    else if (flag == "--batch-size") batch = value;
    else if (flag == "--cnn-steps") cnnSteps = value;
    else {
      std::fprintf(stderr, "cuda_step: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (steps < 1 || warmup < 0 || batch < 1 || cnnSteps < 1) {
    std::fprintf(stderr, "cuda_step: --steps, --batch-size and --cnn-steps must be at least 1, --warmup at least 0\n");
    return 2;
  }
  if (!cuda::is_available()) {
    std::fprintf(stderr, "cuda_step: no CUDA device: %s\n", cuda::unavailable_reason().c_str());
    return 2;
  }
  Tensor x = randn({batch, 784}, kCUDA), y = randint(0, 10, {batch}, kCUDA);
  auto median = [&](const std::function<void()>& step) { return medianStepMs(step, warmup, steps); };
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
    Tensor step(const Tensor& input, const Tensor& target) { return sgdStep(model, optimizer, input, target); }
  };
  auto setup = [] { return std::make_unique<Setup>(); };
  int failures = 0;
  {
    auto eager = setup();
    const double ms = median([&] { eager->step(x, y); });
    std::printf("kiln eager mlp step: %.3f ms (median of %d, batch %d, %s)\n", ms, steps, batch,
                cuda::device_name().c_str());
    std::fflush(stdout);
  }
  for (const std::string& name : gpuBackends()) {
    const char* backend = name.c_str();
    auto traced = setup();
    auto step = jit::trace([&](Tensor input, Tensor target) { return traced->step(input, target); },
                           {.compile = {.backend = name}});
    try {
      auto start = std::chrono::steady_clock::now();
      step(x, y);
      cuda::synchronize();
      const double recording = msSince(start);
      start = std::chrono::steady_clock::now();
      step(x, y);
      cuda::synchronize();
      const double compiling = msSince(start);
      const double ms = median([&] { step(x, y); });
      std::printf("kiln traced mlp step (%s): %.3f ms (median of %d, batch %d); first call (records) %.0f ms, "
                  "second (compiles) %.0f ms\n",
                  backend, ms, steps, batch, recording, compiling);
    } catch (const std::exception& e) {
      std::printf("kiln traced mlp step (%s): FAILED: %s\n", backend, e.what());
      ++failures;
    }
    std::fflush(stdout);
  }
  bandwidthRows(failures);
  cnnRows(cnnSteps, warmup, failures);
  const cuda::MemoryStats stats = cuda::memory_stats();
  std::printf("kiln allocator: %.1f MiB allocated, %.1f MiB peak, %.1f MiB cached, %llu device allocations, "
              "%llu of %llu blocks from the cache\n",
              stats.allocated_bytes / 1048576.0, stats.peak_allocated_bytes / 1048576.0,
              stats.cached_bytes / 1048576.0, (unsigned long long)stats.device_allocations,
              (unsigned long long)stats.cache_hits, (unsigned long long)stats.allocations);
  return failures == 0 ? 0 : 1;
}
