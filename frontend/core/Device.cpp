#include "kiln/core/Device.h"

#include <charconv>

#include "kiln/core/Error.h"

namespace kiln {

namespace {

[[noreturn]] void throwBadDevice(std::string_view text, const std::source_location& loc) {
  throw Error::make(loc, "Device", "invalid device string '", text,
                    "'; expected 'cpu', 'cuda' or 'cuda:<index>'");
}

// Digits only: from_chars would also accept a sign we do not want in "cuda:-1".
int parseIndex(std::string_view digits, std::string_view text, const std::source_location& loc) {
  int index = 0;
  bool onlyDigits = !digits.empty() && digits.find_first_not_of("0123456789") == digits.npos;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (!onlyDigits || ec != std::errc() || end != digits.data() + digits.size())
    throwBadDevice(text, loc);
  return index;
}

}  // namespace

std::string_view name(DeviceType type) { return type == DeviceType::CPU ? "cpu" : "cuda"; }

Device Device::parse(std::string_view text, const std::source_location& loc) {
  std::string_view kind = text.substr(0, text.find(':'));
  bool hasIndex = kind.size() < text.size();
  int index = hasIndex ? parseIndex(text.substr(kind.size() + 1), text, loc) : 0;
  if (kind == "cuda") return Device(DeviceType::CUDA, index);
  if (kind == "cpu" && index == 0) return Device(DeviceType::CPU);
  throwBadDevice(text, loc);
}

std::string Device::str() const {
  if (isCPU()) return "cpu";
  return std::string(name(type)) + ":" + std::to_string(index);
}

std::ostream& operator<<(std::ostream& os, const Device& device) { return os << device.str(); }

namespace detail {
namespace {
thread_local Device tFactoryDevice = kCPU;
}  // namespace

Device factoryDevice() { return tFactoryDevice; }
FactoryDeviceGuard::FactoryDeviceGuard(Device device) : previous_(tFactoryDevice) {
  tFactoryDevice = device;
}
FactoryDeviceGuard::~FactoryDeviceGuard() { tFactoryDevice = previous_; }
}  // namespace detail

}  // namespace kiln
