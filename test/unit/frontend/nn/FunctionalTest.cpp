// nn::functional: the re-exported ops, linear, and the options forms, which must agree with
// the positional forms.
#include "kiln/nn/Functional.h"

#include <gtest/gtest.h>

#include "kiln/core/Random.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/nn/NnTestSupport.h"

namespace kiln::nn {
namespace {

namespace F = functional;
using golden::valuesAsDouble;

using testing::sample;

void expectClose(const Tensor& a, const Tensor& b, double tol = 1e-6) {
  testing::expectCloseWithin(a, b, tol);
}

TEST(FunctionalTest, Linear) {
  Tensor x = sample({3, 4}), w = sample({2, 4}, 2), b = sample({2}, 3);
  expectClose(F::linear(x, w, b), matmul(x, w.t()) + b);
  expectClose(F::linear(x, w), matmul(x, w.t()));
  EXPECT_THROW(F::linear(x, sample({4})), ShapeError);
}

TEST(FunctionalTest, ReExportsTheOps) {
  Tensor x = sample({2, 6});
  expectClose(F::relu(x), relu(x));
  expectClose(F::gelu(x, "tanh"), gelu(x, "tanh"));
  expectClose(F::softmax(x, 1), softmax(x, 1));
  expectClose(F::dropout(x, 0.5, /*training=*/false), x);
  Tensor target = tensor(std::vector<int64_t>{1, 5});
  expectClose(F::cross_entropy(x, target), cross_entropy(x, target));
}

TEST(FunctionalTest, OptionsFormsAgreeWithPositionalForms) {
  Tensor x = sample({2, 4, 6, 6});
  Tensor w = sample({4, 2, 3, 3}, 2), b = sample({4}, 3);
  expectClose(F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(2).padding(1).groups(2)),
              conv2d(x, w, b, {2}, {1}, {1}, 2));
  expectClose(F::max_pool2d(x, F::MaxPool2dFuncOptions(2)), max_pool2d(x, {2}));
  expectClose(F::avg_pool2d(x, F::AvgPool2dFuncOptions({3, 2}).stride(1).padding({1, 0})),
              avg_pool2d(x, {3, 2}, {1}, {1, 0}));
  expectClose(F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(3)),
              adaptive_avg_pool2d(x, {3, 3}));
  expectClose(F::layer_norm(x, F::LayerNormFuncOptions({6}).eps(1e-3)), layer_norm(x, {6}, {}, {}, 1e-3));
  Tensor rm = zeros({4}), rv = ones({4});
  expectClose(F::batch_norm(x, rm, rv, F::BatchNormFuncOptions().weight(b)), batch_norm(x, rm, rv, b));
  expectClose(F::softmax(x, F::SoftmaxFuncOptions(1)), softmax(x, 1));
  expectClose(F::log_softmax(x, F::LogSoftmaxFuncOptions(-1)), log_softmax(x, -1));
  expectClose(F::gelu(x, F::GELUFuncOptions().approximate("tanh")), gelu(x, "tanh"));
  expectClose(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.3)), leaky_relu(x, 0.3));
  expectClose(F::dropout(x, F::DropoutFuncOptions().p(0.3).training(false)), x);

  Tensor logits = sample({3, 5}), target = tensor(std::vector<int64_t>{0, 4, 2});
  expectClose(F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().reduction(Reduction::Sum)),
              cross_entropy(logits, target, Reduction::Sum));
  expectClose(F::nll_loss(logits, target, F::NLLLossFuncOptions().ignore_index(4)),
              nll_loss(logits, target, Reduction::Mean, Tensor(), 4));
  expectClose(F::mse_loss(logits, logits * 2.0, F::MSELossFuncOptions(Reduction::Sum)),
              mse_loss(logits, logits * 2.0, Reduction::Sum));
}

TEST(FunctionalTest, SmoothL1AndL1LossInEveryForm) {
  Tensor x = sample({3, 4}), y = sample({3, 4}, 2);
  Tensor expected = smooth_l1_loss(x, y, kSum, 0.5);
  expectClose(F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions(kSum).beta(0.5)), expected);
  expectClose(SmoothL1Loss(SmoothL1LossOptions(kSum).beta(0.5))(x, y), expected);
  expectClose(SmoothL1Loss()(x, y), smooth_l1_loss(x, y));
  expectClose(F::l1_loss(x, y, F::L1LossFuncOptions(kNone)), abs(x - y));
  expectClose(L1Loss()(x, y), mean(abs(x - y)));
}

TEST(FunctionalTest, CorpusLayersInTheirOptionsForms) {
  Tensor x = sample({2, 4, 3, 3}), w = sample({4, 2, 3, 3}, 2), b = sample({2}, 3);
  expectClose(F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().bias(b).stride(2).output_padding(1)),
              conv_transpose2d(x, w, b, {2}, {0}, {1}));
  Tensor kept = F::dropout2d(ones({2, 3, 2, 2}), F::Dropout2dFuncOptions().p(0.5).training(false));
  expectClose(kept, ones({2, 3, 2, 2}));
  Tensor p = sigmoid(sample({5})), t = sigmoid(sample({5}, 4)), weight = sample({5}, 5);
  expectClose(F::binary_cross_entropy(p, t, F::BinaryCrossEntropyFuncOptions().weight(weight).reduction(kSum)),
              binary_cross_entropy(p, t, weight, kSum));
  Tensor pos = sample({5}, 6);
  expectClose(F::binary_cross_entropy_with_logits(
                  p, t, F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(pos).reduction(kNone)),
              binary_cross_entropy_with_logits(p, t, Tensor(), pos, kNone));
}

// LibTorch's spellings that pytorch/examples cpp/mnist uses.
TEST(FunctionalTest, LibTorchArgumentOrders) {
  Tensor logp = log_softmax(sample({4, 3}), 1), target = tensor({0L, 2L, 1L, 2L});
  Tensor weight = sigmoid(sample({3}, 2));
  expectClose(nll_loss(logp, target, /*weight=*/{}, Reduction::Sum), nll_loss(logp, target, kSum));
  expectClose(nll_loss(logp, target, weight), nll_loss(logp, target, kMean, weight));
  Tensor x = sample({1, 2, 4, 6});
  expectClose(max_pool2d(x, 2), max_pool2d(x, {2, 2}, {2, 2}));
  expectClose(avg_pool2d(x, 2, 1), avg_pool2d(x, {2, 2}, {1, 1}));
}

TEST(FunctionalTest, EmbeddingTakesInputFirst) {
  Tensor weight = sample({5, 3}).requires_grad_();
  Tensor ids = tensor(std::vector<int64_t>{0, 2, 2, 4});
  expectClose(F::embedding(ids, weight), embedding(weight, ids));
  Tensor y = F::embedding(ids, weight, F::EmbeddingFuncOptions().padding_idx(2));
  expectClose(y, embedding(weight, ids));  // same values
  sum(y).backward();
  EXPECT_EQ(valuesAsDouble(weight.grad()),
            (std::vector<double>{1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_THROW(F::embedding(ids, weight, F::EmbeddingFuncOptions().padding_idx(7)), Error);
}

}  // namespace
}  // namespace kiln::nn
