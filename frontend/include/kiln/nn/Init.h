// nn::init: in-place initializers with PyTorch's fan and gain rules (torch.nn.init). Each
// writes into its tensor without recording history and returns it.
#pragma once

#include <optional>

#include "kiln/core/Tensor.h"

namespace kiln::nn::init {

// torch.nn.init's nonlinearity names.
enum class Nonlinearity { Linear, Conv1d, Conv2d, Conv3d, Sigmoid, Tanh, ReLU, LeakyReLU, SELU };
inline constexpr Nonlinearity kLinear = Nonlinearity::Linear;
inline constexpr Nonlinearity kConv2d = Nonlinearity::Conv2d;
inline constexpr Nonlinearity kSigmoid = Nonlinearity::Sigmoid;
inline constexpr Nonlinearity kTanh = Nonlinearity::Tanh;
inline constexpr Nonlinearity kReLU = Nonlinearity::ReLU;
inline constexpr Nonlinearity kLeakyReLU = Nonlinearity::LeakyReLU;
inline constexpr Nonlinearity kSELU = Nonlinearity::SELU;

// Which fan kaiming_* preserves: the forward pass's variance (fan_in) or the backward's.
enum class FanMode { FanIn, FanOut };
inline constexpr FanMode kFanIn = FanMode::FanIn;
inline constexpr FanMode kFanOut = FanMode::FanOut;

// The recommended gain: 1 for linear, conv and sigmoid; 5/3 for tanh; √2 for ReLU;
// √(2 / (1 + slope²)) for leaky ReLU (`param` is the slope, 0.01 when not given); 3/4
// for SELU.
double calculate_gain(Nonlinearity nonlinearity, std::optional<double> param = std::nullopt);

struct Fans {
  int64_t fan_in;
  int64_t fan_out;
};
// fan_in = size(1)·receptive field, fan_out = size(0)·receptive field, where the
// receptive field is the product of the dims after the first two. kiln::Error for fewer
// than 2 dims.
Fans calculate_fan_in_and_fan_out(const Tensor& tensor, const SourceLoc& loc = SourceLoc::current());

// U(a, b) and N(mean, std²) from the default generator (floating-point tensors).
Tensor uniform_(Tensor tensor, double a = 0.0, double b = 1.0,
                const SourceLoc& loc = SourceLoc::current());
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0,
               const SourceLoc& loc = SourceLoc::current());
Tensor constant_(Tensor tensor, double value, const SourceLoc& loc = SourceLoc::current());
Tensor zeros_(Tensor tensor, const SourceLoc& loc = SourceLoc::current());
Tensor ones_(Tensor tensor, const SourceLoc& loc = SourceLoc::current());

// Glorot: U(±gain·√(6 / (fan_in + fan_out))) and N(0, gain²·2 / (fan_in + fan_out)).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0, const SourceLoc& loc = SourceLoc::current());
Tensor xavier_normal_(Tensor tensor, double gain = 1.0, const SourceLoc& loc = SourceLoc::current());

// He: std = gain / √fan with gain = calculate_gain(nonlinearity, a); uniform draws from
// U(±√3·std), normal from N(0, std²). A tensor with no elements is left alone.
Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU,
                        const SourceLoc& loc = SourceLoc::current());
Tensor kaiming_normal_(Tensor tensor, double a = 0.0, FanMode mode = FanMode::FanIn,
                       Nonlinearity nonlinearity = Nonlinearity::LeakyReLU,
                       const SourceLoc& loc = SourceLoc::current());

}  // namespace kiln::nn::init
