// Post-accumulate-grad hooks: once per backward pass per leaf, after its whole gradient
// of that pass is in .grad, in the order the gradients complete; not under grad(); errors.
#include "kiln/core/PostAccumulateGradHook.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

using kiln::testing::at;

Tensor constant(const std::vector<float>& values) { return tensor(values); }
Tensor leaf(const std::vector<float>& values) { return constant(values).requires_grad_(true); }

// .grad is contiguous (backward gives it storage of its own).
std::vector<float> values(const Tensor& t) {
  EXPECT_TRUE(t.is_contiguous());
  return {t.data_ptr<float>(), t.data_ptr<float>() + t.numel()};
}

TEST(PostAccumulateGradHookTest, RunsOncePerPassWithTheWholeGradient) {
  Tensor w = leaf({1, 2, 3});
  std::vector<std::vector<float>> seen;
  autograd::register_post_accumulate_grad_hook(w, [&](const Tensor& t) {
    EXPECT_TRUE(t.is_same(w));
    seen.push_back(values(t.grad()));
  });
  // Three uses of w, through two nodes and an edge of a third: one run, with their sum.
  ((w * 2).sum() + (w * w).sum()).backward();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], (std::vector<float>{4, 6, 8}));  // 2 + 2w
  // A second pass accumulates, and the hook sees the total.
  (w * 3).sum().backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1], (std::vector<float>{7, 9, 11}));
}

TEST(PostAccumulateGradHookTest, LeavesRunInTheOrderTheirGradientsComplete) {
  // A chain w3(w2(w1 x)): backward completes w3, then w2, then w1, and each hook already
  // runs before the earlier layers' gradients exist.
  Tensor x = constant({1, -2});
  Tensor w1 = leaf({0.5f, 1.5f}), w2 = leaf({2, 3}), w3 = leaf({-1, 4});
  std::vector<std::string> order;
  auto record = [&](const char* name, const Tensor& next) {
    return [&order, name, next](const Tensor&) {
      order.push_back(name);
      if (next.defined()) EXPECT_FALSE(next.grad().defined()) << name;
    };
  };
  autograd::register_post_accumulate_grad_hook(w3, record("w3", w2));
  autograd::register_post_accumulate_grad_hook(w2, record("w2", w1));
  autograd::register_post_accumulate_grad_hook(w1, record("w1", Tensor()));
  autograd::register_post_accumulate_grad_hook(w1, record("w1 again", Tensor()));
  (((x * w1).tanh() * w2).tanh() * w3).sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"w3", "w2", "w1", "w1 again"}));
}

TEST(PostAccumulateGradHookTest, NotRunWithoutAGradientOrUnderGrad) {
  Tensor w = leaf({1, 2}), unused = leaf({3, 4});
  int runs = 0;
  autograd::register_post_accumulate_grad_hook(w, [&](const Tensor&) { ++runs; });
  autograd::register_post_accumulate_grad_hook(unused, [&](const Tensor&) { runs += 100; });
  autograd::grad({(w * w).sum()}, {w});  // accumulates into no .grad
  EXPECT_EQ(runs, 0);
  (w * w).sum().backward();
  EXPECT_EQ(runs, 1);
  // A leaf that is itself a root of the pass.
  w.backward(ones_like(w));
  EXPECT_EQ(runs, 2);
}

TEST(PostAccumulateGradHookTest, RemoveStopsTheHook) {
  Tensor w = leaf({1, 2});
  int a = 0, b = 0;
  autograd::RemovableHandle first =
      autograd::register_post_accumulate_grad_hook(w, [&](const Tensor&) { ++a; });
  autograd::register_post_accumulate_grad_hook(w, [&](const Tensor&) { ++b; });
  w.sum().backward();
  first.remove();
  first.remove();  // a second remove does nothing
  w.sum().backward();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
}

TEST(PostAccumulateGradHookTest, HooksDieWithTheirTensor) {
  int runs = 0;
  {
    Tensor w = leaf({1, 2});
    autograd::register_post_accumulate_grad_hook(w, [&](const Tensor&) { ++runs; });
  }
  // New leaves may reuse the dead one's address; none of them runs its hook.
  for (int i = 0; i < 8; ++i) leaf({1, 2}).sum().backward();
  EXPECT_EQ(runs, 0);
}

TEST(PostAccumulateGradHookTest, RejectsWhatCannotAccumulate) {
  Tensor w = leaf({1, 2});
  auto none = [](const Tensor&) {};
  EXPECT_KILN_ERROR(autograd::register_post_accumulate_grad_hook(w * 2, none), Error,
                    "kiln::register_post_accumulate_grad_hook: the tensor (shape [2]) is not a "
                    "leaf: it has a grad_fn, and only leaves accumulate a .grad" + at());
  EXPECT_KILN_ERROR(autograd::register_post_accumulate_grad_hook(constant({1}), none), Error,
                    "kiln::register_post_accumulate_grad_hook: the tensor (shape [1]) does not "
                    "require grad" + at());
  EXPECT_KILN_ERROR(autograd::register_post_accumulate_grad_hook(Tensor(), none), Error,
                    "kiln::register_post_accumulate_grad_hook: called on an undefined tensor" + at());
}

}  // namespace
}  // namespace kiln
