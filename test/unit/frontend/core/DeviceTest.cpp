#include "kiln/core/Device.h"

#include <gtest/gtest.h>

#include <sstream>

#include "kiln/core/Error.h"

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

}  // namespace
}  // namespace kiln
