// vision::mobilenet_v2: torchvision's MobileNetV2 (Sandler et al., 2018) with its layer
// structure, parameter names (features.0.0.weight ... classifier.1.bias) and
// initialization, so torchvision checkpoints load by name.
#pragma once

#include <cstdint>
#include <optional>

#include "kiln/nn/Modules.h"

namespace kiln::vision {

// torchvision's _make_divisible: `value` rounded to the nearest multiple of `divisor`
// (at least min_value, default divisor), and never below 90% of `value`.
int64_t make_divisible(double value, int64_t divisor,
                       std::optional<int64_t> min_value = std::nullopt);

// Conv2d (no bias, padding (k - 1) / 2) → BatchNorm2d → ReLU6, children 0, 1, 2
// (torchvision.ops.Conv2dNormActivation with MobileNetV2's layers).
class Conv2dNormActivationImpl : public nn::SequentialImpl {
 public:
  Conv2dNormActivationImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size = 3,
                           int64_t stride = 1, int64_t groups = 1);
};
KILN_MODULE(Conv2dNormActivation);

// The inverted residual block: 1×1 expansion (when expand_ratio != 1), 3×3 depthwise
// conv, 1×1 linear projection with BatchNorm, all under the child "conv"; the input is
// added back when stride is 1 and the channel count is kept.
class InvertedResidualImpl : public nn::Module {
 public:
  InvertedResidualImpl(int64_t in_channels, int64_t out_channels, int64_t stride,
                       int64_t expand_ratio);
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());

  nn::Sequential conv{nullptr};
  bool use_res_connect;
};
KILN_MODULE(InvertedResidual);

// features (Sequential of the stem, 17 inverted residuals and the 1×1 head) →
// adaptive_avg_pool2d(1) → flatten → classifier (Dropout(0.2), Linear).
// Initialization as torchvision: convs kaiming_normal_(fan_out), BatchNorm ones/zeros,
// Linear N(0, 0.01) with zero bias.
class MobileNetV2Impl : public nn::Module {
 public:
  explicit MobileNetV2Impl(int64_t num_classes = 1000, double width_mult = 1.0,
                           int64_t round_nearest = 8, double dropout = 0.2);
  // x [N, 3, H, W] -> logits [N, num_classes].
  Tensor forward(const Tensor& x, const SourceLoc& loc = SourceLoc::current());

  nn::Sequential features{nullptr};
  nn::Sequential classifier{nullptr};
  int64_t last_channel;
};
KILN_MODULE(MobileNetV2);

// torchvision.models.mobilenet_v2(num_classes=..., width_mult=...), untrained.
MobileNetV2 mobilenet_v2(int64_t num_classes = 1000, double width_mult = 1.0);

}  // namespace kiln::vision
