// Where a tensor lives: the CPU or a numbered CUDA device, named as PyTorch names them.
#pragma once

#include <cstdint>
#include <ostream>
#include <source_location>
#include <string>
#include <string_view>

namespace kiln {

enum class DeviceType : uint8_t { CPU, CUDA };

// LibTorch's spellings; both convert to Device.
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

// "cpu" / "cuda".
std::string_view name(DeviceType type);

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;  // always 0 for the CPU

  constexpr Device() = default;
  constexpr Device(DeviceType deviceType, int deviceIndex = 0)
      : type(deviceType), index(deviceIndex) {}

  // "cpu", "cpu:0", "cuda" (= "cuda:0"), "cuda:1". kiln::Error for anything else.
  static Device parse(std::string_view text,
                      const std::source_location& loc = std::source_location::current());

  bool isCPU() const { return type == DeviceType::CPU; }
  bool isCUDA() const { return type == DeviceType::CUDA; }

  // "cpu", "cuda:0": what PyTorch prints for these devices.
  std::string str() const;

  friend bool operator==(const Device&, const Device&) = default;
};

std::ostream& operator<<(std::ostream& os, const Device& device);

namespace detail {
// The device factories without an operand put their tensors on (full, arange, rand): the
// CPU unless a FactoryDeviceGuard on this thread says otherwise. zeros_like(x), a scalar
// operand of an op on x and factories given a device set it around their dispatch.
Device factoryDevice();
class FactoryDeviceGuard {
 public:
  explicit FactoryDeviceGuard(Device device);
  ~FactoryDeviceGuard();
  FactoryDeviceGuard(const FactoryDeviceGuard&) = delete;
  FactoryDeviceGuard& operator=(const FactoryDeviceGuard&) = delete;

 private:
  Device previous_;
};
}  // namespace detail

}  // namespace kiln
