#include "kiln/nn/Init.h"

#include <cmath>

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"

namespace kiln::nn::init {

namespace {

void requireFloating(const Tensor& tensor, const char* op, const SourceLoc& loc) {
  if (!tensor.defined()) throw Error::make(loc, op, "called on an undefined tensor");
  if (!tensor.is_floating_point())
    throw TypeError::make(loc, op, "expects a floating-point tensor, got ", tensor.dtype(),
                          " of shape ", tensor.sizes());
}

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

Tensor uniform_(Tensor tensor, double a, double b, const SourceLoc& loc) {
  requireFloating(tensor, "uniform_", loc);
  NoGradGuard noGrad;
  tensor.copy_(add(mul(rand(tensor.sizes(), TensorOptions(tensor.dtype()).device(tensor.device()), loc), b - a, loc), a, loc), loc);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std, const SourceLoc& loc) {
  requireFloating(tensor, "normal_", loc);
  if (!(std >= 0)) throw Error::make(loc, "normal_", "std must be >= 0, got ", std);
  NoGradGuard noGrad;
  tensor.copy_(add(mul(randn(tensor.sizes(), TensorOptions(tensor.dtype()).device(tensor.device()), loc), std, loc), mean, loc), loc);
  return tensor;
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
