// In-place Tensor methods: dtype rules (PyTorch's canCast), alpha, broadcasting limits.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <cstdint>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/core/Storage.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

template <class T>
std::vector<T> values(const Tensor& t) {
  Tensor c = t.contiguous();
  const T* p = c.data_ptr<T>();
  return std::vector<T>(p, p + c.numel());
}

TEST(InPlaceTest, AddWithAlphaComputesInThePromotedDtype) {
  // 0.1 rounded to float first would give 1 + 0.1f·3 = 1.3000000044703484.
  Tensor self = tensor(std::vector<double>{1.0});
  self.add_(tensor(std::vector<float>{3.0f}), 0.1);
  EXPECT_EQ(values<double>(self)[0], 1.0 + 0.1 * 3.0);
  self.sub_(tensor(std::vector<float>{3.0f}), 0.1);
  EXPECT_EQ(values<double>(self)[0], 1.0 + 0.1 * 3.0 - 0.1 * 3.0);
}

TEST(InPlaceTest, IntegralTensorsTakeIntegralAlphas) {
  Tensor self = tensor(std::vector<int64_t>{10, 20});
  self.add_(tensor(std::vector<int64_t>{1, 2}), 3.0);
  EXPECT_EQ(values<int64_t>(self), (std::vector<int64_t>{13, 26}));
  self.sub_(tensor(std::vector<int64_t>{1, 1}), -2.0);
  EXPECT_EQ(values<int64_t>(self), (std::vector<int64_t>{15, 28}));
  EXPECT_KILN_ERROR_HAS(self.add_(tensor(std::vector<int64_t>{1, 1}), 0.5), TypeError,
                        "kiln::add: alpha must be an integer for int64 operands (got 0.5; other "
                        "has shape [2])");
}

TEST(InPlaceTest, AFloatScalarIntoAnIntTensorIsAnError) {
  Tensor self = tensor(std::vector<int32_t>{1, 2});
  EXPECT_KILN_ERROR_HAS(self.add_(1.5), TypeError,
                        "kiln::add: result type float32 can't be cast to the desired output type "
                        "int32 of the in-place tensor of shape [2]");
  EXPECT_KILN_ERROR_HAS(self.mul_(2.0), TypeError, "kiln::mul: result type float32 can't be cast");
  EXPECT_KILN_ERROR_HAS(self.add_(tensor(std::vector<float>{1.0f, 1.0f})), TypeError,
                        "can't be cast to the desired output type int32");
  EXPECT_EQ(values<int32_t>(self), (std::vector<int32_t>{1, 2}));  // untouched
}

TEST(InPlaceTest, BoolTensorsOnlyTakeBools) {
  Tensor flags = tensor(std::vector<bool>{true, false});
  EXPECT_KILN_ERROR_HAS(flags.add_(tensor(std::vector<int32_t>{1, 1})), TypeError,
                        "result type int32 can't be cast to the desired output type bool");
  flags.add_(tensor(std::vector<bool>{false, true}));  // bool + bool is or
  EXPECT_EQ(values<bool>(flags), (std::vector<bool>{true, true}));
}

TEST(InPlaceTest, NarrowerFloatsAndIntsStillCastIn) {
  Tensor self = tensor(std::vector<float>{1.0f});
  self.add_(tensor(std::vector<double>{0.5}));  // floating into floating: allowed
  self.mul_(tensor(std::vector<int64_t>{4}));   // integral into floating: allowed
  EXPECT_EQ(values<float>(self)[0], 6.0f);
  Tensor counts = tensor(std::vector<int32_t>{1});
  counts.add_(tensor(std::vector<int64_t>{2}));  // int64 into int32: allowed, as PyTorch
  EXPECT_EQ(values<int32_t>(counts)[0], 3);
}

TEST(InPlaceTest, ElementwiseWritesGoStraightIntoTheTarget) {
  const int64_t n = int64_t(1) << 20;  // 4 MiB: a temporary would land in the block cache
  Tensor x = ones({n}), y = full({n}, 2.0);
  size_t limit = Storage::setCacheLimit(size_t(64) << 20);
  Storage::emptyCache();
  x.add_(y).mul_(3.0);
  x.copy_(mul(x, 1.0));  // the temporary here is the argument, not copy_'s
  Storage::emptyCache();
  x.sub_(y).div_(y).fill_(4.0);
  EXPECT_EQ(Storage::cachedBytes(), 0u);  // no temporary output was allocated
  Storage::setCacheLimit(limit);
  EXPECT_EQ(values<float>(x)[n - 1], 4.0f);
}

TEST(InPlaceTest, OverlappingViewsReadEverythingBeforeWriting) {
  Tensor x = tensor(std::vector<float>{1, 2, 3, 4, 5});
  Tensor tail = x.narrow(0, 1, 4), head = x.narrow(0, 0, 4);
  tail.add_(head);  // reads 1 2 3 4 before any write, as PyTorch's result does here
  EXPECT_EQ(values<float>(x), (std::vector<float>{1, 3, 5, 7, 9}));
}

// uniform_, normal_ and bernoulli_ draw what rand, randn and bernoulli would from the same
// generator state, in the tensor's dtype, into its storage (a view writes its base).
TEST(InPlaceTest, RandomFillsDrawWhatTheFactoriesDraw) {
  using kiln::testing::at;
  manual_seed(7);
  Tensor u = rand({2, 3}, kFloat64), n = randn({2, 3}), b = bernoulli({2, 3}, 0.3);
  manual_seed(7);
  Tensor base = zeros({2, 4}, kFloat64);
  base.narrow(1, 0, 3).uniform_(-2, 3);
  EXPECT_EQ(values<double>(base.narrow(1, 0, 3)), values<double>(add(mul(u, 5.0), -2.0)));
  EXPECT_EQ(values<double>(base.select(1, 3)), (std::vector<double>{0, 0}));
  EXPECT_EQ(values<float>(empty({2, 3}).normal_(1, 0.5)), values<float>(add(mul(n, 0.5), 1.0)));
  EXPECT_EQ(values<float>(empty({2, 3}).bernoulli_(0.3)), values<float>(b));
  EXPECT_EQ(values<float>(zeros({2}).uniform_(4, 4)), (std::vector<float>{4, 4}));
}

TEST(InPlaceTest, RandomFillsCheckTheirArguments) {
  using kiln::testing::at;
  Tensor ints = zeros({3}, kInt64), x = zeros({2});
  EXPECT_KILN_ERROR(ints.uniform_(0, 1), TypeError,
                    "kiln::uniform_: expects a floating-point tensor, got int64 of shape [3]" + at());
  EXPECT_KILN_ERROR(x.uniform_(1, 0), Error,
                    "kiln::uniform_: expects a [from, to) range, but found from=1 > to=0 (tensor "
                    "of shape [2])" + at());
  EXPECT_KILN_ERROR(x.normal_(0, -1), Error,
                    "kiln::normal_: expects std >= 0, but found std=-1 (tensor of shape [2])" + at());
  EXPECT_KILN_ERROR(x.bernoulli_(1.5), Error,
                    "kiln::bernoulli_: expects 0 <= p <= 1, but found p=1.5 (tensor of shape [2])" + at());
  Tensor w = zeros({2}).requires_grad_();
  EXPECT_KILN_ERROR_HAS(w.normal_(), Error, "a leaf tensor that requires grad (shape [2]) cannot be "
                        "modified in place");
  NoGradGuard noGrad;
  EXPECT_EQ(w.normal_().sizes(), (Shape{2}));
}

}  // namespace
}  // namespace kiln
