#include "kiln/vision/MobileNetV2.h"

#include <algorithm>
#include <cmath>

namespace kiln::vision {

int64_t make_divisible(double value, int64_t divisor, std::optional<int64_t> min_value) {
  const int64_t floor = min_value.value_or(divisor);
  int64_t rounded = std::max(floor, int64_t(value + double(divisor) / 2) / divisor * divisor);
  if (double(rounded) < 0.9 * value) rounded += divisor;
  return rounded;
}

Conv2dNormActivationImpl::Conv2dNormActivationImpl(int64_t in_channels, int64_t out_channels,
                                                   int64_t kernel_size, int64_t stride,
                                                   int64_t groups) {
  push_back(nn::Conv2d(nn::Conv2dOptions(in_channels, out_channels, kernel_size)
                           .stride(stride)
                           .padding((kernel_size - 1) / 2)
                           .groups(groups)
                           .bias(false)));
  push_back(nn::BatchNorm2d(out_channels));
  push_back(nn::ReLU6());
}

InvertedResidualImpl::InvertedResidualImpl(int64_t in_channels, int64_t out_channels,
                                           int64_t stride, int64_t expand_ratio)
    : use_res_connect(stride == 1 && in_channels == out_channels) {
  if (stride != 1 && stride != 2)
    throw Error::make(SourceLoc::current(), "InvertedResidual", "stride must be 1 or 2, got ", stride);
  const int64_t hidden = int64_t(std::nearbyint(double(in_channels * expand_ratio)));
  nn::Sequential layers;
  if (expand_ratio != 1) layers->push_back(Conv2dNormActivation(in_channels, hidden, 1));  // pw
  layers->push_back(Conv2dNormActivation(hidden, hidden, 3, stride, hidden));             // dw
  layers->push_back(nn::Conv2d(nn::Conv2dOptions(hidden, out_channels, 1).bias(false)));  // pw-linear
  layers->push_back(nn::BatchNorm2d(out_channels));
  conv = register_module("conv", layers);
}

Tensor InvertedResidualImpl::forward(const Tensor& x, const SourceLoc& loc) {
  Tensor y = conv->forward(x, loc);
  return use_res_connect ? add(x, y, loc) : y;
}

MobileNetV2Impl::MobileNetV2Impl(int64_t num_classes, double width_mult, int64_t round_nearest,
                                 double dropout) {
  // t (expansion), c (channels), n (repeats), s (first stride), as torchvision.
  struct Stage {
    int64_t t, c, n, s;
  };
  static constexpr Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int64_t channels = make_divisible(32 * width_mult, round_nearest);
  last_channel = make_divisible(1280 * std::max(1.0, width_mult), round_nearest);

  nn::Sequential stages;
  stages->push_back(Conv2dNormActivation(3, channels, 3, 2));
  for (const Stage& stage : kStages) {
    const int64_t out = make_divisible(double(stage.c) * width_mult, round_nearest);
    for (int64_t i = 0; i < stage.n; ++i) {
      stages->push_back(InvertedResidual(channels, out, i == 0 ? stage.s : 1, stage.t));
      channels = out;
    }
  }
  stages->push_back(Conv2dNormActivation(channels, last_channel, 1));
  features = register_module("features", stages);
  classifier = register_module("classifier", nn::Sequential(nn::Dropout(dropout),
                                                            nn::Linear(last_channel, num_classes)));

  apply([](nn::Module& m) {
    if (auto* conv = m.as<nn::Conv2d>()) {
      nn::init::kaiming_normal_(conv->weight, 0.0, nn::init::kFanOut);
      if (conv->bias.defined()) nn::init::zeros_(conv->bias);
    } else if (auto* bn = m.as<nn::BatchNorm2d>()) {
      nn::init::ones_(bn->weight);
      nn::init::zeros_(bn->bias);
    } else if (auto* linear = m.as<nn::Linear>()) {
      nn::init::normal_(linear->weight, 0.0, 0.01);
      nn::init::zeros_(linear->bias);
    }
  });
}

Tensor MobileNetV2Impl::forward(const Tensor& x, const SourceLoc& loc) {
  Tensor y = features->forward(x, loc);
  y = adaptive_avg_pool2d(y, {1, 1}, loc).flatten(1, -1, loc);
  return classifier->forward(y, loc);
}

MobileNetV2 mobilenet_v2(int64_t num_classes, double width_mult) {
  return MobileNetV2(num_classes, width_mult);
}

}  // namespace kiln::vision
