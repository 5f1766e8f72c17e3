#include "kiln/nn/Init.h"

#include <cmath>

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"

namespace kiln::nn::init {

namespace {

int64_t fanFor(const Tensor& tensor, FanMode mode, const SourceLoc& loc) {
  Fans fans = calculate_fan_in_and_fan_out(tensor, loc);
  return mode == FanMode::FanIn ? fans.fan_in : fans.fan_out;
}

double kaimingStd(const Tensor& tensor, double a, FanMode mode, Nonlinearity nonlinearity,
                  const SourceLoc& loc) {
  return calculate_gain(nonlinearity, a) / std::sqrt(double(fanFor(tensor, mode, loc)));
}

}  // namespace

double calculate_gain(Nonlinearity nonlinearity, std::optional<double> param) {
  switch (nonlinearity) {
    case Nonlinearity::Tanh: return 5.0 / 3.0;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: {
      double slope = param.value_or(0.01);
      return std::sqrt(2.0 / (1.0 + slope * slope));
    }
    case Nonlinearity::SELU: return 3.0 / 4.0;
    default: return 1.0;  // linear, conv, sigmoid
  }
}

Fans calculate_fan_in_and_fan_out(const Tensor& tensor, const SourceLoc& loc) {
  if (!tensor.defined() || tensor.dim() < 2)
    throw Error::make(loc, "calculate_fan_in_and_fan_out", "fan in and fan out cannot be computed "
                      "for a tensor with fewer than 2 dims, got shape ",
                      tensor.defined() ? tensor.sizes() : Shape{});
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.sizes()[size_t(d)];
  return {tensor.sizes()[1] * receptive, tensor.sizes()[0] * receptive};
}

// The Tensor methods, with history off: initializing a parameter is no step to differentiate.
Tensor uniform_(Tensor tensor, double a, double b, const SourceLoc& loc) {
  NoGradGuard noGrad;
  return tensor.uniform_(a, b, loc);
}

Tensor normal_(Tensor tensor, double mean, double std, const SourceLoc& loc) {
  NoGradGuard noGrad;
  return tensor.normal_(mean, std, loc);
}

Tensor constant_(Tensor tensor, double value, const SourceLoc& loc) {
  if (!tensor.defined()) throw Error::make(loc, "constant_", "called on an undefined tensor");
  NoGradGuard noGrad;
  tensor.fill_(value, loc);
  return tensor;
}

Tensor zeros_(Tensor tensor, const SourceLoc& loc) { return constant_(std::move(tensor), 0.0, loc); }
Tensor ones_(Tensor tensor, const SourceLoc& loc) { return constant_(std::move(tensor), 1.0, loc); }

Tensor xavier_uniform_(Tensor tensor, double gain, const SourceLoc& loc) {
  Fans fans = calculate_fan_in_and_fan_out(tensor, loc);
  double bound = std::sqrt(3.0) * gain * std::sqrt(2.0 / double(fans.fan_in + fans.fan_out));
  return uniform_(std::move(tensor), -bound, bound, loc);
}

Tensor xavier_normal_(Tensor tensor, double gain, const SourceLoc& loc) {
  Fans fans = calculate_fan_in_and_fan_out(tensor, loc);
  return normal_(std::move(tensor), 0.0, gain * std::sqrt(2.0 / double(fans.fan_in + fans.fan_out)),
                 loc);
}

Tensor kaiming_uniform_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity,
                        const SourceLoc& loc) {
  if (tensor.defined() && tensor.numel() == 0) return tensor;
  double bound = std::sqrt(3.0) * kaimingStd(tensor, a, mode, nonlinearity, loc);
  return uniform_(std::move(tensor), -bound, bound, loc);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity,
                       const SourceLoc& loc) {
  if (tensor.defined() && tensor.numel() == 0) return tensor;
  double std = kaimingStd(tensor, a, mode, nonlinearity, loc);
  return normal_(std::move(tensor), 0.0, std, loc);
}

}  // namespace kiln::nn::init
