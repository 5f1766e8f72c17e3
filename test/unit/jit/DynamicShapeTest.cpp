// Dynamic shapes (docs/ARCHITECTURE.md, "Dynamic shapes"): a traced function called with
// a second batch size is merged into one program with `?` dims that serves every later
// size without recording again, equal to eager code at every size. Each test runs on the
// reference interpreter (bit for bit: it runs the eager kernels) and compiled by MLIR
// (within the compiled tolerance).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/jit/TraceTestSupport.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using testing::sameBits;

class DynamicShapes : public ::testing::TestWithParam<const char*> {
 public:
  bool exact() const { return std::string(GetParam()) == "INTERP"; }
  jit::TraceOptions options(bool symbolic = false) const {
    jit::TraceOptions o;
    o.symbolic = symbolic;
    o.compile.backend = GetParam();
    return o;
  }
  // Interpreted: the same bits. Compiled: within 1e-5 of the largest value (the compiled
  // parity tests' bound, which polynomial exp and reassociated sums need).
  ::testing::AssertionResult agrees(const Tensor& got, const Tensor& want) const {
    if (got.sizes() != want.sizes())
      return ::testing::AssertionFailure() << "shape " << detail::concat(got.sizes()) << " against "
                                           << detail::concat(want.sizes());
    if (exact())
      return sameBits(got, want) ? ::testing::AssertionSuccess()
                                 : ::testing::AssertionFailure() << "bits differ";
    if (want.numel() == 0) return ::testing::AssertionSuccess();
    const double scale = std::max(1.0, want.abs().max().item<double>());
    const double diff = (got - want).abs().max().item<double>();
    if (diff <= 1e-5 * scale) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "differs by " << diff << " (scale " << scale << ")";
  }
  // Batch sizes for the per-size loops: every size from 1 to 257 interpreted, a spread
  // of odd, prime and power-of-two sizes compiled (each new size compiles once).
  std::vector<int64_t> sizes() const {
    std::vector<int64_t> out;
    if (exact())
      for (int64_t n = 1; n <= 257; ++n) out.push_back(n);
    else
      out = {1, 2, 3, 5, 8, 17, 31, 64, 100, 127, 128, 257};
    return out;
  }
};

// Rows of softmax and layer_norm (reductions over the last dim, broadcasts back).
TEST_P(DynamicShapes, RowKernelsServeEveryBatchSizeFromOneTrace) {
  auto f = [](Tensor x) {
    return layer_norm(softmax(x, -1) * 3.0 + x, {24}) + log_softmax(x, 1).sum(1, true);
  };
  auto traced = jit::trace(f, options());
  manual_seed(1);
  traced(randn({64, 24}));
  traced(randn({32, 24}));
  EXPECT_EQ(traced.num_traces(), 1u);  // the two recordings merged into one
  EXPECT_THAT(traced.graph_str(), HasSubstr("tensor<?x24xf32>"));
  // The first recording's program, kept for its size; the second recording merged into the
  // dynamic one before it was compiled.
  EXPECT_EQ(traced.num_compiles(), 1u);
  for (int64_t n : sizes()) {
    // The first call at a new size records again to check it (by value: the eager run,
    // which is the result); the second runs the program specialized to it.
    for (uint64_t call : {0, 1}) {
      Tensor x = testing::seededInput({n, 24}, uint64_t(n) * 2 + call);
      EXPECT_TRUE(agrees(traced(x), f(x))) << "batch " << n << ", call " << call;
    }
  }
  EXPECT_EQ(traced.num_traces(), 1u);
  // MLIR: 64's program and one for every other size. Interpreted, each new size is one
  // more program (specialized); 64 was made already, unless it left the cache of 32 shapes
  // before the loop came back to it.
  const std::vector<int64_t> all = sizes();
  const size_t known = size_t(std::count(all.begin(), all.end(), 64));
  if (exact()) {
    EXPECT_LE(traced.num_compiles(), 1 + all.size());
    EXPECT_GE(traced.num_compiles(), 1 + all.size() - known);
  } else {
    EXPECT_EQ(traced.num_compiles(), 2u);
  }
}

// Elementwise kernels and a library matmul on a `?` batch: MLIR compiles the program once
// (kernels that take their sizes at run time) and every later size only plans memory, so
// the whole loop of 257 sizes costs the first recording's compile and one more.
TEST_P(DynamicShapes, ElementwiseKernelsCompileOnceForEverySize) {
  manual_seed(3);
  Tensor w = randn({12, 7});
  auto f = [&](Tensor x) {
    Tensor y = x.matmul(w);
    return (y.relu() - y.tanh()).exp() + y * y;
  };
  auto traced = jit::trace(f, options());
  traced(randn({64, 12}));
  traced(randn({32, 12}));
  EXPECT_EQ(traced.num_traces(), 1u);
  for (int64_t n = 1; n <= 257; ++n)
    for (uint64_t call : {0, 1}) {
      Tensor x = testing::seededInput({n, 12}, uint64_t(n) * 2 + call);
      EXPECT_TRUE(agrees(traced(x), f(x))) << "batch " << n << ", call " << call;
    }
  EXPECT_EQ(traced.num_traces(), 1u);
  // MLIR: size 64's program, then one for every size. INTERP: one per size (64 is kept,
  // unless it left the cache of 32 shapes).
  if (exact()) {
    EXPECT_GE(traced.num_compiles(), 257u);
  } else {
    EXPECT_EQ(traced.num_compiles(), 2u);
  }
}

// One step of eager training (what the traced MLP steps record).
Tensor mlpStep(nn::Sequential& m, optim::SGD& o, const Tensor& x, const Tensor& y) {
  Tensor loss = cross_entropy(m->forward(x), y);
  o.zero_grad(/*set_to_none=*/true);
  loss.backward();
  o.step();
  return loss;
}

nn::Sequential makeMlp() {
  manual_seed(0);
  return nn::Sequential(nn::Linear(12, 16), nn::ReLU(), nn::Linear(16, 16), nn::ReLU(),
                        nn::Linear(16, 5));
}

// The MLP training step (cross-entropy, whose backward builds flat indices from an
// arange of the batch, and SGD with momentum) traced and run beside eager training at
// `sizes` (each twice: checked, then run), after two calls at 64 (a warm-up that makes the
// momentum, then the recording); with `namedBatch`, dim 0 of every input is named dynamic.
// Returns the trace's recordings and compiles.
std::pair<size_t, size_t> runMlpSteps(const DynamicShapes& test, bool symbolic, bool namedBatch,
                                      const std::vector<int64_t>& sizes) {
  nn::Sequential eagerModel = makeMlp(), model = makeMlp();
  optim::SGD eagerOpt(eagerModel->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  jit::TraceOptions options = test.options(symbolic);
  if (namedBatch) options.dynamic_dims = {{.input = -1, .dim = 0}};
  auto traced = jit::trace([&](Tensor x, Tensor y) { return mlpStep(model, opt, x, y); }, options);
  traced.name_module("model", model).name_optimizer("opt", opt);
  std::vector<int64_t> batches = {64, 64, 64};
  for (int64_t n : sizes) batches.insert(batches.end(), {n, n});
  for (size_t k = 0; k < batches.size(); ++k) {
    const int64_t n = batches[k];
    manual_seed(100 + k);
    Tensor x = randn({n, 12}), y = randint(0, 5, {n});
    Tensor want = mlpStep(eagerModel, eagerOpt, x, y);
    EXPECT_TRUE(test.agrees(traced(x, y), want)) << "step " << k << ", batch " << n;
    if (!test.exact()) {  // compiled steps drift apart a little: restart from eager's weights
      NoGradGuard noGrad;
      auto params = model->named_parameters(), eagerParams = eagerModel->named_parameters();
      for (auto& [name, p] : params) Tensor(p).copy_(eagerParams.at(name));
    }
  }
  if (test.exact()) {
    for (const auto& [name, p] : model->named_parameters())
      EXPECT_TRUE(sameBits(p, eagerModel->named_parameters().at(name))) << name;
  }
  EXPECT_THAT(traced.graph_str(), HasSubstr("tensor<?x12xf32>"));
  return {traced.num_traces(), traced.num_compiles()};
}

TEST_P(DynamicShapes, MlpTrainingStepServesEveryBatchSize) {
  for (bool symbolic : {false, true}) {
    SCOPED_TRACE(symbolic ? "symbolic" : "by value");
    auto [traces, compiles] = runMlpSteps(*this, symbolic, /*namedBatch=*/false, sizes());
    EXPECT_EQ(traces, 1u);
    // MLIR: 64's program; size 1, whose recording differs (a batch of one folds), its own;
    // then one program for every other size.
    if (!exact()) {
      EXPECT_EQ(compiles, 3u);
    }
  }
}

// With the batch named dynamic (TraceOptions::dynamic_dims), the first recording is
// generalized at once (a probe recorded symbolically one size up), so the first compile
// is already the program for every size: MLIR compiles the training step once.
TEST_P(DynamicShapes, NamedDynamicDimsCompileOnceFromTheFirstCall) {
  for (bool symbolic : {false, true}) {
    SCOPED_TRACE(symbolic ? "symbolic" : "by value");
    auto [traces, compiles] =
        runMlpSteps(*this, symbolic, /*namedBatch=*/true, {2, 3, 17, 64, 100, 257});
    EXPECT_EQ(traces, 1u);
    if (!exact()) {
      EXPECT_EQ(compiles, 1u);
    }
  }
}

// A conv net forward in eval mode: conv, batch norm, relu, pool, flatten, linear.
TEST_P(DynamicShapes, ConvNetForwardServesEveryBatchSize) {
  manual_seed(3);
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)), nn::BatchNorm2d(8),
                     nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Linear(8 * 4 * 4, 10));
  net->eval();
  auto traced = jit::trace([&](Tensor x) { return net->forward(x); }, options());
  traced.name_module("net", net);
  NoGradGuard noGrad;
  traced(randn({16, 3, 8, 8}));
  traced(randn({9, 3, 8, 8}));
  std::vector<int64_t> batches = exact() ? std::vector<int64_t>{1, 2, 3, 5, 7, 13, 64, 101, 257}
                                         : std::vector<int64_t>{1, 2, 7, 33, 257};
  for (int64_t n : batches)
    for (uint64_t call : {0, 1}) {
      Tensor x = testing::seededInput({n, 3, 8, 8}, uint64_t(n) * 2 + call);
      EXPECT_TRUE(agrees(traced(x), net->forward(x))) << "batch " << n << ", call " << call;
    }
  EXPECT_EQ(traced.num_traces(), 1u);
  if (!exact()) {  // 16's program, then one for every size
    EXPECT_EQ(traced.num_compiles(), 2u);
  }
}

// A conv net's training step with batch norm in training mode: its batch statistics divide
// by counts computed from the batch's size, recorded as sums of ones (not numbers), so the
// recordings at two sizes merge and one program serves every size.
TEST_P(DynamicShapes, ConvNetTrainingStepWithBatchNormServesEveryBatchSize) {
  auto makeNet = [] {
    manual_seed(4);
    return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(1)), nn::BatchNorm2d(4),
                          nn::ReLU(), nn::MaxPool2d(2), nn::Flatten(), nn::Linear(4 * 4 * 4, 5));
  };
  nn::Sequential eagerNet = makeNet(), net = makeNet();
  optim::SGD eagerOpt(eagerNet->parameters(), optim::SGDOptions(0.05));
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.05));
  auto step = [](nn::Sequential& m, optim::SGD& o, const Tensor& x, const Tensor& y) {
    Tensor loss = cross_entropy(m->forward(x), y);
    o.zero_grad(/*set_to_none=*/true);
    loss.backward();
    o.step();
    return loss;
  };
  auto traced = jit::trace([&](Tensor x, Tensor y) { return step(net, opt, x, y); }, options());
  traced.name_module("net", net).name_optimizer("opt", opt);
  std::vector<int64_t> batches = {16, 9};
  for (int64_t n : {2, 7, 33}) batches.insert(batches.end(), {n, n});
  for (size_t k = 0; k < batches.size(); ++k) {
    const int64_t n = batches[k];
    manual_seed(300 + k);
    Tensor x = randn({n, 3, 8, 8}), y = randint(0, 5, {n});
    Tensor want = step(eagerNet, eagerOpt, x, y);
    EXPECT_TRUE(agrees(traced(x, y), want)) << "step " << k << ", batch " << n;
    NoGradGuard noGrad;  // compiled steps drift apart a little: restart from eager's state
    auto eagerState = eagerNet->named_parameters();
    for (auto& [name, p] : net->named_parameters()) Tensor(p).copy_(eagerState.at(name));
    auto eagerBuffers = eagerNet->named_buffers();
    for (auto& [name, b] : net->named_buffers()) Tensor(b).copy_(eagerBuffers.at(name));
  }
  EXPECT_EQ(traced.num_traces(), 1u) << traced.graph_str();
  if (!exact()) {  // 16's program, then one for every size
    EXPECT_EQ(traced.num_compiles(), 2u);
  }
}

// Size 1 is never learnt from (two recordings one of which has a size-1 dim stay
// separate), but a dynamic recording serves it once the check at its first call passes;
// dims equal at both recordings must stay equal.
TEST_P(DynamicShapes, SizeOneIsServedAfterItsCheckAndSharedDimsStayEqual) {
  auto f = [](Tensor x, Tensor w) { return (x * w.unsqueeze(1)).sum(1); };
  auto merges = jit::trace(f, options());
  merges(ones({1, 3}), ones({1}));
  merges(ones({6, 3}), ones({6}));
  EXPECT_EQ(merges.num_traces(), 2u);  // not merged with the size-1 recording
  auto traced = jit::trace(f, options());
  traced(ones({4, 3}), ones({4}));
  traced(ones({6, 3}), ones({6}));
  EXPECT_EQ(traced.num_traces(), 1u);
  for (int64_t n : {1, 1, 9, 9}) {
    Tensor x = testing::seededInput({n, 3}, 5), w = testing::seededInput({n}, 6);
    EXPECT_TRUE(agrees(traced(x, w), f(x, w))) << n;
  }
  EXPECT_EQ(traced.num_traces(), 1u);
  // x's and w's batch dims were equal at both calls, so they are one size: a call where
  // they differ is not served (it is an error in eager code too).
  EXPECT_KILN_ERROR_HAS(traced(ones({5, 3}), ones({7})), ShapeError, "");
}

// What changes with the size other than through the inputs' dims cannot be merged, and a
// branch on a size is found when a new size is first served: each such size gets a
// recording of its own, and every result is right.
TEST_P(DynamicShapes, SizeDependentCodeIsCaughtAtEachNewSize) {
  auto f = [](Tensor x) { return x.size(0) > 40 ? x * 2.0 : x.reshape({8, -1}).sum(0); };
  jit::TraceOptions o = options();
  o.max_retraces = 16;
  auto traced = jit::trace(f, o);
  for (int64_t n : {8, 16, 48, 64, 24, 80, 24, 99, 16, 80, 99, 24}) {
    Tensor x = testing::seededInput({n, 6}, uint64_t(n));
    EXPECT_TRUE(agrees(traced(x), f(x))) << n;
  }
  // 8 and 16 reshape to [8, n*6/8], whose size is not a multiple of the batch: static.
  // 48 and 64 merged into one dynamic recording that serves 80 and 99; 24 takes the
  // other branch, which the check at its first call finds: a recording of its own.
  EXPECT_EQ(traced.num_traces(), 4u);
}

// Slices of a batch tensor along another dim (x[:, :k]) bound the batch dim by its size.
TEST_P(DynamicShapes, SlicesAlongOtherDimsServeEveryBatchSize) {
  auto f = [](Tensor x) { return x.slice(1, 0, 2) * 2.0 + x.slice(1, 2, 6, 2); };
  auto traced = jit::trace(f, options());
  traced(ones({5, 6}));
  traced(ones({8, 6}));
  EXPECT_EQ(traced.num_traces(), 1u);
  for (int64_t n : {1, 3, 3, 40, 40}) {
    Tensor x = testing::seededInput({n, 6}, uint64_t(n));
    EXPECT_TRUE(agrees(traced(x), f(x))) << n;
  }
  EXPECT_EQ(traced.num_traces(), 1u);
}

// A dynamic trace dumps as a graph with ? dims that runs at any size.
TEST_P(DynamicShapes, ADynamicTraceDumpsAndLoadsForEverySize) {
  manual_seed(4);
  nn::Linear layer(6, 3);
  jit::TraceOptions o = options();
  o.capture_as_const = true;
  auto f = [&](Tensor x) { return softmax(layer->forward(x), 1).reshape({-1}); };
  auto traced = jit::trace(f, o);
  NoGradGuard noGrad;
  traced(randn({5, 6}));
  traced(randn({7, 6}));
  ASSERT_EQ(traced.num_traces(), 1u);
  const std::string path = ::testing::TempDir() + "/dynamic_" + GetParam() + ".mlirbc";
  traced.dump(path);
  jit::LoadedGraph graph = jit::load(path, jit::CompileOptions{.backend = GetParam()});
  for (int64_t n : {2, 11, 40}) {
    Tensor x = testing::seededInput({n, 6}, uint64_t(n));
    EXPECT_TRUE(agrees(graph({x})[0], f(x))) << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, DynamicShapes, ::testing::Values("INTERP", "MLIR"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace kiln
