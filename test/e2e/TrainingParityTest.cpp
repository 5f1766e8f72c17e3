// Whole training loops traced (both modes) against the same loops run eagerly from the
// same seed: a 50-step MLP and a 5-step mobilenet_v2 (BatchNorm statistics, Dropout masks
// from the generator) must give the same losses and final weights (issue 5's bar is 1e-5;
// the interpreter runs the same kernels, so they are expected to be identical).
//
// Compiled (KILN_JIT_BACKEND=MLIR or HALIDE: the CompiledTrainingParityTest and
// HalideTrainingParityTest targets) the bar is 1e-5
// and the mobilenet loop runs one compiled step: with batch 4, BatchNorm over 1x1 maps makes its
// training chaotic (scaling one weight tensor by 1 + 1e-6 changes the second step's loss
// by 5% eagerly), so rounding differences of compiled kernels cannot stay within 1e-5
// over five steps whatever their accuracy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "test/e2e/Training.h"

namespace kiln {
namespace {

struct Batch {
  Tensor x, y;
};

std::vector<Batch> batches(int n, Shape input, int64_t classes, uint64_t seed) {
  manual_seed(seed);
  std::vector<Batch> out;
  for (int i = 0; i < n; ++i) out.push_back({randn(input), randint(0, classes, {input[0]})});
  return out;
}

bool compiled() {
  const char* backend = std::getenv("KILN_JIT_BACKEND");
  return backend && *backend && std::string(backend) != "INTERP";
}

// The largest |a - b| / max(1, |b|) over all elements, in double.
double relativeDiff(const Tensor& a, const Tensor& b) {
  Tensor d = abs(sub(a.to(kFloat64), b.to(kFloat64)));
  Tensor scale = maximum(abs(b.to(kFloat64)), ones_like(d));
  return amax(div(d, scale)).item<double>();
}

template <class Model, class MakeModel, class MakeOptimizer>
void expectSameTraining(bool symbolic, const std::vector<Batch>& data, MakeModel makeModel,
                        MakeOptimizer makeOptimizer) {
  auto step = [](Model& model, auto& opt, const Tensor& x, const Tensor& y) {
    return e2e::trainingStep(model, opt, x, y);
  };

  Model eagerModel = makeModel();
  auto eagerOpt = makeOptimizer(eagerModel);
  manual_seed(1234);  // dropout masks come from the default generator
  std::vector<float> eagerLosses;
  for (const Batch& b : data) eagerLosses.push_back(step(eagerModel, eagerOpt, b.x, b.y).template item<float>());
  const uint64_t eagerOffset = defaultGenerator().offset;

  Model model = makeModel();
  auto opt = makeOptimizer(model);
  auto traced = jit::trace([&](Tensor x, Tensor y) { return step(model, opt, x, y); },
                           {.symbolic = symbolic});
  traced.name_module("model", model).name_optimizer("opt", opt);
  manual_seed(1234);
  std::vector<float> losses;
  for (const Batch& b : data) losses.push_back(traced(b.x, b.y).template item<float>());

  EXPECT_EQ(traced.num_traces(), 1u);
  double worstLoss = 0;
  for (size_t i = 0; i < data.size(); ++i)
    worstLoss = std::max(worstLoss, std::fabs(double(losses[i]) - eagerLosses[i]) /
                                        std::max(1.0, std::fabs(double(eagerLosses[i]))));
  EXPECT_LE(worstLoss, 1e-5);
  if (!compiled()) {
    EXPECT_EQ(losses, eagerLosses);  // the same kernels in the same order
  }
  auto eagerState = eagerModel->state_dict();
  for (const auto& [name, t] : model->state_dict()) {
    const Tensor* expected = eagerState.find(name);
    ASSERT_NE(expected, nullptr) << name;
    EXPECT_LE(relativeDiff(t, *expected), t.is_floating_point() ? 1e-5 : 0.0) << name;
  }
  EXPECT_EQ(defaultGenerator().offset, eagerOffset);  // the same draws from the generator
}

class TrainingParity : public ::testing::TestWithParam<bool> {};

TEST_P(TrainingParity, MlpFiftyStepsOfSgdWithMomentum) {
  std::vector<Batch> data = batches(50, {32, 64}, 10, 7);
  expectSameTraining<nn::Sequential>(
      GetParam(), data, [] { return e2e::trainingMlp(); },
      [](nn::Sequential& m) {
        return optim::SGD(m->parameters(), optim::SGDOptions(0.05).momentum(0.9));
      });
}

TEST_P(TrainingParity, MobileNetV2FiveStepsWithBatchNormAndDropout) {
  // Compiled: one compiled step after the warm-up (and, by value, the recording step).
  const int steps = compiled() ? (GetParam() ? 2 : 3) : 5;
  std::vector<Batch> data = batches(steps, {4, 3, 32, 32}, 10, 8);
  expectSameTraining<vision::MobileNetV2>(
      GetParam(), data, [] { return e2e::trainingMobileNet(); },
      [](vision::MobileNetV2& m) {
        return optim::SGD(m->parameters(), optim::SGDOptions(0.01).momentum(0.9));
      });
}

INSTANTIATE_TEST_SUITE_P(ByValueAndSymbolic, TrainingParity, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Symbolic" : "ByValue"; });

}  // namespace
}  // namespace kiln
