// CUDA devices as the user sees them: availability, errors without a device, transfers,
// printing, one-device checks, autograd across devices, and the caching allocator under a
// training loop. The tests that need a device report SKIPPED without one; the ones about
// having none run only where there is none.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/core/Autograd.h"
#include "kiln/core/Cuda.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

#define REQUIRE_CUDA()                                                              \
  if (!cuda::is_available())                                                        \
  GTEST_SKIP() << "SKIPPED: no CUDA device: " << cuda::unavailable_reason()

const Device kGpu(kCUDA, 0);

TEST(CudaWithoutDevice, EveryUseSaysWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "SKIPPED: this machine has a CUDA device";
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_FALSE(cuda::unavailable_reason().empty());
  const std::string why = "no CUDA device: " + cuda::unavailable_reason();
  try {
    zeros({2, 3}, kCUDA);
    FAIL() << "zeros on CUDA did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "empty");
    EXPECT_EQ(e.message(), why);
  }
  EXPECT_THROW(randn({4}).cuda(), Error);
  EXPECT_THROW(cuda::memory_stats(), Error);
  EXPECT_THROW(cuda::synchronize(), Error);
  // The CPU is unaffected.
  EXPECT_EQ(sum(ones({3})).item<float>(), 3.0f);
}

TEST(CudaDevice, ReportsTheCard) {
  REQUIRE_CUDA();
  EXPECT_GE(cuda::device_count(), 1);
  EXPECT_FALSE(cuda::device_name().empty());
  EXPECT_THAT(cuda::device_arch(), StartsWith("sm_"));
  std::printf("device 0: %s (%s)\n", cuda::device_name().c_str(), cuda::device_arch().c_str());
}

TEST(CudaDevice, RoundTripsEveryDtype) {
  REQUIRE_CUDA();
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool}) {
    Tensor x = mul(randn({3, 5}), 4.0).to(dtype);
    Tensor y = x.to(kCUDA);
    EXPECT_EQ(y.device(), kGpu);
    EXPECT_EQ(y.dtype(), dtype);
    Tensor back = y.cpu();
    EXPECT_TRUE(back.device().isCPU());
    EXPECT_EQ(sum(ne(back, x).to(kInt64)).item<int64_t>(), 0) << kiln::name(dtype);
    // A strided view moves as its values.
    Tensor t = x.t();
    EXPECT_EQ(sum(ne(t.cuda().cpu(), t).to(kInt64)).item<int64_t>(), 0) << kiln::name(dtype);
  }
  Tensor big = randn({3 << 20});  // larger than the staging buffers
  EXPECT_EQ(sum(ne(big.cuda().cpu(), big).to(kInt64)).item<int64_t>(), 0);
}

TEST(CudaDevice, PrintsAsPyTorchDoes) {
  REQUIRE_CUDA();
  std::ostringstream a, b, c;
  a << tensor(std::vector<float>{1, 2}).cuda();
  EXPECT_EQ(a.str(), "tensor([1., 2.], device='cuda:0')");
  b << tensor(std::vector<double>{1.5}).cuda();
  EXPECT_EQ(b.str(), "tensor([1.5000], device='cuda:0', dtype=kiln.float64)");
  c << ones({2}, kCUDA).requires_grad_();
  EXPECT_EQ(c.str(), "tensor([1., 1.], device='cuda:0', requires_grad=True)");
  EXPECT_EQ(full({}, 3.0, kCUDA).item<float>(), 3.0f);
}

TEST(CudaDevice, MixingDevicesNamesBoth) {
  REQUIRE_CUDA();
  Tensor a = ones({2, 3}, kCUDA), b = ones({2, 3});
  try {
    matmul(a, b.t());
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("is on cuda:0 and operand 1 (shape [3, 2]) is on cpu"));
    EXPECT_THAT(e.what(), HasSubstr("CudaDeviceTest.cpp"));
  }
  // A 0-d CPU tensor joins the other operand's device, as in PyTorch; copy_ crosses devices.
  EXPECT_EQ(add(a, scalar_tensor(2.0)).device(), kGpu);
  Tensor c = zeros({2, 3}, kCUDA);
  c.copy_(full({2, 3}, 7.0));
  EXPECT_EQ(sum(c).item<float>(), 42.0f);
}

TEST(CudaDevice, GradientsFlowBackAcrossTo) {
  REQUIRE_CUDA();
  Tensor w = randn({4, 3}).requires_grad_();
  Tensor x = randn({5, 4}).cuda();
  Tensor loss = sum(tanh(matmul(x, w.cuda())));
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_TRUE(w.grad().device().isCPU());
  Tensor wc = w.detach().clone().requires_grad_();
  sum(tanh(matmul(x.cpu(), wc))).backward();
  EXPECT_LT(amax(abs(sub(w.grad(), wc.grad()))).item<float>(), 1e-5f);
}

TEST(CudaAllocator, ReusesBlocksAndSaysWhatOutOfMemoryMeans) {
  REQUIRE_CUDA();
  cuda::synchronize();
  const cuda::MemoryStats before = cuda::memory_stats();
  for (int i = 0; i < 10; ++i) {
    Tensor t = zeros({1 << 20}, kCUDA);
    Tensor u = add(t, 1.0);
  }
  const cuda::MemoryStats after = cuda::memory_stats();
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_GE(after.cache_hits - before.cache_hits, 15u);
  EXPECT_LE(after.device_allocations - before.device_allocations, 3u);
  EXPECT_GT(after.peak_allocated_bytes, before.allocated_bytes);
  try {
    zeros({int64_t(1) << 40}, kCUDA);  // 4 TiB
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.message(), HasSubstr("CUDA out of memory on cuda:0: tried to allocate 4194304.00 MiB"));
    EXPECT_THAT(e.message(), HasSubstr("the cache was emptied and the allocation retried"));
    EXPECT_THAT(e.message(), HasSubstr("free of"));
  }
  const cuda::MemoryStats oom = cuda::memory_stats();
  EXPECT_EQ(oom.out_of_memory, after.out_of_memory + 1);
  EXPECT_EQ(oom.cached_bytes, 0u);  // emptied by the retry
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_stats().cached_bytes, 0u);
}

// A small MLP trained by hand on both devices from the same start: the losses agree, and
// after the first steps the allocator serves every block from its cache.
TEST(CudaAllocator, TrainingLoopRunsFromTheCache) {
  REQUIRE_CUDA();
  manual_seed(3);
  Tensor w1 = mul(randn({784, 128}), 0.05), b1 = zeros({128}), w2 = mul(randn({128, 10}), 0.05), b2 = zeros({10});
  std::vector<Tensor> cpu{w1, b1, w2, b2}, gpu;
  for (Tensor& p : cpu) {
    gpu.push_back(p.cuda().requires_grad_());
    p.requires_grad_();
  }
  auto step = [](std::vector<Tensor>& p, const Tensor& x, const Tensor& y) {
    Tensor h = relu(addmm(p[1], x, p[0]));
    Tensor loss = cross_entropy(addmm(p[3], h, p[2]), y);
    loss.backward();
    NoGradGuard noGrad;
    for (Tensor& t : p) {
      t.sub_(t.grad(), 0.1);
      t.grad().zero_();
    }
    return loss.item<float>();
  };
  uint64_t allocationsAfterWarmup = 0;
  for (int i = 0; i < 30; ++i) {
    manual_seed(100 + i);
    Tensor x = randn({64, 784}), y = randint(0, 10, {64});
    const float lc = step(cpu, x, y), lg = step(gpu, x.cuda(), y.cuda());
    EXPECT_NEAR(lc, lg, 1e-4 * std::max(1.0f, std::abs(lc))) << "step " << i;
    if (i == 4) allocationsAfterWarmup = cuda::memory_stats().device_allocations;
  }
  EXPECT_EQ(cuda::memory_stats().device_allocations, allocationsAfterWarmup);
}

}  // namespace
}  // namespace kiln
