// The peer's model for workload 3: torchvision's mobilenet_v2 (width 1.0) in LibTorch's C++
// frontend, which has no torchvision. Same layers and parameter names (features.0.0.weight ...
// classifier.1.bias) as kiln::vision::mobilenet_v2, so bench/cnn_step copies Kiln's initial
// weights into it by name and checks that every name and shape matches.
#pragma once

#if KILN_HAVE_LIBTORCH
#include <torch/torch.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bench/Harness.h"
#include "kiln/nn/Module.h"

namespace kiln::bench {

// Conv2d (no bias, padding (k - 1) / 2) -> BatchNorm2d -> ReLU6, children 0, 1, 2. A
// Sequential with a plain forward, so that it nests in another Sequential.
struct TorchConvNormActImpl : torch::nn::SequentialImpl {
  TorchConvNormActImpl(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1,
                       int64_t groups = 1) {
    push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, kernel)
                                    .stride(stride)
                                    .padding((kernel - 1) / 2)
                                    .groups(groups)
                                    .bias(false)));
    push_back(torch::nn::BatchNorm2d(out));
    push_back(torch::nn::ReLU6());
  }
  torch::Tensor forward(torch::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(TorchConvNormAct);

// Expansion (when t != 1), depthwise 3x3, linear 1x1 projection, under "conv"; the input is
// added back when the stride is 1 and the channel count is kept.
struct TorchInvertedResidualImpl : torch::nn::Module {
  TorchInvertedResidualImpl(int64_t in, int64_t out, int64_t stride, int64_t expand)
      : residual(stride == 1 && in == out) {
    const int64_t hidden = in * expand;
    torch::nn::Sequential layers;
    if (expand != 1) layers->push_back(TorchConvNormAct(in, hidden, 1));
    layers->push_back(TorchConvNormAct(hidden, hidden, 3, stride, hidden));
    layers->push_back(torch::nn::Conv2d(torch::nn::Conv2dOptions(hidden, out, 1).bias(false)));
    layers->push_back(torch::nn::BatchNorm2d(out));
    conv = register_module("conv", layers);
  }
  torch::Tensor forward(torch::Tensor x) {
    return residual ? x + conv->forward(x) : conv->forward(x);
  }

  torch::nn::Sequential conv{nullptr};
  bool residual;
};
TORCH_MODULE(TorchInvertedResidual);

struct TorchMobileNetV2Impl : torch::nn::Module {
  explicit TorchMobileNetV2Impl(int64_t classes) {
    // t (expansion), c (channels), n (repeats), s (first stride): torchvision's table, whose
    // channel counts width 1.0 keeps as they are (all multiples of 8).
    struct Stage {
      int64_t t, c, n, s;
    };
    const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                            {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    torch::nn::Sequential f;
    int64_t channels = 32;
    f->push_back(TorchConvNormAct(3, channels, 3, 2));
    for (const Stage& s : stages)
      for (int64_t i = 0; i < s.n; ++i) {
        f->push_back(TorchInvertedResidual(channels, s.c, i == 0 ? s.s : 1, s.t));
        channels = s.c;
      }
    f->push_back(TorchConvNormAct(channels, 1280, 1));
    features = register_module("features", f);
    classifier = register_module(
        "classifier",
        torch::nn::Sequential(torch::nn::Dropout(0.2), torch::nn::Linear(1280, classes)));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::adaptive_avg_pool2d(features->forward(x), {1, 1}).flatten(1);
    return classifier->forward(x);
  }

  torch::nn::Sequential features{nullptr}, classifier{nullptr};
};
TORCH_MODULE(TorchMobileNetV2);

// Copies `from`'s parameters and buffers into `to`'s of the same names: std::runtime_error
// naming the first that `to` lacks or has in another shape, or when the counts differ (the
// two must be the same network).
inline void copyKilnWeights(const kiln::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard noGrad;
  auto copy = [](const kiln::OrderedDict<kiln::Tensor>& kiln,
                 torch::OrderedDict<std::string, torch::Tensor> peer) {
    if (kiln.size() != peer.size())
      throw std::runtime_error("the LibTorch model has " + std::to_string(peer.size()) +
                               " tensors where Kiln's has " + std::to_string(kiln.size()));
    for (const auto& [name, k] : kiln) {
      torch::Tensor* p = peer.find(name);
      if (!p || p->sizes().vec() != k.sizes())
        throw std::runtime_error("the LibTorch model has no tensor " + name + " of " +
                                 dimsText(k.sizes()));
      std::vector<float> values = kilnValues(k.to(kiln::kFloat32));
      p->copy_(torchTensor(values, k.sizes()).to(p->dtype()));
    }
  };
  copy(from.named_parameters(), to.named_parameters());
  copy(from.named_buffers(), to.named_buffers());
}

}  // namespace kiln::bench
#endif
