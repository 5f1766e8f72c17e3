// nn::SyncBatchNorm under mpirun with 2 and 3 ranks: each rank's share of a batch through
// SyncBatchNorm gives what one BatchNorm2d gives on the whole batch in one process, its
// outputs, input and parameter gradients and running statistics, with the ranks' shares
// equal or not.
#include "kiln/nn/SyncBatchNorm.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <sstream>
#include <tuple>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/distributed/Distributed.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/BatchNorm.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

namespace dist = distributed;

constexpr int64_t kChannels = 3;

double relativeDifference(const Tensor& a, const Tensor& b) {
  return (a - b).norm().item<double>() / std::max(b.norm().item<double>(), 1e-30);
}

// Rank r's rows of a batch of sum(sizes) examples: its start and its count.
std::pair<int64_t, int64_t> share(const std::vector<int64_t>& sizes) {
  int64_t start = 0;
  for (int r = 0; r < dist::rank(); ++r) start += sizes[size_t(r)];
  return {start, sizes[size_t(dist::rank())]};
}

// Trains `steps` forwards and backwards of one BatchNorm2d on the whole batch (in every
// process alike, no communication) and of SyncBatchNorm on this rank's rows, and compares.
void expectSameAsOneBatchNorm(const std::vector<int64_t>& sizes, std::optional<double> momentum) {
  int64_t total = 0;
  for (int64_t n : sizes) total += n;
  auto options = nn::BatchNormOptions(kChannels).momentum(momentum);
  nn::BatchNorm2d whole(options);
  nn::SyncBatchNorm synced(options);
  {
    NoGradGuard noGrad;
    for (nn::BatchNorm2dImpl* bn : {whole.get(), static_cast<nn::BatchNorm2dImpl*>(synced.get())}) {
      bn->weight.copy_(tensor(std::vector<float>{1.5f, 0.5f, -1.0f}));
      bn->bias.copy_(tensor(std::vector<float>{0.1f, -0.2f, 0.3f}));
    }
  }
  const auto [start, count] = share(sizes);
  for (int step = 0; step < 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    manual_seed(uint64_t(40 + step));  // the same batch on every rank, shifted off zero
    Tensor x = randn({total, kChannels, 4, 2}) * 2.0 + 0.7;
    Tensor upstream = randn({total, kChannels, 4, 2});  // the loss's weights
    Tensor wholeX = x.clone().requires_grad_(true);
    Tensor y = whole(wholeX);
    (y * upstream).sum().backward();

    Tensor mine = x.narrow(0, start, count).clone().requires_grad_(true);
    Tensor myY = synced(mine);
    (myY * upstream.narrow(0, start, count)).sum().backward();

    EXPECT_LT(relativeDifference(myY, y.narrow(0, start, count)), 1e-5);
    EXPECT_LT(relativeDifference(mine.grad(), wholeX.grad().narrow(0, start, count)), 1e-5);
    // Each rank's parameter gradients are of its own rows' loss: summed, the whole one's.
    for (const char* name : {"weight", "bias"}) {
      Tensor g = synced->named_parameters()[name].grad().clone();
      dist::all_reduce(g);
      EXPECT_LT(relativeDifference(g, whole->named_parameters()[name].grad()), 1e-5) << name;
    }
    EXPECT_LT(relativeDifference(synced->running_mean, whole->running_mean), 1e-5);
    EXPECT_LT(relativeDifference(synced->running_var, whole->running_var), 1e-5);
    for (nn::BatchNorm2dImpl* bn : {whole.get(), static_cast<nn::BatchNorm2dImpl*>(synced.get())})
      for (Tensor p : {bn->weight, bn->bias}) p.mutable_grad() = Tensor();
  }
  EXPECT_EQ(synced->num_batches_tracked.item<int64_t>(), 3);
  // Evaluation: every rank normalizes its rows with the (equal) running statistics.
  whole->eval();
  synced->eval();
  manual_seed(99);
  Tensor x = randn({total, kChannels, 4, 2});
  Tensor mine = synced(x.narrow(0, start, count)), want = whole(x).narrow(0, start, count);
  EXPECT_LT(relativeDifference(mine, want), 1e-6);
}

std::vector<int64_t> evenSizes() { return std::vector<int64_t>(size_t(dist::world_size()), 3); }

// 1, 2, 3, ... examples: the larger shares weigh more in the statistics.
std::vector<int64_t> unevenSizes() {
  std::vector<int64_t> sizes;
  for (int r = 0; r < dist::world_size(); ++r) sizes.push_back(r + 1);
  return sizes;
}

TEST(SyncBatchNormTest, EqualSharesMatchOneBatchNormOnTheWholeBatch) {
  expectSameAsOneBatchNorm(evenSizes(), 0.1);
}

TEST(SyncBatchNormTest, UnevenSharesMatchOneBatchNormOnTheWholeBatch) {
  expectSameAsOneBatchNorm(unevenSizes(), 0.1);
}

TEST(SyncBatchNormTest, CumulativeAverageMatches) {
  expectSameAsOneBatchNorm(unevenSizes(), std::nullopt);
}

// Without the all-reduce each rank's statistics are its own share's: the comparison
// above must see that (so it cannot pass by construction).
TEST(SyncBatchNormTest, PlainBatchNormOnTheSharesDiffers) {
  ASSERT_GT(dist::world_size(), 1) << "run under mpirun -np 2 or more";
  const std::vector<int64_t> sizes = evenSizes();
  int64_t total = 0;
  for (int64_t n : sizes) total += n;
  nn::BatchNorm2d whole(kChannels), local(kChannels);
  manual_seed(40);
  Tensor x = randn({total, kChannels, 4, 2}) * 2.0 + 0.7;
  const auto [start, count] = share(sizes);
  EXPECT_GT(relativeDifference(local(x.narrow(0, start, count)), whole(x).narrow(0, start, count)),
            1e-3);
}

// Training steps of a SyncBatchNorm on each rank's share (SGD on its weight and bias)
// under jit::trace on `backend`, or eagerly: the recording holds the forward's and the
// backward's all-reduces, and the traced steps equal the eager ones.
// A learned per-channel scale before the normalization makes the input require grad, so
// the backward has its all-reduce (the scale's gradient needs every rank's rows).
void trainSteps(nn::SyncBatchNorm& bn, Tensor scale, const std::string& backend) {
  std::vector<Tensor> params = bn->parameters();
  params.push_back(scale);
  optim::SGD sgd(params, optim::SGDOptions(0.1));
  auto step = [&](Tensor x, Tensor upstream) {
    sgd.zero_grad();
    Tensor loss = (bn(x * scale) * upstream).sum();
    loss.backward();
    sgd.step();
    return loss;
  };
  const auto [start, count] = share(unevenSizes());
  int64_t total = 0;
  for (int64_t n : unevenSizes()) total += n;
  auto batch = [&](int s) {
    manual_seed(uint64_t(60 + s));
    Tensor x = (randn({total, kChannels, 4, 2}) * 2.0 + 0.7).narrow(0, start, count).clone();
    Tensor upstream = randn({total, kChannels, 4, 2}).narrow(0, start, count).clone();
    return std::pair{x, upstream};
  };
  constexpr int kTrainSteps = 4;
  if (backend.empty()) {
    for (int s = 0; s < kTrainSteps; ++s) std::apply(step, batch(s));
    return;
  }
  jit::TraceOptions options;
  options.compile.backend = backend;
  auto traced = jit::trace(step, options);
  traced.name_module("bn", bn).name_optimizer("opt", sgd);
  for (int s = 0; s < kTrainSteps; ++s) {
    auto [x, upstream] = batch(s);
    traced(x, upstream);
  }
  EXPECT_EQ(traced.num_traces(), 1u);
  // The forward's all-reduce and the backward's.
  const std::string graph = traced.graph_str();
  EXPECT_NE(graph.find("kiln.all_reduce sum"), graph.rfind("kiln.all_reduce sum")) << graph;
}

TEST(SyncBatchNormTest, TracedStepsMatchEagerOnes) {
  for (const char* backend : {"INTERP", "MLIR"}) {
    SCOPED_TRACE(backend);
    nn::SyncBatchNorm eager(kChannels), traced(kChannels);
    auto scale = [] { return full({1, kChannels, 1, 1}, 1.5).requires_grad_(true); };
    Tensor eagerScale = scale(), tracedScale = scale();
    trainSteps(eager, eagerScale, "");
    trainSteps(traced, tracedScale, backend);
    EXPECT_LT(relativeDifference(tracedScale, eagerScale), 1e-5);
    EXPECT_GT(relativeDifference(eagerScale, scale()), 1e-3);
    for (const auto& [name, want] : eager->named_parameters())
      EXPECT_LT(relativeDifference(traced->named_parameters()[name], want), 1e-5) << name;
    EXPECT_LT(relativeDifference(traced->running_mean, eager->running_mean), 1e-5);
    EXPECT_LT(relativeDifference(traced->running_var, eager->running_var), 1e-5);
    EXPECT_GT(relativeDifference(eager->running_var, nn::SyncBatchNorm(kChannels)->running_var), 1e-2);
  }
}

TEST(SyncBatchNormTest, PrintsAndChecksItsInput) {
  nn::SyncBatchNorm bn(kChannels);
  std::ostringstream text;
  bn->pretty_print(text);
  EXPECT_EQ(text.str(), "SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=true, "
                        "track_running_stats=true)");
  EXPECT_KILN_ERROR(bn(zeros({2, kChannels})), ShapeError,
                    "kiln::SyncBatchNorm: expects a 4-d input [N, C, H, W], got shape [2, 3]" +
                        testing::at());
  EXPECT_KILN_ERROR(bn(zeros({2, 4, 1, 1})), ShapeError,
                    "kiln::SyncBatchNorm: expects 3 channels, got shape [2, 4, 1, 1]" +
                        testing::at());
}

}  // namespace
}  // namespace kiln
