// Traced programs on a CUDA device (issue 22), under each backend that serves CUDA: INTERP
// (the device's eager kernels), MLIR (kiln-gpu-pipeline's PTX), HALIDE (Halide's CUDA
// target; where it is built in: the main GPU bundle leaves it out, docs/GPU.md) and NVRTC
// (CUDA C): fused
// elementwise chains with broadcasts (also of 2^20 elements, which MLIR gives each thread 4
// of), row kernels (softmax, log_softmax, layer_norm), reductions (also 2^20 row sums),
// matmul with a fused epilogue and a conv net's forward, traced by value and symbolically,
// each call equal to the eager run on the CPU within 1e-5 (float32; matmul within 3.2e-4,
// CudaOpsTest's product tolerance: cuBLASLt and oneDNN sum 256 products in different
// orders); moves between devices inside a trace; the MLP training step traced on the GPU
// against the same step run eagerly there, ten steps of SGD with momentum and of Adam; and
// under MLIR and HALIDE, every fused kernel launched from PTX (none left to the interpreter). Without
// a GPU every test reports SKIPPED with the reason; scripts/gpu-check.sh runs them on a GPU
// machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <utility>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "runtime/Backend.h"

namespace kiln {
namespace {

#define REQUIRE_CUDA()                                                                       \
  if (!kiln::cuda::is_available())                                                            \
  GTEST_SKIP() << "SKIPPED: no CUDA device: " << kiln::cuda::unavailable_reason()

const Device kGpu(kCUDA, 0);
// The backends serving CUDA that this binary has, saying which it lacks.
std::vector<std::string> gpuBackends() {
  std::vector<std::string> names;
  for (const char* name : {"INTERP", "MLIR", "HALIDE", "NVRTC"}) {
    if (runtime::findBackend(name)) names.push_back(name);
    else std::printf("CudaTraceTest: backend %s is not built into this binary; its cases do not run\n", name);
  }
  return names;
}
const std::vector<std::string> kBackends = gpuBackends();

// |a - b| <= tol * max(1, |b|) element by element, read on the host in double.
::testing::AssertionResult closeTo(const Tensor& actual, const Tensor& expected, double tol = 1e-5) {
  if (actual.sizes() != expected.sizes() || actual.dtype() != expected.dtype())
    return ::testing::AssertionFailure() << detail::concat(actual.dtype(), " ", actual.sizes(), ", expected ",
                                                           expected.dtype(), " ", expected.sizes());
  Tensor a = actual.detach().cpu().to(kFloat64).contiguous(), b = expected.detach().cpu().to(kFloat64).contiguous();
  const double* x = a.data_ptr<double>();
  const double* y = b.data_ptr<double>();
  for (int64_t i = 0; i < a.numel(); ++i)
    if (!(std::abs(x[i] - y[i]) <= tol * std::max(1.0, std::abs(y[i]))) && !(std::isnan(x[i]) && std::isnan(y[i])))
      return ::testing::AssertionFailure() << "element " << i << " is " << x[i] << ", expected " << y[i];
  return ::testing::AssertionSuccess();
}

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
struct Case {
  std::string name;
  std::vector<Shape> inputs;
  Fn fn;
  double tol = 1e-5;
};

std::vector<Case> cases() {
  return {
      {"elementwise_chain_with_broadcast", {{256, 1024}, {1024}},
       [](const std::vector<Tensor>& x) {
         Tensor v = (x[0] + x[1]) * 1.5;
         return std::vector<Tensor>{gelu(v) * 0.5 + tanh(v) * sigmoid(x[0])};
       }},
      {"softmax_log_softmax_rows", {{64, 1000}},
       [](const std::vector<Tensor>& x) {
         return std::vector<Tensor>{softmax(x[0], 1), log_softmax(x[0] * 2.0, 1)};
       }},
      {"layer_norm_rows", {{32, 768}, {768}, {768}},
       [](const std::vector<Tensor>& x) {
         return std::vector<Tensor>{layer_norm(x[0], {768}, x[1], x[2], 1e-5)};
       }},
      {"reductions", {{48, 300}},
       [](const std::vector<Tensor>& x) {
         return std::vector<Tensor>{sum(x[0], {0}), mean(x[0], {1}), amax(exp(x[0]) - 1.0)};
       }},
      // 2^20 elements: kiln-gpu-pipeline gives each thread 4 (gpu-pipeline-coarsen.mlir),
      // the loads first; and 2^20 row sums, whose threads each loop over a row.
      {"elementwise_chain_1m", {{1024, 1024}, {1024}},
       [](const std::vector<Tensor>& x) {
         Tensor v = (x[0] + x[1]) * 1.5;
         return std::vector<Tensor>{gelu(v, "tanh") * 0.5 + v};
       }},
      {"row_sums_1m", {{1 << 20, 3}},
       [](const std::vector<Tensor>& x) { return std::vector<Tensor>{sum(x[0], {1}), exp(x[0]) * 2.0}; }},
      {"matmul_bias_relu", {{64, 256}, {256, 128}, {128}},
       [](const std::vector<Tensor>& x) { return std::vector<Tensor>{relu(matmul(x[0], x[1]) + x[2])}; },
       3.2e-4},
  };
}

template <size_t>
using TensorArg = Tensor;

// `fn` traced as a function of `I...` tensors (jit::trace takes tensors, not a vector).
template <size_t... I>
std::function<std::vector<Tensor>(const std::vector<Tensor>&)> traceArity(Fn fn, jit::TraceOptions options,
                                                                         std::index_sequence<I...>) {
  auto traced = jit::trace([fn](TensorArg<I>... x) { return fn(std::vector<Tensor>{x...}); }, std::move(options));
  return [traced](const std::vector<Tensor>& inputs) { return traced(inputs[I]...); };
}

std::function<std::vector<Tensor>(const std::vector<Tensor>&)> traceCase(const Case& c, jit::TraceOptions options) {
  switch (c.inputs.size()) {
    case 1: return traceArity(c.fn, std::move(options), std::make_index_sequence<1>{});
    case 2: return traceArity(c.fn, std::move(options), std::make_index_sequence<2>{});
    default: return traceArity(c.fn, std::move(options), std::make_index_sequence<3>{});
  }
}

TEST(CudaTrace, EveryCaseUnderEveryGpuBackendMatchesEagerOnTheCpu) {
  REQUIRE_CUDA();
  for (const Case& c : cases())
    for (const std::string& backend : kBackends)
      for (bool symbolic : {false, true}) {
        SCOPED_TRACE(c.name + " under " + backend + (symbolic ? " (symbolic)" : " (by value)"));
        auto traced = traceCase(c, {.symbolic = symbolic, .compile = {.backend = backend}});
        for (uint64_t call = 0; call < 3; ++call) {
          manual_seed(100 + call);
          std::vector<Tensor> host, device;
          for (const Shape& shape : c.inputs) {
            host.push_back(randn(shape));
            device.push_back(host.back().to(kGpu));
          }
          std::vector<Tensor> want = c.fn(host);
          std::vector<Tensor> got;
          ASSERT_NO_THROW(got = traced(device)) << "call " << call;
          ASSERT_EQ(got.size(), want.size());
          for (size_t k = 0; k < got.size(); ++k) {
            EXPECT_EQ(got[k].device(), kGpu) << "result " << k;
            EXPECT_TRUE(closeTo(got[k], want[k], c.tol)) << "call " << call << ", result " << k;
          }
        }
      }
}

TEST(CudaTrace, AConvNetForwardUnderEveryGpuBackendMatchesEager) {
  REQUIRE_CUDA();
  manual_seed(0);
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding(1)), nn::BatchNorm2d(16), nn::ReLU(),
                     nn::MaxPool2d(2), nn::Flatten(), nn::Linear(16 * 8 * 8, 10));
  net->eval();
  nn::Sequential onGpu = net;
  Tensor x = randn({8, 3, 16, 16});
  NoGradGuard noGrad;
  Tensor want = net->forward(x);
  onGpu->to(kGpu);
  for (const std::string& backend : kBackends) {
    SCOPED_TRACE(backend);
    auto traced = jit::trace([&](Tensor input) { return onGpu->forward(input); },
                             {.compile = {.backend = backend}});
    for (int call = 0; call < 3; ++call) EXPECT_TRUE(closeTo(traced(x.to(kGpu)), want)) << "call " << call;
  }
}

// Tensors built on the CPU and moved to the program's device inside the trace (as
// cross_entropy's row offsets are) are values of the program; a move to another device
// than the program's is a TraceError naming both devices and the line.
TEST(CudaTrace, MovesInsideATraceToItsDeviceAreValuesAndOthersAreErrors) {
  REQUIRE_CUDA();
  manual_seed(3);
  Tensor host = randn({6, 5});
  Tensor want = host * arange(5).to(kFloat32) + 1.0;
  for (const std::string& backend : kBackends) {
    SCOPED_TRACE(backend);
    auto traced = jit::trace([](Tensor x) { return x * arange(5).to(kFloat32).to(x.device()) + 1.0; },
                             {.compile = {.backend = backend}});
    for (int call = 0; call < 3; ++call) {
      Tensor got = traced(host.to(kGpu));
      EXPECT_EQ(got.device(), kGpu);
      EXPECT_TRUE(closeTo(got, want)) << "call " << call;
    }
  }
  auto toHost = jit::trace([](Tensor x) { return (x * 2.0).cpu(); }, {.compile = {.backend = "MLIR"}});
  try {
    toHost(host.to(kGpu));
    FAIL() << "a move to the CPU inside a trace on cuda:0 was accepted";
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("moves a tensor to cpu"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("runs on cuda:0"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("CudaTraceTest.cpp"));
  }
  auto mixed = jit::trace([](Tensor a, Tensor b) { return a + b.to(a.device()); }, {.compile = {.backend = "MLIR"}});
  try {
    mixed(host.to(kGpu), host);
    FAIL() << "a trace with inputs on two devices was accepted";
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("input 1 of shape [6, 5] is on cpu"));
  }
}

template <class MakeOptimizer>
void expectTracedStepMatchesEager(const std::string& backend, MakeOptimizer makeOptimizer) {
  auto makeModel = [] {
    manual_seed(0);
    nn::Sequential m(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
    m->to(kGpu);
    return m;
  };
  auto step = [](nn::Sequential& model, auto& opt, const Tensor& x, const Tensor& y) {
    Tensor loss = cross_entropy(model->forward(x), y);
    opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
    opt.step();
    return loss;
  };
  manual_seed(7);
  std::vector<std::pair<Tensor, Tensor>> data;
  for (int i = 0; i < 10; ++i) data.push_back({randn({64, 784}).to(kGpu), randint(0, 10, {64}).to(kGpu)});

  nn::Sequential eager = makeModel();
  auto eagerOpt = makeOptimizer(eager);
  std::vector<float> eagerLosses;
  for (auto& [x, y] : data) eagerLosses.push_back(step(eager, eagerOpt, x, y).template item<float>());

  nn::Sequential model = makeModel();
  auto opt = makeOptimizer(model);
  auto traced = jit::trace([&](Tensor x, Tensor y) { return step(model, opt, x, y); },
                           {.compile = {.backend = backend}});
  for (size_t i = 0; i < data.size(); ++i) {
    Tensor loss = traced(data[i].first, data[i].second);
    EXPECT_EQ(loss.device(), kGpu);
    EXPECT_NEAR(loss.item<float>(), eagerLosses[i], 1e-5 * std::max(1.0f, std::fabs(eagerLosses[i])))
        << "step " << i;
  }
  EXPECT_EQ(traced.num_traces(), 1u);
  auto eagerState = eager->state_dict();
  for (const auto& [name, t] : model->state_dict()) {
    const Tensor* expected = eagerState.find(name);
    ASSERT_NE(expected, nullptr) << name;
    EXPECT_EQ(t.device(), kGpu) << name;
    EXPECT_TRUE(closeTo(t, *expected)) << name;
  }
}

TEST(CudaTrace, TheMlpTrainingStepTracedOnTheGpuMatchesEagerWithSgdAndAdam) {
  REQUIRE_CUDA();
  for (const std::string& backend : kBackends) {
    SCOPED_TRACE(backend);
    expectTracedStepMatchesEager(backend, [](nn::Sequential& m) {
      return optim::SGD(m->parameters(), optim::SGDOptions(0.05).momentum(0.9));
    });
    expectTracedStepMatchesEager(backend, [](nn::Sequential& m) {
      return optim::Adam(m->parameters(), optim::AdamOptions(1e-3));
    });
  }
}

// KILN_LOG=compile names each GPU program's fused kernels; under MLIR and HALIDE every one
// of the MLP step's is launched from the generator's PTX, none interpreted.
TEST(CudaTrace, MlirAndHalideLaunchEveryFusedKernelOfTheMlpStepFromPtx) {
  REQUIRE_CUDA();
  for (const std::string& backend : kBackends) {
    if (backend != "MLIR" && backend != "HALIDE") continue;
    SCOPED_TRACE(backend);
    manual_seed(0);
    nn::Sequential model(nn::Linear(784, 128), nn::ReLU(), nn::Linear(128, 10));
    model->to(kGpu);
    optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
    auto traced = jit::trace(
        [&](Tensor x, Tensor y) {
          Tensor loss = cross_entropy(model->forward(x), y);
          opt.zero_grad(/*set_to_none=*/true);
          loss.backward();
          opt.step();
          return loss;
        },
        {.compile = {.backend = backend}});
    Tensor x = randn({64, 784}).to(kGpu), y = randint(0, 10, {64}).to(kGpu);
    setenv("KILN_LOG", "compile", 1);
    ::testing::internal::CaptureStderr();
    traced(x, y);
    traced(x, y);
    const std::string log = ::testing::internal::GetCapturedStderr();
    unsetenv("KILN_LOG");
    std::printf("%s", log.c_str());
    EXPECT_THAT(log, ::testing::HasSubstr("for cuda:0 ("));
    EXPECT_THAT(log, ::testing::HasSubstr(" by " + backend + " in "));
    EXPECT_THAT(log, ::testing::HasSubstr(" (0 interpreted)"));
    EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("interpreted (eager kernels)")));
  }
}

}  // namespace
}  // namespace kiln
