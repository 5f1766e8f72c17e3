// nn::DistributedDataParallel under mpirun with 2 and 3 ranks: N ranks with batch B each,
// fed by DistributedSampler, end with the parameters of one process trained on batch N·B.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/core/PostAccumulateGradHook.h"
#include "kiln/core/Random.h"
#include "kiln/data/DataLoader.h"
#include "kiln/distributed/Distributed.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/DistributedDataParallel.h"
#include "kiln/nn/Graph.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln {
namespace {

namespace dist = distributed;

constexpr int64_t kPerRankBatch = 4;
constexpr int kSteps = 20;

nn::Sequential mlp() {
  return nn::Sequential(nn::Linear(6, 16), nn::ReLU(), nn::Linear(16, 3));
}

// Example i: inputs and targets from smooth functions of i, the same on every rank.
std::shared_ptr<data::TensorDataset> dataset(int64_t n) {
  Tensor i = arange(0, n, 1, kFloat32).reshape({n, 1});
  Tensor x = (i * 0.37 + arange(0, 6, 1, kFloat32) * 0.91).sin();
  Tensor y = (i * 0.11 + arange(0, 3, 1, kFloat32)).cos();
  return std::make_shared<data::TensorDataset>(x, y);
}

// Trains `model` on `loader`'s first kSteps batches (accumulating `accumulate` batches per
// step) at learning rate `lr`, averaging through `ddp` when given.
void train(nn::Sequential& model, data::DataLoader& loader, nn::DistributedDataParallel* ddp,
           int accumulate, double lr = 0.1) {
  optim::SGD sgd(model->parameters(), optim::SGDOptions(lr).momentum(0.9));
  auto batch = loader.begin();
  for (int step = 0; step < kSteps; ++step) {
    sgd.zero_grad();
    for (int micro = 0; micro < accumulate; ++micro, ++batch) {
      Tensor loss = mse_loss(model(batch->data), batch->target);
      if (ddp && micro + 1 < accumulate) {
        auto noSync = ddp->no_sync();
        loss.backward();
        ddp->synchronize_gradients();  // skipped: accumulates locally
      } else {
        loss.backward();
        if (ddp) ddp->synchronize_gradients();
      }
    }
    sgd.step();
  }
}

// The same with each step one jit::trace'd call on `backend`: the averaging is recorded
// as one kiln.all_reduce_start per bucket, all started before the first kiln.wait, which
// the program runs on every call.
void trainTraced(nn::Sequential& model, data::DataLoader& loader, nn::DistributedDataParallel& ddp,
                 const std::string& backend) {
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  jit::TraceOptions options;
  options.compile.backend = backend;
  auto step = jit::trace(
      [&](Tensor x, Tensor y) {
        sgd.zero_grad();
        Tensor loss = mse_loss(model(x), y);
        loss.backward();
        ddp.synchronize_gradients();
        sgd.step();
        return loss;
      },
      options);
  step.name_module("model", model).name_optimizer("opt", sgd);
  auto batch = loader.begin();
  for (int s = 0; s < kSteps; ++s, ++batch) step(batch->data, batch->target);
  // One recording (the warm-up that made the momentum buffers does not count), run 19 times.
  EXPECT_EQ(step.num_traces(), 1u);
  const std::string graph = step.graph_str();
  auto count = [&](const std::string& op) {
    size_t n = 0;
    for (size_t at = graph.find(op); at != std::string::npos; at = graph.find(op, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("kiln.all_reduce_start mean"), ddp.buckets().size()) << graph;
  EXPECT_EQ(count("kiln.wait"), ddp.buckets().size()) << graph;
  EXPECT_LT(graph.rfind("kiln.all_reduce_start"), graph.find("kiln.wait")) << graph;
  // kiln-schedule-collectives started the last layer's bucket inside the backward, before
  // the first layer's weight gradient (the last matmul) is computed.
  if (ddp.buckets().size() > 1) {
    EXPECT_LT(graph.find("kiln.all_reduce_start"), graph.rfind("kiln.matmul")) << graph;
    // ... and waits for each bucket only where the optimizer first reads it: the first
    // bucket's update (SGD with momentum: a mul and an add) runs before the last wait.
    const size_t firstWait = graph.find("kiln.wait"), lastWait = graph.rfind("kiln.wait");
    const std::string between = graph.substr(firstWait, lastWait - firstWait);
    EXPECT_NE(between.find("kiln.add"), std::string::npos) << graph;
  }
}

// A data-parallel nn::Graph: its step program averages the gradients (kiln.all_reduce).
struct TrainGraph : nn::Graph<TrainGraph> {
  TrainGraph(nn::Sequential model, std::shared_ptr<optim::SGD> sgd, const std::string& backend,
             double bucketCapMb, int accumulate)
      : model(model) {
    register_module("model", model);
    add_optimizer(sgd);
    config().set_backend(backend).set_gradient_accumulation_steps(accumulate);
    config().enable_data_parallel(true, bucketCapMb);
  }
  Tensor build(Tensor x, Tensor y) {
    Tensor loss = mse_loss(model(x), y);
    loss.backward();
    return loss;
  }
  nn::Sequential model;
};

// The graph's steps average over `accumulate` calls (it scales each call's gradients by
// 1/accumulate): the same updates as summed gradients at 1/accumulate of the rate.
void trainGraph(nn::Sequential& model, data::DataLoader& loader, const std::string& backend,
                double bucketCapMb, int accumulate) {
  auto sgd = std::make_shared<optim::SGD>(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  TrainGraph graph(model, sgd, backend, bucketCapMb, accumulate);
  auto batch = loader.begin();
  for (int s = 0; s < kSteps * accumulate; ++s, ++batch) graph(batch->data, batch->target);
  EXPECT_NE(graph.config().str().find("data_parallel=True"), std::string::npos);
}

double relativeDifference(const Tensor& a, const Tensor& b) {
  return (a - b).norm().item<double>() / b.norm().item<double>();
}

// Graph: an nn::Graph on a model DDP was constructed on; GraphAlone: without DDP, so the
// graph's first call must make the replicas equal itself.
enum class Mode { Eager, Traced, Graph, GraphAlone };

// Whether every rank holds the same values of `state` (their sum over the ranks is n times
// each rank's own).
std::vector<std::string> unequalOverRanks(const OrderedDict<Tensor>& state) {
  std::vector<std::string> unequal;
  for (const auto& [name, p] : state) {
    Tensor sum = p.detach().clone();
    dist::all_reduce(sum);
    if (relativeDifference(sum, p.detach() * double(dist::world_size())) > 1e-6)
      unequal.push_back(name);
  }
  return unequal;
}

// Trains with `accumulate` micro-batches per step, eagerly, or traced or as an nn::Graph on
// `backend`.
void expectEquivalentToOneProcess(int accumulate, double bucketCapMb, Mode mode = Mode::Eager,
                                  const std::string& backend = "") {
  const int n = dist::world_size(), r = dist::rank();
  manual_seed(uint64_t(100 + r));  // different weights on every rank until the broadcast
  nn::Sequential model = mlp();
  std::optional<nn::DistributedDataParallel> ddp;
  if (mode != Mode::GraphAlone) ddp.emplace(model, nn::DistributedDataParallelOptions{.bucket_cap_mb = bucketCapMb});
  nn::Sequential reference = mlp();
  reference->load_state_dict(model->state_dict());
  if (mode == Mode::GraphAlone) {
    // The replicas differ until the graph's first call; the reference starts from rank 0's.
    if (n > 1) EXPECT_EQ(unequalOverRanks(model->named_parameters()).size(), 4u);
    for (const Tensor& p : reference->parameters()) dist::broadcast(p, 0);
  }
  // Every rank's reference (and with DDP, its model) now holds rank 0's weights.
  EXPECT_EQ(unequalOverRanks(reference->named_parameters()), std::vector<std::string>{});

  const int64_t examples = int64_t(n) * kPerRankBatch * kSteps * accumulate;
  auto sampler = std::make_shared<data::DistributedSampler>(data::DistributedSamplerOptions{
      .num_replicas = size_t(n), .rank = size_t(r), .shuffle = true, .seed = 5});
  data::DataLoader perRank(dataset(examples),
                           data::DataLoaderOptions(size_t(kPerRankBatch)).sampler(sampler));
  data::DataLoader whole(dataset(examples),
                         data::DataLoaderOptions(size_t(n * kPerRankBatch)).shuffle(true).seed(5));
  switch (mode) {
    case Mode::Eager: train(model, perRank, &*ddp, accumulate); break;
    case Mode::Traced: trainTraced(model, perRank, *ddp, backend); break;
    case Mode::Graph:
    case Mode::GraphAlone: trainGraph(model, perRank, backend, bucketCapMb, accumulate); break;
  }
  const bool graph = mode == Mode::Graph || mode == Mode::GraphAlone;
  train(reference, whole, nullptr, accumulate, graph ? 0.1 / accumulate : 0.1);

  auto trained = model->named_parameters();
  for (const auto& [name, want] : reference->named_parameters()) {
    EXPECT_LT(relativeDifference(trained[name], want), 1e-5) << name << " on rank " << r;
    // The weights moved: a test where nothing trained would pass trivially.
    EXPECT_GT(relativeDifference(want, mlp()->named_parameters()[name]), 1e-2) << name;
  }
}

TEST(DistributedDataParallelTest, MatchesOneProcessWithTheWholeBatch) {
  expectEquivalentToOneProcess(1, 25);
}

TEST(DistributedDataParallelTest, SmallBucketsAndNoSyncAccumulation) {
  // 1 KiB buckets split the MLP's 4 tensors over several all_reduces.
  expectEquivalentToOneProcess(2, 1.0 / 1024);
}

// On the interpreter and compiled, with one bucket and with 256-byte buckets, which split
// the MLP into 3 (as BucketsFollowTheCapInReverseOrder shows).
void expectEquivalentOnBothBackends(Mode mode) {
  for (const char* backend : {"INTERP", "MLIR"})
    for (const double bucketCapMb : {25.0, 256.0 / (1024 * 1024)}) {
      SCOPED_TRACE(std::string(backend) + ", buckets of " + std::to_string(bucketCapMb) + " MiB");
      expectEquivalentToOneProcess(1, bucketCapMb, mode, backend);
    }
}

TEST(DistributedDataParallelTest, TracedStepMatchesOneProcess) {
  expectEquivalentOnBothBackends(Mode::Traced);
}

TEST(DistributedDataParallelTest, DataParallelGraphMatchesOneProcess) {
  expectEquivalentOnBothBackends(Mode::Graph);
}

// Without DDP, the ranks start from different weights (seeded by rank): the graph's first
// call broadcasts rank 0's parameters, so they train as one process from rank 0's.
TEST(DistributedDataParallelTest, DataParallelGraphStartsFromRankZerosParameters) {
  for (const char* backend : {"INTERP", "MLIR"}) {
    SCOPED_TRACE(backend);
    expectEquivalentToOneProcess(1, 256.0 / (1024 * 1024), Mode::GraphAlone, backend);
  }
}

TEST(DistributedDataParallelTest, DataParallelGraphWithGradientAccumulation) {
  expectEquivalentToOneProcess(2, 256.0 / (1024 * 1024), Mode::Graph, "MLIR");
}

// Each rank's gradients of `model` on its own batch, averaged over the ranks by hand.
std::vector<Tensor> meanGradients(nn::Sequential& model) {
  std::vector<Tensor> means;
  for (const Tensor& p : model->parameters()) {
    Tensor g = p.grad().clone();
    dist::all_reduce(g, dist::ReduceOp::Mean);
    means.push_back(g);
  }
  return means;
}

// A batch that differs between the ranks (and between calls, by `salt`).
std::pair<Tensor, Tensor> rankBatch(int salt) {
  manual_seed(uint64_t(1000 + 10 * dist::rank() + salt));
  return {randn({kPerRankBatch, 6}), randn({kPerRankBatch, 3})};
}

// Eager DDP starts a bucket's all_reduce inside backward(), from the post-accumulate-grad
// hook of its last gradient: seen from hooks that run after DDP's (registered later).
TEST(DistributedDataParallelTest, BackwardStartsEachBucketWhenItsGradientsAreComplete) {
  manual_seed(7);
  nn::Sequential model = mlp(), reference = mlp();
  // A bucket per parameter: the last layer's bias, its weight, the first's bias, weight.
  nn::DistributedDataParallel ddp(model, {.bucket_cap_mb = 1e-9});
  ASSERT_EQ(ddp.buckets().size(), 4u);
  reference->load_state_dict(model->state_dict());
  const std::vector<Tensor> params = model->parameters();
  size_t atLastBias = 99, atFirstWeight = 99;
  auto lastBias = autograd::register_post_accumulate_grad_hook(
      params[3], [&](const Tensor&) { atLastBias = ddp.buckets_started(); });
  auto firstWeight = autograd::register_post_accumulate_grad_hook(
      params[0], [&](const Tensor&) { atFirstWeight = ddp.buckets_started(); });

  auto [x, y] = rankBatch(0);
  mse_loss(model(x), y).backward();
  // The first layer's weight completes last: every bucket had started by then, and the
  // last layer's bias bucket had started before the first layer's were complete.
  EXPECT_EQ(atFirstWeight, 4u);
  EXPECT_GE(atLastBias, 1u);
  EXPECT_LT(atLastBias, 4u);
  EXPECT_EQ(ddp.buckets_started(), 4u);  // all in flight when backward returned
  ddp.synchronize_gradients();
  EXPECT_EQ(ddp.buckets_started(), 0u);
  mse_loss(reference(x), y).backward();
  std::vector<Tensor> want = meanGradients(reference);
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT_LT(relativeDifference(params[i].grad(), want[i]), 1e-6) << "parameter " << i;

  // Two backward passes before one synchronize: the buckets the first started are out of
  // date; the second restarts them with the sums, and the mean is of the sums.
  for (nn::Sequential* m : {&model, &reference})
    for (Tensor p : (*m)->parameters()) p.mutable_grad().zero_();
  auto [x2, y2] = rankBatch(1);
  mse_loss(model(x), y).backward();
  mse_loss(model(x2), y2).backward();
  EXPECT_EQ(ddp.buckets_started(), 4u);
  ddp.synchronize_gradients();
  mse_loss(reference(x), y).backward();
  mse_loss(reference(x2), y2).backward();
  want = meanGradients(reference);
  for (size_t i = 0; i < params.size(); ++i)
    EXPECT_LT(relativeDifference(params[i].grad(), want[i]), 1e-6) << "parameter " << i;

  // Under no_sync() backward starts nothing and synchronize does nothing.
  {
    auto noSync = ddp.no_sync();
    mse_loss(model(x), y).backward();
    EXPECT_EQ(ddp.buckets_started(), 0u);
    EXPECT_EQ(atFirstWeight, 0u);
  }
  lastBias.remove();
  firstWeight.remove();
}

TEST(DistributedDataParallelTest, BucketsFollowTheCapInReverseOrder) {
  nn::Sequential model = mlp();  // weights 16x6, 16, 3x16, 3 floats
  nn::DistributedDataParallel small(model, {.bucket_cap_mb = 256.0 / (1024 * 1024)});
  std::vector<size_t> sizes;
  for (const auto& bucket : small.buckets()) sizes.push_back(bucket.size());
  // 12 + 192 bytes fit in 256; the 64-byte bias does not join them, nor the 384-byte weight.
  EXPECT_EQ(sizes, std::vector<size_t>({2, 1, 1}));
  EXPECT_TRUE(small.buckets()[0][0].is_same(model->parameters().back()));
  nn::DistributedDataParallel one(model);
  EXPECT_EQ(one.buckets().size(), 1u);
  EXPECT_KILN_ERROR(nn::DistributedDataParallel(model, {.bucket_cap_mb = 0}), Error,
                    "kiln::nn::DistributedDataParallel: bucket_cap_mb must be positive, got 0" +
                        testing::at());
}

}  // namespace
}  // namespace kiln
