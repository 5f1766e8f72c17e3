// TrainingParityTest's models and the recordings of their steps (see Training.h).
#include "test/e2e/Training.h"

namespace kiln::e2e {

nn::Sequential trainingMlp() {
  manual_seed(0);
  return nn::Sequential(nn::Linear(64, 128), nn::ReLU(), nn::Linear(128, 128), nn::ReLU(), nn::Linear(128, 10));
}

vision::MobileNetV2 trainingMobileNet() {
  manual_seed(0);
  return vision::mobilenet_v2(10, 0.25);
}

namespace {

template <class Model>
std::string recordedStep(Model model, Shape input, bool symbolic) {
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  manual_seed(5);
  Tensor x = randn(input), y = randint(0, 10, {input[0]});
  trainingStep(model, opt, x, y);  // eagerly: the momentum buffers exist before the trace
  auto traced = jit::trace([&](Tensor a, Tensor b) { return trainingStep(model, opt, a, b); },
                           {.symbolic = symbolic, .compile = {.backend = "INTERP"}});
  traced(x, y);
  return traced.graph_str();
}

}  // namespace

std::vector<std::pair<std::string, std::string>> recordedTrainingGraphs(bool symbolic) {
  const std::string mode = symbolic ? " (symbolic)" : " (by value)";
  return {{"mlp_sgd_momentum" + mode, recordedStep(trainingMlp(), {32, 64}, symbolic)},
          {"mobilenet_v2_sgd_momentum" + mode, recordedStep(trainingMobileNet(), {4, 3, 32, 32}, symbolic)}};
}

}  // namespace kiln::e2e
