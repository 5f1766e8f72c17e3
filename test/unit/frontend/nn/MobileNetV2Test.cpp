// vision::mobilenet_v2: torchvision's parameter names, shapes and count, its
// initialization, and forward/backward shapes.
#include "kiln/vision/MobileNetV2.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <sstream>

#include "kiln/core/Random.h"
#include "test/unit/frontend/Golden.h"

namespace kiln::vision {
namespace {

using golden::valuesAsDouble;

// named_parameters() of torchvision's mobilenet_v2() (num_classes=1000, width 1.0), "name
// [shape]" per line. torchvision is not installed here: the list was printed by torch 1.13
// from a transcription of torchvision's mobilenetv2.py (Conv2dNormActivation, InvertedResidual,
// MobileNetV2), whose count, 3,504,872, is torchvision's published one.
constexpr const char* kTorchvisionParameters = R"(
features.0.0.weight [32, 3, 3, 3]
features.0.1.weight [32]
features.0.1.bias [32]
features.1.conv.0.0.weight [32, 1, 3, 3]
features.1.conv.0.1.weight [32]
features.1.conv.0.1.bias [32]
features.1.conv.1.weight [16, 32, 1, 1]
features.1.conv.2.weight [16]
features.1.conv.2.bias [16]
features.2.conv.0.0.weight [96, 16, 1, 1]
features.2.conv.0.1.weight [96]
features.2.conv.0.1.bias [96]
features.2.conv.1.0.weight [96, 1, 3, 3]
features.2.conv.1.1.weight [96]
features.2.conv.1.1.bias [96]
features.2.conv.2.weight [24, 96, 1, 1]
features.2.conv.3.weight [24]
features.2.conv.3.bias [24]
features.3.conv.0.0.weight [144, 24, 1, 1]
features.3.conv.0.1.weight [144]
features.3.conv.0.1.bias [144]
features.3.conv.1.0.weight [144, 1, 3, 3]
features.3.conv.1.1.weight [144]
features.3.conv.1.1.bias [144]
features.3.conv.2.weight [24, 144, 1, 1]
features.3.conv.3.weight [24]
features.3.conv.3.bias [24]
features.4.conv.0.0.weight [144, 24, 1, 1]
features.4.conv.0.1.weight [144]
features.4.conv.0.1.bias [144]
features.4.conv.1.0.weight [144, 1, 3, 3]
features.4.conv.1.1.weight [144]
features.4.conv.1.1.bias [144]
features.4.conv.2.weight [32, 144, 1, 1]
features.4.conv.3.weight [32]
features.4.conv.3.bias [32]
features.5.conv.0.0.weight [192, 32, 1, 1]
features.5.conv.0.1.weight [192]
features.5.conv.0.1.bias [192]
features.5.conv.1.0.weight [192, 1, 3, 3]
features.5.conv.1.1.weight [192]
features.5.conv.1.1.bias [192]
features.5.conv.2.weight [32, 192, 1, 1]
features.5.conv.3.weight [32]
features.5.conv.3.bias [32]
features.6.conv.0.0.weight [192, 32, 1, 1]
features.6.conv.0.1.weight [192]
features.6.conv.0.1.bias [192]
features.6.conv.1.0.weight [192, 1, 3, 3]
features.6.conv.1.1.weight [192]
features.6.conv.1.1.bias [192]
features.6.conv.2.weight [32, 192, 1, 1]
features.6.conv.3.weight [32]
features.6.conv.3.bias [32]
features.7.conv.0.0.weight [192, 32, 1, 1]
features.7.conv.0.1.weight [192]
features.7.conv.0.1.bias [192]
features.7.conv.1.0.weight [192, 1, 3, 3]
features.7.conv.1.1.weight [192]
features.7.conv.1.1.bias [192]
features.7.conv.2.weight [64, 192, 1, 1]
features.7.conv.3.weight [64]
features.7.conv.3.bias [64]
features.8.conv.0.0.weight [384, 64, 1, 1]
features.8.conv.0.1.weight [384]
features.8.conv.0.1.bias [384]
features.8.conv.1.0.weight [384, 1, 3, 3]
features.8.conv.1.1.weight [384]
features.8.conv.1.1.bias [384]
features.8.conv.2.weight [64, 384, 1, 1]
features.8.conv.3.weight [64]
features.8.conv.3.bias [64]
features.9.conv.0.0.weight [384, 64, 1, 1]
features.9.conv.0.1.weight [384]
features.9.conv.0.1.bias [384]
features.9.conv.1.0.weight [384, 1, 3, 3]
features.9.conv.1.1.weight [384]
features.9.conv.1.1.bias [384]
features.9.conv.2.weight [64, 384, 1, 1]
features.9.conv.3.weight [64]
features.9.conv.3.bias [64]
features.10.conv.0.0.weight [384, 64, 1, 1]
features.10.conv.0.1.weight [384]
features.10.conv.0.1.bias [384]
features.10.conv.1.0.weight [384, 1, 3, 3]
features.10.conv.1.1.weight [384]
features.10.conv.1.1.bias [384]
features.10.conv.2.weight [64, 384, 1, 1]
features.10.conv.3.weight [64]
features.10.conv.3.bias [64]
features.11.conv.0.0.weight [384, 64, 1, 1]
features.11.conv.0.1.weight [384]
features.11.conv.0.1.bias [384]
features.11.conv.1.0.weight [384, 1, 3, 3]
features.11.conv.1.1.weight [384]
features.11.conv.1.1.bias [384]
features.11.conv.2.weight [96, 384, 1, 1]
features.11.conv.3.weight [96]
features.11.conv.3.bias [96]
features.12.conv.0.0.weight [576, 96, 1, 1]
features.12.conv.0.1.weight [576]
features.12.conv.0.1.bias [576]
features.12.conv.1.0.weight [576, 1, 3, 3]
features.12.conv.1.1.weight [576]
features.12.conv.1.1.bias [576]
features.12.conv.2.weight [96, 576, 1, 1]
features.12.conv.3.weight [96]
features.12.conv.3.bias [96]
features.13.conv.0.0.weight [576, 96, 1, 1]
features.13.conv.0.1.weight [576]
features.13.conv.0.1.bias [576]
features.13.conv.1.0.weight [576, 1, 3, 3]
features.13.conv.1.1.weight [576]
features.13.conv.1.1.bias [576]
features.13.conv.2.weight [96, 576, 1, 1]
features.13.conv.3.weight [96]
features.13.conv.3.bias [96]
features.14.conv.0.0.weight [576, 96, 1, 1]
features.14.conv.0.1.weight [576]
features.14.conv.0.1.bias [576]
features.14.conv.1.0.weight [576, 1, 3, 3]
features.14.conv.1.1.weight [576]
features.14.conv.1.1.bias [576]
features.14.conv.2.weight [160, 576, 1, 1]
features.14.conv.3.weight [160]
features.14.conv.3.bias [160]
features.15.conv.0.0.weight [960, 160, 1, 1]
features.15.conv.0.1.weight [960]
features.15.conv.0.1.bias [960]
features.15.conv.1.0.weight [960, 1, 3, 3]
features.15.conv.1.1.weight [960]
features.15.conv.1.1.bias [960]
features.15.conv.2.weight [160, 960, 1, 1]
features.15.conv.3.weight [160]
features.15.conv.3.bias [160]
features.16.conv.0.0.weight [960, 160, 1, 1]
features.16.conv.0.1.weight [960]
features.16.conv.0.1.bias [960]
features.16.conv.1.0.weight [960, 1, 3, 3]
features.16.conv.1.1.weight [960]
features.16.conv.1.1.bias [960]
features.16.conv.2.weight [160, 960, 1, 1]
features.16.conv.3.weight [160]
features.16.conv.3.bias [160]
features.17.conv.0.0.weight [960, 160, 1, 1]
features.17.conv.0.1.weight [960]
features.17.conv.0.1.bias [960]
features.17.conv.1.0.weight [960, 1, 3, 3]
features.17.conv.1.1.weight [960]
features.17.conv.1.1.bias [960]
features.17.conv.2.weight [320, 960, 1, 1]
features.17.conv.3.weight [320]
features.17.conv.3.bias [320]
features.18.0.weight [1280, 320, 1, 1]
features.18.1.weight [1280]
features.18.1.bias [1280]
classifier.1.weight [1000, 1280]
classifier.1.bias [1000]
)";

std::string parameterTable(const nn::Module& model) {
  std::ostringstream os;
  os << "\n";
  for (const auto& [name, p] : model.named_parameters()) os << name << " " << p.sizes() << "\n";
  return os.str();
}

int64_t parameterCount(const nn::Module& model) {
  int64_t n = 0;
  for (const Tensor& p : model.parameters()) n += p.numel();
  return n;
}

double stdOf(const Tensor& t) {
  std::vector<double> v = valuesAsDouble(t);
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean) / double(v.size());
  return std::sqrt(var);
}

TEST(MobileNetV2Test, ParametersMatchTorchvision) {
  MobileNetV2 model = mobilenet_v2();
  EXPECT_EQ(parameterTable(*model), kTorchvisionParameters);
  EXPECT_EQ(parameterCount(*model), 3504872);
  EXPECT_EQ(model->parameters().size(), 158u);
  EXPECT_EQ(model->last_channel, 1280);
}

TEST(MobileNetV2Test, StateDictHasTheBatchNormBuffers) {
  MobileNetV2 model = mobilenet_v2(10);
  OrderedDict<Tensor> state = model->state_dict();
  EXPECT_EQ(state.size(), 314u);  // 158 parameters + 52 BatchNorms × 3 buffers
  std::vector<std::string> keys = state.keys();
  EXPECT_EQ(std::vector<std::string>(keys.begin(), keys.begin() + 7),
            (std::vector<std::string>{"features.0.0.weight", "features.0.1.weight",
                                      "features.0.1.bias", "features.0.1.running_mean",
                                      "features.0.1.running_var", "features.0.1.num_batches_tracked",
                                      "features.1.conv.0.0.weight"}));
  EXPECT_EQ(keys.back(), "classifier.1.bias");
  EXPECT_EQ(state["classifier.1.weight"].sizes(), (Shape{10, 1280}));
}

// Counts from torchvision's MobileNetV2(num_classes, width_mult).
TEST(MobileNetV2Test, WidthMultipliers) {
  EXPECT_EQ(parameterCount(*mobilenet_v2(10)), 2236682);
  EXPECT_EQ(parameterCount(*mobilenet_v2(1000, 0.5)), 1968680);
  EXPECT_EQ(parameterCount(*mobilenet_v2(1000, 1.4)), 6108776);
  EXPECT_EQ(parameterCount(*mobilenet_v2(10, 0.35)), 408938);
  EXPECT_EQ(mobilenet_v2(10, 1.4)->last_channel, 1792);
}

// Values of torchvision's _make_divisible.
TEST(MobileNetV2Test, MakeDivisible) {
  EXPECT_EQ(make_divisible(32, 8), 32);
  EXPECT_EQ(make_divisible(32 * 0.35, 8), 16);  // 11.2 rounds to 8, below 90%: one more step
  EXPECT_EQ(make_divisible(16 * 0.35, 8), 8);   // at least the divisor
  EXPECT_EQ(make_divisible(24 * 1.4, 8), 32);
  EXPECT_EQ(make_divisible(96 * 0.75, 8), 72);
  EXPECT_EQ(make_divisible(3, 8, 1), 9);  // 3 rounds to 0, raised to 1, below 90%: + 8
}

TEST(MobileNetV2Test, Structure) {
  MobileNetV2 model = mobilenet_v2(10);
  EXPECT_EQ(model->features->size(), 19u);
  auto block = [&](int i) { return model->features->ptr<InvertedResidualImpl>(i); };
  EXPECT_FALSE(block(1)->use_res_connect);  // 32 -> 16
  EXPECT_FALSE(block(2)->use_res_connect);  // stride 2
  EXPECT_TRUE(block(3)->use_res_connect);   // 24 -> 24, stride 1
  EXPECT_TRUE(block(16)->use_res_connect);
  EXPECT_FALSE(block(17)->use_res_connect);  // 160 -> 320
  std::ostringstream os;
  os << *model->features[1];
  // torchvision prints the same tree with Python's True/False and ReLU6(inplace=True).
  EXPECT_EQ(os.str(),
            "InvertedResidual(\n"
            "  (conv): Sequential(\n"
            "    (0): Conv2dNormActivation(\n"
            "      (0): Conv2d(32, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=32, bias=false)\n"
            "      (1): BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)\n"
            "      (2): ReLU6()\n"
            "    )\n"
            "    (1): Conv2d(32, 16, kernel_size=(1, 1), stride=(1, 1), bias=false)\n"
            "    (2): BatchNorm2d(16, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)\n"
            "  )\n"
            ")");
  std::ostringstream classifier;
  classifier << model->classifier;
  EXPECT_EQ(classifier.str(),
            "Sequential(\n"
            "  (0): Dropout(p=0.2)\n"
            "  (1): Linear(in_features=1280, out_features=10, bias=true)\n"
            ")");
}

TEST(MobileNetV2Test, TorchvisionInitialization) {
  MobileNetV2 model = mobilenet_v2();
  OrderedDict<Tensor> p = model->named_parameters();
  // kaiming_normal_(mode = fan_out, ReLU gain √2): std √2 / √fan_out.
  EXPECT_NEAR(stdOf(p["features.18.0.weight"]), std::sqrt(2.0 / 1280), 0.02 * std::sqrt(2.0 / 1280));
  EXPECT_NEAR(stdOf(p["features.17.conv.2.weight"]), std::sqrt(2.0 / 320), 0.02 * std::sqrt(2.0 / 320));
  // Depthwise [960, 1, 3, 3]: fan_out = 960·9.
  EXPECT_NEAR(stdOf(p["features.17.conv.1.0.weight"]), std::sqrt(2.0 / 8640), 0.05 * std::sqrt(2.0 / 8640));
  EXPECT_NEAR(stdOf(p["classifier.1.weight"]), 0.01, 0.0002);
  for (double v : valuesAsDouble(p["classifier.1.bias"])) ASSERT_EQ(v, 0.0);
  for (double v : valuesAsDouble(p["features.5.conv.1.1.weight"])) ASSERT_EQ(v, 1.0);
  for (double v : valuesAsDouble(p["features.5.conv.1.1.bias"])) ASSERT_EQ(v, 0.0);
}

TEST(MobileNetV2Test, ForwardAndBackward) {
  MobileNetV2 model = mobilenet_v2(/*num_classes=*/10);
  manual_seed(0);
  Tensor x = randn({2, 3, 32, 32});
  Tensor logits = model->forward(x);
  EXPECT_EQ(logits.sizes(), (Shape{2, 10}));
  EXPECT_EQ(model->features[0]->as<Conv2dNormActivation>()->at<nn::BatchNorm2dImpl>(1)
                .num_batches_tracked.item<int64_t>(),
            1);
  Tensor loss = nn::CrossEntropyLoss()->forward(logits, tensor(std::vector<int64_t>{3, 7}));
  loss.backward();
  for (const auto& [name, p] : model->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    ASSERT_EQ(p.grad().sizes(), p.sizes()) << name;
  }
  for (double v : valuesAsDouble(logits)) EXPECT_TRUE(std::isfinite(v));

  model->eval();  // no dropout, running statistics: the same output twice
  Tensor a = model->forward(x), b = model->forward(x);
  EXPECT_EQ(valuesAsDouble(a), valuesAsDouble(b));
}

}  // namespace
}  // namespace kiln::vision
