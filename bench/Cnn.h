// The CNN training step the runners time (workload 3: torchvision's mobilenet_v2, width 1.0,
// 10 classes, on 32x32 inputs, batch 64, cross-entropy, SGD with momentum), eager, traced
// and as an nn::Graph, on the model examples/graph_mobilenet trains (kiln::vision).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "bench/Harness.h"
#include "kiln/kiln.h"
#include "kiln/vision/MobileNetV2.h"

namespace kiln::bench {

inline constexpr int64_t kCnnBatch = 64, kCnnClasses = 10, kCnnSide = 32;

struct KilnCnn {
  kiln::vision::MobileNetV2 model = [] {
    kiln::manual_seed(0);
    return kiln::vision::mobilenet_v2(kCnnClasses, /*width_mult=*/1.0);
  }();
  std::shared_ptr<kiln::optim::SGD> opt = std::make_shared<kiln::optim::SGD>(
      model->parameters(), kiln::optim::SGDOptions(0.01).momentum(0.9));

  Tensor step(const Tensor& x, const Tensor& y) {
    Tensor loss = kiln::cross_entropy(model->forward(x), y);
    opt->zero_grad(/*set_to_none=*/true);
    loss.backward();
    opt->step();
    return loss;
  }
};

// The step traced as bench/Mlp.h's tracedStep: symbolic, the module and optimizer named. With
// momentum the first call is a warm-up (SGD makes its momentum buffers on its first step) and
// the second records and compiles.
inline std::function<Tensor(const Tensor&, const Tensor&)> tracedCnnStep(
    std::shared_ptr<KilnCnn> cnn) {
  kiln::jit::TraceOptions options{.symbolic = true, .name = "cnn_step"};
  auto t = kiln::jit::trace([cnn](Tensor x, Tensor y) { return cnn->step(x, y); }, options);
  t.name_module("model", cnn->model).name_optimizer("opt", *cnn->opt);
  return [t](const Tensor& x, const Tensor& y) { return t(x, y); };
}

// The same step as an nn::Graph: the graph runs the optimizer's step and clears the
// gradients inside its program.
struct CnnGraph : kiln::nn::Graph<CnnGraph> {
  explicit CnnGraph(const KilnCnn& cnn) : model(cnn.model) {
    register_module("model", model);
    add_optimizer(cnn.opt);
  }
  Tensor build(Tensor x, Tensor y) {
    Tensor loss = kiln::cross_entropy(model->forward(x), y);
    loss.backward();
    return loss;
  }
  kiln::vision::MobileNetV2 model;
};

// One batch: Normal(0, 1) images (Harness's hostValues, seed 11, the same values LibTorch
// gets) and labels in [0, 10).
struct CnnData {
  std::vector<float> host = hostValues({kCnnBatch, 3, kCnnSide, kCnnSide}, 11);
  Tensor x = kilnTensor(host, {kCnnBatch, 3, kCnnSide, kCnnSide});
  Tensor y = [] {
    kiln::manual_seed(7);
    return kiln::randint(0, kCnnClasses, {kCnnBatch});
  }();
};

}  // namespace kiln::bench
