// The built-in modules: parameter shapes, PyTorch's defaults and default initialization,
// forward semantics, train/eval behaviour and printing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Random.h"
#include "kiln/nn/Modules.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/nn/NnTestSupport.h"

namespace kiln::nn {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using golden::valuesAsDouble;

template <class M>
std::string printed(const M& module) {
  std::ostringstream os;
  os << module;
  return os.str();
}

using testing::sample;
using testing::Stats;
using testing::statsOf;

// U(-bound, bound): inside the bounds, reaching close to them, variance bound²/3.
void expectUniform(const Tensor& t, double bound) {
  Stats s = statsOf(t);
  EXPECT_GE(s.min, -bound);
  EXPECT_LE(s.max, bound);
  EXPECT_GT(s.max, 0.95 * bound);
  EXPECT_LT(s.min, -0.95 * bound);
  EXPECT_NEAR(s.mean, 0.0, 0.05 * bound);
  EXPECT_NEAR(s.var, bound * bound / 3, 0.06 * bound * bound / 3);
}

void expectAllEqual(const Tensor& t, double value) {
  for (double v : valuesAsDouble(t)) ASSERT_EQ(v, value);
}

void expectClose(const Tensor& a, const Tensor& b, double tol = 1e-5) {
  testing::expectCloseWithin(a, b, tol);
}

// ---- Linear --------------------------------------------------------------------------------

TEST(LinearTest, ShapesDefaultsAndInit) {
  Linear fc(784, 256);
  EXPECT_EQ(fc->weight.sizes(), (Shape{256, 784}));
  EXPECT_EQ(fc->bias.sizes(), (Shape{256}));
  EXPECT_TRUE(fc->options.bias());
  EXPECT_EQ(fc->weight.dtype(), kFloat32);
  expectUniform(fc->weight, 1.0 / 28.0);  // kaiming_uniform_(a=√5) = U(±1/√fan_in)
  Stats b = statsOf(fc->bias);
  EXPECT_GE(b.min, -1.0 / 28.0);
  EXPECT_LE(b.max, 1.0 / 28.0);

  Linear noBias(LinearOptions(4, 2).bias(false));
  EXPECT_FALSE(noBias->bias.defined());
  EXPECT_EQ(noBias->state_dict().keys(), std::vector<std::string>{"weight"});
}

TEST(LinearTest, Forward) {
  Linear fc(4, 3);
  Tensor x = sample({2, 5, 4});
  Tensor y = fc->forward(x);
  EXPECT_EQ(y.sizes(), (Shape{2, 5, 3}));
  expectClose(y, matmul(x, fc->weight.t()) + fc->bias);
  EXPECT_THAT([&] { fc->forward(ones({2, 5})); },
              ThrowsMessage<Error>(HasSubstr("linear: input of shape [2, 5] does not end in 4 features")));
}

TEST(LinearTest, ResetParametersDrawsAgain) {
  Linear fc(8, 8);
  std::vector<double> before = valuesAsDouble(fc->weight);
  Tensor handle = fc->weight;
  fc->reset_parameters();
  EXPECT_NE(valuesAsDouble(fc->weight), before);
  EXPECT_TRUE(handle.is_same(fc->weight));
  EXPECT_TRUE(fc->weight.is_leaf());
}

// ---- Conv2d --------------------------------------------------------------------------------

TEST(Conv2dTest, ShapesDefaultsAndInit) {
  Conv2d conv(16, 32, 3);
  EXPECT_EQ(conv->weight.sizes(), (Shape{32, 16, 3, 3}));
  EXPECT_EQ(conv->bias.sizes(), (Shape{32}));
  const Conv2dOptions& o = conv->options;
  EXPECT_EQ(o.stride().vec(), (Shape{1, 1}));
  EXPECT_EQ(o.padding().vec(), (Shape{0, 0}));
  EXPECT_EQ(o.dilation().vec(), (Shape{1, 1}));
  EXPECT_EQ(o.groups(), 1);
  EXPECT_TRUE(o.bias());
  expectUniform(conv->weight, 1.0 / 12.0);  // fan_in = 16·3·3
  Stats b = statsOf(conv->bias);
  EXPECT_GE(b.min, -1.0 / 12.0);
  EXPECT_LE(b.max, 1.0 / 12.0);
}

TEST(Conv2dTest, GroupsStridePadding) {
  Conv2d conv(Conv2dOptions(4, 8, 3).groups(2).stride(2).padding(1).bias(false));
  EXPECT_EQ(conv->weight.sizes(), (Shape{8, 2, 3, 3}));
  EXPECT_FALSE(conv->bias.defined());
  EXPECT_EQ(conv->parameters().size(), 1u);
  Tensor x = sample({1, 4, 9, 9});
  Tensor y = conv->forward(x);
  EXPECT_EQ(y.sizes(), (Shape{1, 8, 5, 5}));
  expectClose(y, conv2d(x, conv->weight, Tensor(), {2}, {1}, {1}, 2));

  Conv2d depthwise(Conv2dOptions(6, 6, 3).groups(6));
  EXPECT_EQ(depthwise->weight.sizes(), (Shape{6, 1, 3, 3}));
  Conv2d rect(Conv2dOptions(2, 3, {3, 5}).padding({1, 2}).dilation(2));
  EXPECT_EQ(rect->weight.sizes(), (Shape{3, 2, 3, 5}));
  EXPECT_EQ(rect->forward(sample({1, 2, 8, 8})).sizes(), (Shape{1, 3, 6, 4}));
}

TEST(Conv2dTest, GroupsMustDivideChannels) {
  EXPECT_THAT([] { Conv2d(Conv2dOptions(3, 4, 1).groups(2)); },
              ThrowsMessage<Error>(HasSubstr("Conv2d: in_channels (3) must be divisible by groups (2)")));
  EXPECT_THAT([] { Conv2d(Conv2dOptions(4, 6, 1).groups(4)); },
              ThrowsMessage<Error>(HasSubstr("out_channels (6) must be divisible by groups (4)")));
}

TEST(Conv2dTest, PrintsAsPyTorch) {
  EXPECT_EQ(printed(Conv2d(Conv2dOptions(3, 32, 3).stride(2).padding(1).bias(false))),
            "Conv2d(3, 32, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=false)");
  EXPECT_EQ(printed(Conv2d(Conv2dOptions(4, 8, {3, 5}).dilation(2).groups(2))),
            "Conv2d(4, 8, kernel_size=(3, 5), stride=(1, 1), dilation=(2, 2), groups=2)");
}

// ---- ConvTranspose2d --------------------------------------------------------------------------

TEST(ConvTranspose2dTest, ShapesDefaultsAndInit) {
  ConvTranspose2d up(ConvTranspose2dOptions(16, 8, 4).stride(2).padding(1));
  EXPECT_EQ(up->weight.sizes(), (Shape{16, 8, 4, 4}));
  EXPECT_EQ(up->bias.sizes(), (Shape{8}));
  EXPECT_EQ(up->options.output_padding().vec(), (Shape{0, 0}));
  EXPECT_EQ(up->options.dilation().vec(), (Shape{1, 1}));
  expectUniform(up->weight, 1.0 / std::sqrt(8.0 * 16));  // fan_in = out · kH · kW, as PyTorch
  Tensor x = sample({2, 16, 5, 5});
  Tensor y = up->forward(x);
  EXPECT_EQ(y.sizes(), (Shape{2, 8, 10, 10}));
  expectClose(y, conv_transpose2d(x, up->weight, up->bias, {2}, {1}));

  ConvTranspose2d grouped(ConvTranspose2dOptions(4, 6, {3, 2}).groups(2).stride(2).output_padding(1).bias(false));
  EXPECT_EQ(grouped->weight.sizes(), (Shape{4, 3, 3, 2}));
  EXPECT_FALSE(grouped->bias.defined());
  EXPECT_EQ(grouped->forward(sample({1, 4, 3, 3})).sizes(), (Shape{1, 6, 8, 7}));
}

TEST(ConvTranspose2dTest, GroupsMustDivideChannelsAndPrintsAsPyTorch) {
  EXPECT_THAT([] { ConvTranspose2d(ConvTranspose2dOptions(3, 4, 1).groups(2)); },
              ThrowsMessage<Error>(HasSubstr("ConvTranspose2d: in_channels (3) must be divisible by groups (2)")));
  EXPECT_EQ(printed(ConvTranspose2d(ConvTranspose2dOptions(100, 256, 4).bias(false))),
            "ConvTranspose2d(100, 256, kernel_size=(4, 4), stride=(1, 1), bias=false)");
  EXPECT_EQ(printed(ConvTranspose2d(ConvTranspose2dOptions(4, 8, 3).stride(2).padding(1).output_padding(1))),
            "ConvTranspose2d(4, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))");
}

// ---- BatchNorm2d -----------------------------------------------------------------------------

TEST(BatchNorm2dTest, DefaultsAndState) {
  BatchNorm2d bn(3);
  EXPECT_EQ(bn->options.eps(), 1e-5);
  EXPECT_EQ(bn->options.momentum(), 0.1);
  EXPECT_TRUE(bn->options.affine());
  EXPECT_TRUE(bn->options.track_running_stats());
  EXPECT_EQ(bn->state_dict().keys(), (std::vector<std::string>{"weight", "bias", "running_mean",
                                                               "running_var", "num_batches_tracked"}));
  expectAllEqual(bn->weight, 1);
  expectAllEqual(bn->bias, 0);
  expectAllEqual(bn->running_mean, 0);
  expectAllEqual(bn->running_var, 1);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);
  EXPECT_EQ(bn->num_batches_tracked.dim(), 0);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 0);
  EXPECT_EQ(printed(bn),
            "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
}

TEST(BatchNorm2dTest, TrainingUsesBatchStatisticsAndUpdatesRunningOnes) {
  BatchNorm2d bn(2);
  Tensor x = sample({4, 2, 3, 3}) * 2.0 + 1.0;
  Tensor y = bn->forward(x);
  // Per channel: mean 0, biased variance 1.
  for (int64_t c = 0; c < 2; ++c) {
    Stats s = statsOf(y.narrow(1, c, 1));
    EXPECT_NEAR(s.mean, 0.0, 1e-5);
    EXPECT_NEAR(s.var, 1.0, 1e-3);
  }
  Tensor batchMean = mean(x, {0, 2, 3});
  Tensor unbiased = var(x, {0, 2, 3}, /*correction=*/1);
  expectClose(bn->running_mean, batchMean * 0.1);
  expectClose(bn->running_var, unbiased * 0.1 + 0.9);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  EXPECT_FALSE(bn->running_mean.requires_grad());
}

TEST(BatchNorm2dTest, EvalUsesRunningStatisticsAndLeavesThem) {
  BatchNorm2d bn(2);
  {
    NoGradGuard noGrad;
    bn->running_mean.copy_(tensor(std::vector<float>{1, -1}));
    bn->running_var.copy_(tensor(std::vector<float>{4, 0.25f}));
    bn->weight.copy_(tensor(std::vector<float>{2, 1}));
    bn->bias.copy_(tensor(std::vector<float>{0.5f, 0}));
  }
  bn->eval();
  Tensor x = sample({2, 2, 2, 2});
  Tensor y = bn->forward(x);
  Tensor scale = tensor(std::vector<float>{2 / std::sqrt(4 + 1e-5f), 1 / std::sqrt(0.25f + 1e-5f)},
                        Shape{1, 2, 1, 1});
  Tensor shift = tensor(std::vector<float>{1, -1}, Shape{1, 2, 1, 1});
  expectClose(y, (x - shift) * scale + tensor(std::vector<float>{0.5f, 0}, Shape{1, 2, 1, 1}));
  EXPECT_EQ(valuesAsDouble(bn->running_mean), (std::vector<double>{1, -1}));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 0);
}

TEST(BatchNorm2dTest, CumulativeAverageWithoutMomentum) {
  BatchNorm2d bn(BatchNormOptions(1).momentum(std::nullopt));
  Tensor a = sample({2, 1, 2, 2}, 1), b = sample({2, 1, 2, 2}, 2);
  bn->forward(a);
  bn->forward(b);
  expectClose(bn->running_mean, (mean(a, {0, 2, 3}) + mean(b, {0, 2, 3})) * 0.5);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  EXPECT_EQ(printed(bn),
            "BatchNorm2d(1, eps=1e-05, momentum=none, affine=true, track_running_stats=true)");
}

TEST(BatchNorm2dTest, WithoutAffineOrTracking) {
  BatchNorm2d bn(BatchNormOptions(2).affine(false).track_running_stats(false));
  EXPECT_TRUE(bn->parameters().empty());
  EXPECT_TRUE(bn->buffers().empty());
  bn->eval();  // no running statistics: batch statistics still
  Stats s = statsOf(bn->forward(sample({4, 2, 2, 2})).narrow(1, 0, 1));
  EXPECT_NEAR(s.mean, 0.0, 1e-5);
}

TEST(BatchNorm2dTest, RejectsNon4dInput) {
  BatchNorm2d bn(3);
  EXPECT_THAT([&] { bn->forward(ones({2, 3})); },
              ThrowsMessage<Error>(HasSubstr("BatchNorm2d: expects a 4-d input [N, C, H, W], got shape [2, 3]")));
}

// ---- LayerNorm ---------------------------------------------------------------------------

TEST(LayerNormTest, DefaultsAndForward) {
  LayerNorm ln(LayerNormOptions({4}));
  EXPECT_EQ(ln->options.eps(), 1e-5);
  EXPECT_TRUE(ln->options.elementwise_affine());
  expectAllEqual(ln->weight, 1);
  expectAllEqual(ln->bias, 0);
  EXPECT_EQ(ln->weight.sizes(), (Shape{4}));
  Tensor x = sample({3, 4});
  expectClose(ln->forward(x), layer_norm(x, {4}, ln->weight, ln->bias));
  Stats s = statsOf(ln->forward(x).narrow(0, 1, 1));
  EXPECT_NEAR(s.mean, 0.0, 1e-5);
  EXPECT_EQ(printed(ln), "LayerNorm((4,), eps=1e-05, elementwise_affine=true)");

  LayerNorm plain(LayerNormOptions({2, 4}).elementwise_affine(false).eps(1e-3));
  EXPECT_TRUE(plain->parameters().empty());
  EXPECT_EQ(printed(plain), "LayerNorm((2, 4), eps=0.001, elementwise_affine=false)");
}

// ---- Dropout ---------------------------------------------------------------------------------

TEST(DropoutTest, TrainingDropsAndScalesEvalIsIdentity) {
  Dropout drop;
  EXPECT_EQ(drop->options.p(), 0.5);
  Tensor x = ones({10000});
  std::vector<double> y = valuesAsDouble(drop->forward(x));
  int64_t zeros = std::count(y.begin(), y.end(), 0.0);
  EXPECT_NEAR(double(zeros) / 10000, 0.5, 0.03);
  for (double v : y) ASSERT_TRUE(v == 0.0 || v == 2.0);
  drop->eval();
  EXPECT_EQ(valuesAsDouble(drop->forward(x)), std::vector<double>(10000, 1.0));
  EXPECT_EQ(printed(Dropout(0.2)), "Dropout(p=0.2)");
  EXPECT_THAT([] { Dropout(1.5); },
              ThrowsMessage<Error>(HasSubstr("Dropout: probability must be in [0, 1], got 1.5")));
}

TEST(Dropout2dTest, DropsWholeChannelsAndScalesEvalIsIdentity) {
  Dropout2d drop(0.25);
  Tensor x = ones({40, 50, 3, 2});
  Tensor y = drop->forward(x);
  std::vector<double> v = valuesAsDouble(y);
  int64_t dropped = 0;
  for (size_t plane = 0; plane < 40 * 50; ++plane) {
    const double first = v[plane * 6];
    ASSERT_TRUE(first == 0.0 || std::abs(first - 4.0 / 3.0) < 1e-6) << first;
    for (size_t k = 1; k < 6; ++k) ASSERT_EQ(v[plane * 6 + k], first) << "plane " << plane;
    dropped += first == 0.0;
  }
  EXPECT_NEAR(double(dropped) / 2000, 0.25, 0.04);
  EXPECT_EQ(drop->forward(ones({3, 4, 4})).sizes(), (Shape{3, 4, 4}));  // unbatched [C, H, W]
  drop->eval();
  EXPECT_EQ(valuesAsDouble(drop->forward(x)), std::vector<double>(12000, 1.0));
  EXPECT_EQ(printed(Dropout2d(0.2)), "Dropout2d(p=0.2)");
  EXPECT_THAT([] { Dropout2d(-0.5); },
              ThrowsMessage<Error>(HasSubstr("Dropout2d: probability must be in [0, 1], got -0.5")));
  Dropout2d training;
  EXPECT_THAT([&] { training->forward(ones({4, 4})); },
              ThrowsMessage<ShapeError>(HasSubstr("dropout2d: expects a [N, C, H, W] or [C, H, W] input, got shape [4, 4]")));
}

// ---- activations ---------------------------------------------------------------------------

TEST(ActivationTest, ForwardMatchesTheOps) {
  Tensor x = sample({3, 5}) * 4.0;
  expectClose(ReLU()->forward(x), relu(x));
  expectClose(ReLU6()->forward(x), relu6(x));
  expectClose(GELU()->forward(x), gelu(x));
  expectClose(GELU(GELUOptions().approximate("tanh"))->forward(x), gelu(x, "tanh"));
  expectClose(SiLU()->forward(x), silu(x));
  expectClose(Sigmoid()->forward(x), sigmoid(x));
  expectClose(Tanh()->forward(x), tanh(x));
  expectClose(LeakyReLU()->forward(x), leaky_relu(x, 0.01));
  expectClose(LeakyReLU(LeakyReLUOptions().negative_slope(0.2))->forward(x), leaky_relu(x, 0.2));
  expectClose(Softmax(1)->forward(x), softmax(x, 1));
  EXPECT_TRUE(Identity()->forward(x).is_same(x));
}

TEST(ActivationTest, PrintsAsPyTorch) {
  EXPECT_EQ(printed(ReLU()), "ReLU()");
  EXPECT_EQ(printed(ReLU6()), "ReLU6()");
  EXPECT_EQ(printed(GELU()), "GELU(approximate='none')");
  EXPECT_EQ(printed(SiLU()), "SiLU()");
  EXPECT_EQ(printed(Sigmoid()), "Sigmoid()");
  EXPECT_EQ(printed(Tanh()), "Tanh()");
  EXPECT_EQ(printed(LeakyReLU()), "LeakyReLU(negative_slope=0.01)");
  EXPECT_EQ(printed(Softmax(1)), "Softmax(dim=1)");
  EXPECT_EQ(printed(Identity()), "Identity()");
}

// ---- Flatten -------------------------------------------------------------------------------

TEST(FlattenTest, DefaultsKeepTheBatchDim) {
  Tensor x = ones({2, 3, 4, 5});
  EXPECT_EQ(Flatten()->forward(x).sizes(), (Shape{2, 60}));
  EXPECT_EQ(Flatten(FlattenOptions().start_dim(2))->forward(x).sizes(), (Shape{2, 3, 20}));
  EXPECT_EQ(Flatten(FlattenOptions().start_dim(0).end_dim(1))->forward(x).sizes(), (Shape{6, 4, 5}));
  EXPECT_EQ(printed(Flatten()), "Flatten(start_dim=1, end_dim=-1)");
}

// ---- Embedding -----------------------------------------------------------------------------

TEST(EmbeddingTest, ShapesAndNormalInit) {
  Embedding emb(1000, 16);
  EXPECT_EQ(emb->weight.sizes(), (Shape{1000, 16}));
  Stats s = statsOf(emb->weight);
  EXPECT_NEAR(s.mean, 0.0, 0.03);
  EXPECT_NEAR(s.var, 1.0, 0.05);
  Tensor ids = tensor(std::vector<int64_t>{3, 1, 4, 1, 5, 9}, Shape{2, 3});
  Tensor y = emb->forward(ids);
  EXPECT_EQ(y.sizes(), (Shape{2, 3, 16}));
  expectClose(y.narrow(1, 0, 1).reshape({2, 16}), index_select(emb->weight, 0, tensor(std::vector<int64_t>{3, 1})));
  EXPECT_EQ(printed(emb), "Embedding(1000, 16)");
}

TEST(EmbeddingTest, PaddingIdxStartsAtZeroAndGetsNoGradient) {
  Embedding emb(EmbeddingOptions(5, 2).padding_idx(-1));  // normalized to 4
  EXPECT_EQ(emb->options.padding_idx(), 4);
  expectAllEqual(emb->weight.narrow(0, 4, 1), 0.0);
  Tensor ids = tensor(std::vector<int64_t>{4, 1, 4, 2});
  sum(emb->forward(ids) * 3.0).backward();
  std::vector<double> g = valuesAsDouble(emb->weight.grad());
  EXPECT_EQ(g, (std::vector<double>{0, 0, 3, 3, 3, 3, 0, 0, 0, 0}));
  EXPECT_EQ(printed(emb), "Embedding(5, 2, padding_idx=4)");
  EXPECT_THAT([] { Embedding(EmbeddingOptions(5, 2).padding_idx(5)); },
              ThrowsMessage<Error>(HasSubstr("padding_idx 5 is out of range for 5 embeddings")));
}

// ---- pooling -------------------------------------------------------------------------------

TEST(PoolingTest, ShapesDefaultsAndValues) {
  Tensor x = arange(0, 16, 1, kFloat32).reshape({1, 1, 4, 4});
  MaxPool2d maxPool(2);
  EXPECT_EQ(maxPool->options.stride().vec(), (Shape{2, 2}));  // stride defaults to the kernel
  EXPECT_EQ(maxPool->options.padding().vec(), (Shape{0, 0}));
  EXPECT_EQ(valuesAsDouble(maxPool->forward(x)), (std::vector<double>{5, 7, 13, 15}));
  AvgPool2d avgPool(2);
  EXPECT_EQ(valuesAsDouble(avgPool->forward(x)), (std::vector<double>{2.5, 4.5, 10.5, 12.5}));
  EXPECT_EQ(MaxPool2d(MaxPool2dOptions(3).stride(1).padding(1))->forward(x).sizes(),
            (Shape{1, 1, 4, 4}));
  AdaptiveAvgPool2d gap(1);
  EXPECT_EQ(valuesAsDouble(gap->forward(x)), std::vector<double>{7.5});
  EXPECT_EQ(AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions({2, 1}))->forward(x).sizes(), (Shape{1, 1, 2, 1}));
}

TEST(PoolingTest, PrintsAsGiven) {
  EXPECT_EQ(printed(MaxPool2d(2)), "MaxPool2d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(printed(AvgPool2d(AvgPool2dOptions({2, 3}).stride(1).padding(1))),
            "AvgPool2d(kernel_size=(2, 3), stride=1, padding=1)");
  EXPECT_EQ(printed(AdaptiveAvgPool2d(1)), "AdaptiveAvgPool2d(output_size=1)");
  EXPECT_EQ(printed(AdaptiveAvgPool2d(AdaptiveAvgPool2dOptions({2, 3}))), "AdaptiveAvgPool2d(output_size=(2, 3))");
}

// ---- losses --------------------------------------------------------------------------------

TEST(LossTest, CrossEntropy) {
  Tensor logits = sample({4, 3});
  Tensor target = tensor(std::vector<int64_t>{0, 2, 1, 2});
  CrossEntropyLoss loss;
  EXPECT_EQ(loss->options.ignore_index(), -100);
  EXPECT_EQ(loss->options.reduction(), Reduction::Mean);
  EXPECT_TRUE(loss->state_dict().empty());
  expectClose(loss->forward(logits, target), cross_entropy(logits, target));
  CrossEntropyLoss summed(CrossEntropyLossOptions().reduction(Reduction::Sum));
  expectClose(summed->forward(logits, target), cross_entropy(logits, target) * 4.0);

  Tensor w = tensor(std::vector<float>{1, 2, 0.5f});
  CrossEntropyLoss weighted(CrossEntropyLossOptions().weight(w).ignore_index(1));
  EXPECT_EQ(weighted->state_dict().keys(), std::vector<std::string>{"weight"});
  expectClose(weighted->forward(logits, target),
              cross_entropy(logits, target, Reduction::Mean, w, 1));
  EXPECT_EQ(printed(loss), "CrossEntropyLoss()");
}

TEST(LossTest, NLLAndMSE) {
  Tensor logp = log_softmax(sample({4, 3}), 1);
  Tensor target = tensor(std::vector<int64_t>{0, 2, 1, 2});
  expectClose(NLLLoss()->forward(logp, target), nll_loss(logp, target));
  Tensor a = tensor(std::vector<float>{1, 2, 3}), b = tensor(std::vector<float>{1, 4, 0});
  EXPECT_FLOAT_EQ(MSELoss()->forward(a, b).item<float>(), 13.0f / 3);
  EXPECT_EQ(valuesAsDouble(MSELoss(Reduction::None)->forward(a, b)), (std::vector<double>{0, 4, 9}));
  EXPECT_EQ(printed(MSELoss()), "MSELoss()");
}

// ---- autograd through modules ------------------------------------------------------------------

// PyTorch 1.13's values (torch.nn.BCELoss / BCEWithLogitsLoss on the same inputs).
TEST(LossTest, BinaryCrossEntropy) {
  Tensor p = tensor({0.2f, 0.7f, 0.9f}), t = tensor({0.0f, 1.0f, 1.0f});
  EXPECT_NEAR(BCELoss()->forward(p, t).item<double>(), 0.228393, 1e-6);
  expectClose(BCELoss(BCELossOptions().reduction(kNone))->forward(p, t),
              tensor({0.2231436f, 0.3566749f, 0.1053605f}));
  BCELoss weighted(BCELossOptions().weight(tensor({1.0f, 2.0f, 0.0f})).reduction(kSum));
  EXPECT_NEAR(weighted->forward(p, t).item<double>(), 0.2231436 + 2 * 0.3566749, 1e-6);
  EXPECT_EQ(weighted->named_buffers().size(), 1u);
  // log clamped at -100: a certain wrong answer costs 100, not inf.
  EXPECT_EQ(binary_cross_entropy(tensor({0.0f, 1.0f}), tensor({1.0f, 0.0f})).item<double>(), 100.0);
  EXPECT_THAT([&] { binary_cross_entropy(p, tensor({1.0f, 0.0f})); },
              ThrowsMessage<ShapeError>(HasSubstr("binary_cross_entropy: input has shape [3] but target has shape [2]")));
  // An input outside [0, 1] is an error, as in LibTorch (a NaN loss otherwise).
  EXPECT_THAT([&] { binary_cross_entropy(tensor({0.5f, 1.5f}), tensor({1.0f, 0.0f})); },
              ThrowsMessage<Error>(HasSubstr("kiln::binary_cross_entropy: all elements of input should be "
                                             "between 0 and 1, but element 1 is 1.5 (input of shape [2]) (at ")));
  EXPECT_THAT([&] { BCELoss()->forward(tensor({NAN, 0.5f}), tensor({1.0f, 0.0f})); },
              ThrowsMessage<Error>(HasSubstr("but element 0 is nan")));
}

TEST(LossTest, BinaryCrossEntropyWithLogits) {
  Tensor x = tensor({-1.0f, 0.5f, 3.0f}), t = tensor({0.0f, 1.0f, 0.5f});
  EXPECT_NEAR(BCEWithLogitsLoss(BCEWithLogitsLossOptions().reduction(kSum))->forward(x, t).item<double>(),
              2.3359260, 1e-6);
  BCEWithLogitsLoss positive(BCEWithLogitsLossOptions().pos_weight(tensor({2.0f})).reduction(kNone));
  expectClose(positive->forward(x, t), tensor({0.3132617f, 0.9481540f, 1.5728810f}));
  EXPECT_EQ(positive->named_buffers().size(), 1u);
  // Stable where sigmoid saturates: BCE of sigmoid(±40) would take log(0).
  expectClose(binary_cross_entropy_with_logits(tensor({40.0f, -40.0f}), tensor({0.0f, 1.0f}), Tensor(),
                                               Tensor(), kNone),
              tensor({40.0f, 40.0f}));
  Tensor logits = sample({4, 3});
  expectClose(binary_cross_entropy_with_logits(logits, sigmoid(sample({4, 3}, 2))),
              binary_cross_entropy(sigmoid(logits), sigmoid(sample({4, 3}, 2))));
  EXPECT_THAT([&] { binary_cross_entropy_with_logits(x, zeros({3, 1})); },
              ThrowsMessage<ShapeError>(HasSubstr("binary_cross_entropy_with_logits: input has shape [3]")));
}

TEST(LayersTest, GradientsReachEveryParameter) {
  Sequential model(Conv2d(Conv2dOptions(3, 4, 3).padding(1)), BatchNorm2d(4), ReLU6(),
                   AdaptiveAvgPool2d(1), Flatten(), Dropout(0.1), Linear(4, 2));
  Tensor loss = CrossEntropyLoss()->forward(model->forward(sample({2, 3, 6, 6})),
                                            tensor(std::vector<int64_t>{0, 1}));
  loss.backward();
  for (const auto& [name, p] : model->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_EQ(p.grad().sizes(), p.sizes()) << name;
  }
}

}  // namespace
}  // namespace kiln::nn
