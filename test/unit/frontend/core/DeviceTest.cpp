#include "kiln/core/Device.h"

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>

#include "kiln/core/Cuda.h"
#include "kiln/core/Error.h"
#include "kiln/core/Ops.h"

namespace kiln {
namespace {

TEST(DeviceTest, Constants) {
  Device cpu = kCPU;
  EXPECT_TRUE(cpu.isCPU());
  EXPECT_EQ(cpu, Device());
  EXPECT_EQ(cpu.index, 0);
  Device gpu = kCUDA;
  EXPECT_TRUE(gpu.isCUDA());
  EXPECT_EQ(gpu.index, 0);
  EXPECT_NE(Device(kCUDA, 1), Device(kCUDA, 0));
  EXPECT_NE(Device(kCUDA, 0), Device(kCPU));
  EXPECT_EQ(name(kCPU), "cpu");
  EXPECT_EQ(name(kCUDA), "cuda");
}

TEST(DeviceTest, PrintsLikePyTorch) {
  EXPECT_EQ(Device(kCPU).str(), "cpu");
  EXPECT_EQ(Device(kCUDA).str(), "cuda:0");
  EXPECT_EQ(Device(kCUDA, 3).str(), "cuda:3");
  std::ostringstream os;
  os << Device(kCUDA, 1) << " " << Device(kCPU);
  EXPECT_EQ(os.str(), "cuda:1 cpu");
}

TEST(DeviceTest, Parses) {
  EXPECT_EQ(Device::parse("cpu"), Device(kCPU));
  EXPECT_EQ(Device::parse("cpu:0"), Device(kCPU));
  EXPECT_EQ(Device::parse("cuda"), Device(kCUDA, 0));
  EXPECT_EQ(Device::parse("cuda:0"), Device(kCUDA, 0));
  EXPECT_EQ(Device::parse("cuda:1"), Device(kCUDA, 1));
  EXPECT_EQ(Device::parse("cuda:12"), Device(kCUDA, 12));
  EXPECT_EQ(Device::parse(Device(kCUDA, 7).str()), Device(kCUDA, 7));
}

TEST(DeviceTest, RejectsBadStringsNamingTheTextAndLine) {
  for (const char* bad : {"", "gpu", "CPU", "cuda:", "cuda:x", "cuda:-1", "cuda:+1", "cuda:1x",
                          "cuda:1:2", "cpu:1", ":0", "cuda:99999999999", " cuda"}) {
    int line = __LINE__ + 2;
    try {
      Device::parse(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                "kiln::Device: invalid device string '" + std::string(bad) +
                    "'; expected 'cpu', 'cuda' or 'cuda:<index>' (at "
                    "test/unit/frontend/core/DeviceTest.cpp:" + std::to_string(line) + ")");
    }
  }
}

// ---- without a CUDA device (test/gpu covers the machines with one) -----------------------

// Runs `fn`, which must throw a kiln::Error whose message starts "no CUDA device".
template <class F>
void expectNoCudaDevice(F fn, const char* what) {
  try {
    fn();
    ADD_FAILURE() << what << " did not throw";
  } catch (const Error& e) {
    EXPECT_TRUE(e.message().starts_with("no CUDA device")) << what << ": " << e.what();
  }
}

TEST(DeviceTest, WithoutACudaDeviceEveryEntryPointSaysWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_FALSE(cuda::unavailable_reason().empty());
  expectNoCudaDevice([] { zeros({2}, kCUDA); }, "zeros({2}, kCUDA)");
  expectNoCudaDevice([] { randn({2}, TensorOptions().dtype(kHalf).device(kCUDA)); }, "randn");
  expectNoCudaDevice([] { ones({2}).cuda(); }, "cuda()");
  expectNoCudaDevice([] { ones({2}).to(Device(kCUDA, 1)); }, "to(cuda:1)");
  expectNoCudaDevice([] { cuda::device_name(); }, "device_name");
  expectNoCudaDevice([] { cuda::synchronize(); }, "synchronize");
}

TEST(DeviceTest, ToTheTensorsOwnDeviceIsTheSameTensor) {
  Tensor x = ones({2, 3});
  EXPECT_TRUE(x.to(kCPU).is_same(x));
  EXPECT_TRUE(x.cpu().is_same(x));
  EXPECT_EQ(zeros({2}, TensorOptions().device(kCPU)).device(), Device(kCPU));
}

// A tensor that says it is on cuda:0 but holds CPU memory: the dispatcher's one-device check
// runs before any kernel, so its message is testable without a GPU.
Tensor labelledCuda(const Tensor& cpu) {
  auto impl = std::make_shared<TensorImpl>(*cpu.impl());
  impl->device = Device(kCUDA, 0);
  return Tensor(impl);
}

TEST(DeviceTest, AnOpOnTwoDevicesNamesBoth) {
  Tensor cpu = ones({2, 3}), gpu = labelledCuda(ones({2, 3}));
  try {
    add(cpu, gpu);
    FAIL() << "add ran on two devices";
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "add");
    EXPECT_EQ(e.message(), "expects all operands on one device, but operand 0 (shape [2, 3]) is "
                           "on cpu and operand 1 (shape [2, 3]) is on cuda:0; move one with .to()");
  }
  try {
    mul(gpu, ones({3}));  // broadcasting first: the shapes named are the broadcast ones
    FAIL() << "mul ran on two devices";
  } catch (const Error& e) {
    EXPECT_TRUE(e.message().starts_with("expects all operands on one device")) << e.what();
    EXPECT_NE(e.message().find("is on cuda:0 and operand 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln
