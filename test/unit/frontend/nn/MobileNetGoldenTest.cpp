// vision::mobilenet_v2 against PyTorch: torchvision's mobilenet_v2(num_classes=10,
// width_mult=0.1) with the weights of a float32 safetensors checkpoint, converted to float64,
// forward and backward on a 2x3x32x32 batch in eval and in train mode. The goldens (logits,
// the input's and every parameter's gradient, the updated BatchNorm buffers) come from
// scripts/golden/gen_mobilenet_golden.py, which describes the weights and the files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/io/Safetensors.h"
#include "kiln/vision/MobileNetV2.h"
#include "test/unit/frontend/Golden.h"

namespace kiln::vision {
namespace {

using golden::runfilePath;
using golden::valuesAsDouble;

constexpr const char* kStatePath =
    "test/unit/frontend/golden/mobilenet_v2_w010_state.safetensors";
constexpr const char* kGoldenPath =
    "test/unit/frontend/golden/mobilenet_v2_w010_golden.safetensors";

// A tensor matches when max|actual - expected| <= max(relative * max|expected|, absolute):
// a bound relative to the tensor's scale, so that elements which cancel to ~0 need no
// tolerance of their own. Worst relative errors seen (PyTorch 1.13, x86-64, fastbuild, opt
// and asan alike): eval 2.2e-14; train 6.0e-14 for the logits and running statistics and
// 4.5e-12 for the gradients, where the last BatchNorms normalize 1x1 maps over a batch of 2
// (the train figures moved by 2-10x as the kernels' summation order changed). The
// tolerances keep a margin of about 100.
struct Tolerance {
  double relative;
  double absolute = 0;
};
constexpr Tolerance kEval{2e-12};
constexpr Tolerance kTrainForward{6e-12};
constexpr Tolerance kTrainGradients{5e-10};
// In training the bias of each inverted residual's last BatchNorm has a zero gradient in
// exact arithmetic: a convolution and a BatchNorm with batch statistics follow, and remove
// any per-channel shift. Both frameworks leave rounding noise instead (|torch - kiln| up to
// 6.0e-13 seen, where the other gradients are 1e-3 to 30), compared absolutely.
constexpr Tolerance kTrainZeroGradients{0, 6e-11};

std::string formatIndex(const Shape& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::ostringstream os;
  os << "[";
  for (size_t d = 0; d < index.size(); ++d) os << (d ? ", " : "") << index[d];
  os << "]";
  return os.str();
}

// Compares `actual` with the tensor `name` of `goldens` as described above; `worst` keeps
// the largest relative error seen. The failure names the tensor and its worst element.
::testing::AssertionResult matches(const OrderedDict<Tensor>& goldens, const std::string& name,
                                   const Tensor& actual, Tolerance tolerance, double& worst) {
  const Tensor* expected = goldens.find(name);
  if (!expected) return ::testing::AssertionFailure() << name << ": not in the golden file";
  if (!actual.defined()) return ::testing::AssertionFailure() << name << ": undefined";
  if (actual.sizes() != expected->sizes())
    return ::testing::AssertionFailure()
           << name << ": shape " << formatShape(actual.sizes()) << ", expected "
           << formatShape(expected->sizes());
  std::vector<double> a = valuesAsDouble(actual), e = valuesAsDouble(*expected);
  double scale = 0, error = 0;
  int64_t at = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    scale = std::max(scale, std::fabs(e[i]));
    // !(<=) so that a NaN counts as the worst error.
    if (!(std::fabs(a[i] - e[i]) <= error)) error = std::fabs(a[i] - e[i]), at = int64_t(i);
  }
  const double bound = std::max(tolerance.relative * scale, tolerance.absolute);
  if (tolerance.absolute == 0) worst = std::max(worst, scale > 0 ? error / scale : error);
  if (error <= bound) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(17);
  os << name << ": max|actual - expected| = " << error << " > " << bound << " (max|expected| "
     << scale << "), worst at " << formatIndex(expected->sizes(), at) << ": got "
     << a[size_t(at)] << ", expected " << e[size_t(at)];
  return ::testing::AssertionFailure() << os.str();
}

// The parameters whose gradient is zero in training (kTrainZeroGradients).
std::vector<std::string> zeroInTraining(const MobileNetV2& model) {
  std::vector<std::string> names;
  for (int64_t i = 0; i < int64_t(model->features->size()); ++i) {
    if (auto block = std::dynamic_pointer_cast<InvertedResidualImpl>(model->features[i]))
      names.push_back("features." + std::to_string(i) + ".conv." +
                      std::to_string(block->conv->size() - 1) + ".bias");
  }
  return names;
}

class MobileNetGoldenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    state_ = new OrderedDict<Tensor>(io::load(runfilePath(kStatePath)));
    goldens_ = new OrderedDict<Tensor>(io::load(runfilePath(kGoldenPath)));
  }
  static void TearDownTestSuite() {
    delete state_;
    delete goldens_;
  }

  // The model of the checkpoint, loaded strictly by name, then in float64.
  static MobileNetV2 loadModel() {
    MobileNetV2 model = mobilenet_v2(/*num_classes=*/10, /*width_mult=*/0.1);
    model->load_state_dict(*state_);
    model->to(kDouble);
    return model;
  }

  // Forward and backward of the golden input in `mode` ("eval" or "train"), with the
  // golden's gout as the logits' gradient, compared with the goldens "<mode>.*". Dropout is
  // kept in eval mode (the identity) in both, as the script does.
  static void runAndCompare(MobileNetV2& model, const std::string& mode, Tolerance forward,
                              Tolerance gradients) {
    const OrderedDict<Tensor>& g = *goldens_;
    const bool training = mode == "train";
    model->train(training);
    model->classifier[0]->eval();
    Tensor x = g.at("input").clone().requires_grad_();
    Tensor logits = model->forward(x);
    logits.backward(g.at("gout"));

    double worst = 0;
    auto expect = [&](const std::string& name, const Tensor& actual, Tolerance tolerance) {
      EXPECT_TRUE(matches(g, mode + "." + name, actual, tolerance, worst));
    };
    expect("logits", logits, forward);
    expect("grad.input", x.grad(), gradients);
    const std::vector<std::string> zero =
        training ? zeroInTraining(model) : std::vector<std::string>{};
    for (const auto& [name, p] : model->named_parameters()) {
      const bool isZero = std::find(zero.begin(), zero.end(), name) != zero.end();
      expect("grad." + name, p.grad(), isZero ? kTrainZeroGradients : gradients);
    }
    if (training) {
      // running = 0.9 running + 0.1 batch (unbiased variance), num_batches_tracked + 1.
      for (const auto& [name, b] : model->named_buffers()) expect(name, b, forward);
    } else {
      // Running statistics are read, not updated.
      for (const auto& [name, b] : model->named_buffers())
        EXPECT_TRUE(matches(*state_, name, b, Tolerance{0}, worst));
    }
    std::cout << mode << ": worst max|actual - expected| / max|expected| = " << worst << "\n";
  }

  static OrderedDict<Tensor>* state_;
  static OrderedDict<Tensor>* goldens_;
};

OrderedDict<Tensor>* MobileNetGoldenTest::state_ = nullptr;
OrderedDict<Tensor>* MobileNetGoldenTest::goldens_ = nullptr;

TEST_F(MobileNetGoldenTest, GoldensCoverEveryParameterAndBuffer) {
  MobileNetV2 model = loadModel();
  const size_t parameters = model->named_parameters().size();
  const size_t buffers = model->named_buffers().size();
  EXPECT_EQ(parameters, 158u);
  EXPECT_EQ(state_->size(), model->state_dict().size());
  size_t eval = 0, train = 0;
  for (const auto& [name, t] : *goldens_) {
    eval += name.rfind("eval.", 0) == 0;
    train += name.rfind("train.", 0) == 0;
  }
  EXPECT_EQ(eval, 2 + parameters);             // logits, grad.input, grad.<parameter>
  EXPECT_EQ(train, 2 + parameters + buffers);  // and the buffers after the step
  EXPECT_EQ(formatShape(goldens_->at("input").sizes()), "[2, 3, 32, 32]");
}

TEST_F(MobileNetGoldenTest, EvalMatchesTorch) {
  MobileNetV2 model = loadModel();
  runAndCompare(model, "eval", kEval, kEval);
}

TEST_F(MobileNetGoldenTest, TrainMatchesTorch) {
  MobileNetV2 model = loadModel();
  runAndCompare(model, "train", kTrainForward, kTrainGradients);
  EXPECT_EQ(zeroInTraining(model).size(), 17u);
}

}  // namespace
}  // namespace kiln::vision
