// TensorOptions: the dtype, device and requires_grad a factory makes its tensor with, as
// torch::TensorOptions; Tensor::options() gives a tensor's own.
#pragma once

#include <optional>

#include "kiln/core/Device.h"
#include "kiln/core/DType.h"

namespace kiln {

// It converts from a dtype or a device alone, so zeros({2}, kFloat64), randn({4}, kCUDA)
// and zeros({2}, TensorOptions().dtype(kHalf).device(kCUDA)) read as in LibTorch. A factory
// given no dtype uses its own default (float32; int64 for randint); given no device, the CPU.
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType dtype) : dtype_(dtype) {}            // NOLINT: implicit, as LibTorch
  TensorOptions(DeviceType type) : device_(type) {}        // NOLINT
  TensorOptions(Device device) : device_(device) {}        // NOLINT
  TensorOptions dtype(DType dtype) const { TensorOptions o = *this; o.dtype_ = dtype; return o; }
  TensorOptions device(Device device) const { TensorOptions o = *this; o.device_ = device; return o; }
  TensorOptions requires_grad(bool on) const { TensorOptions o = *this; o.requiresGrad_ = on; return o; }
  DType dtype_or(DType fallback) const { return dtype_.value_or(fallback); }
  bool has_dtype() const { return dtype_.has_value(); }
  // The device given, else the factory device: the CPU, or inside an op on a CUDA tensor
  // that tensor's device (detail::FactoryDeviceGuard), so zeros(shape, x.dtype()) in a
  // gradient lands where x is.
  Device device() const { return device_.value_or(detail::factoryDevice()); }
  bool requires_grad() const { return requiresGrad_; }

 private:
  std::optional<DType> dtype_;
  std::optional<Device> device_;
  bool requiresGrad_ = false;
};

// LibTorch's shorthands: ones({2}, requires_grad()), zeros({2}, dtype(kInt64)).
inline TensorOptions dtype(DType dtype) { return TensorOptions(dtype); }
inline TensorOptions device(Device device) { return TensorOptions(device); }
inline TensorOptions requires_grad(bool on = true) { return TensorOptions().requires_grad(on); }

}  // namespace kiln
