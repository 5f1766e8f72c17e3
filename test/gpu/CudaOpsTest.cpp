// Every op of the op table on a CUDA device against the same op on the CPU, forward and
// backward, for each dtype it takes: the op-by-op parity scripts/gpu-check.sh runs on a GPU
// machine. Without a device every test reports SKIPPED with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <string>

#include "frontend/core/cuda/Kernels.h"
#include "frontend/core/ops/OpTable.h"
#include "kiln/core/Cuda.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"

namespace kiln {
namespace {

#define REQUIRE_CUDA()                                                              \
  if (!cuda::is_available())                                                        \
  GTEST_SKIP() << "SKIPPED: no CUDA device: " << cuda::unavailable_reason()

const Device kGpu(kCUDA, 0);

enum class Values { Normal, Positive, Index };

struct Input {
  Shape shape;
  DType dtype = kFloat32;
  Values values = Values::Normal;
  int64_t bound = 0;   // indices are in [0, bound)
  bool grad = true;    // a leaf that requires grad (floating dtypes only)
  bool transposed = false;  // passed as the transpose of a contiguous tensor
};

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct Case {
  std::string name;
  std::vector<Input> inputs;
  Fn fn;
  double scale = 1.0;  // tolerance multiplier (reductions, products)
};

double tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float64: return 1e-10;
    case DType::Float32: return 2e-5;
    case DType::Float16: return 4e-3;
    case DType::BFloat16: return 3e-2;
    default: return 0;
  }
}

Tensor make(const Input& in, uint64_t seed) {
  manual_seed(seed);
  Shape shape = in.shape;
  if (in.transposed) std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
  Tensor x;
  if (in.values == Values::Index) {
    x = randint(0, in.bound, shape, in.dtype);
  } else if (isFloatingPoint(in.dtype)) {
    Tensor v = randn(shape, kFloat64);
    if (in.values == Values::Positive) v = add(abs(v), 0.25);
    x = v.to(in.dtype);
  } else if (in.dtype == kBool) {
    x = gt(randn(shape), 0.0);
  } else {
    x = randint(-9, 10, shape, in.dtype);
  }
  if (in.transposed) x = x.transpose(-1, -2);
  return x;
}

// Values of a and b agree: exactly for integers and bools, within the dtype's tolerance
// (relative to the larger magnitude, at least 1) for floats; NaN where the other has NaN.
void expectClose(const Tensor& cpu, const Tensor& gpu, double scale, const std::string& what) {
  ASSERT_EQ(cpu.sizes(), gpu.sizes()) << what;
  ASSERT_EQ(cpu.dtype(), gpu.dtype()) << what;
  ASSERT_EQ(gpu.device(), kGpu) << what;
  Tensor a = cpu.detach().contiguous().to(kFloat64), b = gpu.detach().cpu().contiguous().to(kFloat64);
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  const double tol = tolerance(cpu.dtype()) * scale;
  int64_t bad = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const bool nanA = std::isnan(pa[i]), nanB = std::isnan(pb[i]);
    bool ok = nanA || nanB ? nanA == nanB
                           : pa[i] == pb[i] || std::abs(pa[i] - pb[i]) <= tol * std::max(1.0, std::abs(pa[i]));
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << pb[i] << " on CUDA but " << pa[i]
                    << " on the CPU (tolerance " << tol << ")";
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << a.numel() << " elements differ";
}

void runCase(const Case& c, DType dtype);

// One line per case and dtype for the GPU check's log: "parity: <case> (<dtype>): PASS".
void runAndReport(const Case& c, DType dtype) {
  SCOPED_TRACE(c.name);
  const int failuresBefore = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
  std::string threw;
  try {
    runCase(c, dtype);
  } catch (const std::exception& e) {
    threw = e.what();
    ADD_FAILURE() << c.name << " (" << kiln::name(dtype) << ") threw: " << threw;
  }
  const int parts = ::testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
  bool failed = false;
  for (int i = failuresBefore; i < parts; ++i)
    failed = failed || ::testing::UnitTest::GetInstance()->current_test_info()->result()->GetTestPartResult(i).failed();
  std::printf("parity: %s (%s): %s%s\n", c.name.c_str(), std::string(kiln::name(dtype)).c_str(),
              failed ? "FAIL" : "PASS", threw.empty() ? "" : (" (" + threw.substr(0, 160) + ")").c_str());
  std::fflush(stdout);
}

// Runs `c` on both devices with the same inputs; compares outputs, then the gradients of
// sum(output * weights) for every input that requires grad.
void runCase(const Case& c, DType dtype) {
  std::vector<Tensor> cpuIn, gpuIn;
  uint64_t seed = 1000;
  for (Input in : c.inputs) {
    if (in.values != Values::Index && in.dtype == kFloat32) in.dtype = dtype;
    Tensor x = make(in, seed++);
    const bool grad = in.grad && isFloatingPoint(x.dtype());
    Tensor onGpu = x.to(kGpu).detach();
    Tensor onCpu = x.detach();
    if (grad) {
      onCpu = onCpu.clone().requires_grad_();
      onGpu = onGpu.clone().requires_grad_();
    }
    cpuIn.push_back(onCpu);
    gpuIn.push_back(onGpu);
  }
  const std::string what = c.name + " (" + std::string(kiln::name(dtype)) + ")";
  std::vector<Tensor> cpuOut, gpuOut;
  try {
    cpuOut = c.fn(cpuIn);
  } catch (const Error& e) {
    // Not for this dtype on the CPU either: CUDA must refuse it too.
    EXPECT_THROW(c.fn(gpuIn), Error) << what << " is refused on the CPU (" << e.what() << ") but not on CUDA";
    return;
  }
  gpuOut = c.fn(gpuIn);
  ASSERT_EQ(cpuOut.size(), gpuOut.size());
  Tensor cpuLoss, gpuLoss;
  for (size_t i = 0; i < cpuOut.size(); ++i) {
    expectClose(cpuOut[i], gpuOut[i], c.scale, what + " output " + std::to_string(i));
    if (!cpuOut[i].requires_grad()) continue;
    manual_seed(77 + i);
    Tensor w = randn(cpuOut[i].sizes(), kFloat64).to(cpuOut[i].dtype());
    Tensor lc = sum(mul(cpuOut[i], w)), lg = sum(mul(gpuOut[i], w.to(kGpu)));
    cpuLoss = cpuLoss.defined() ? add(cpuLoss, lc) : lc;
    gpuLoss = gpuLoss.defined() ? add(gpuLoss, lg) : lg;
  }
  if (!cpuLoss.defined()) return;
  cpuLoss.backward();
  gpuLoss.backward();
  for (size_t i = 0; i < cpuIn.size(); ++i) {
    if (!cpuIn[i].requires_grad() || !cpuIn[i].grad().defined()) continue;
    ASSERT_TRUE(gpuIn[i].grad().defined()) << what << " input " << i;
    EXPECT_EQ(gpuIn[i].grad().device(), kGpu);
    expectClose(cpuIn[i].grad(), gpuIn[i].grad(), c.scale * 4, what + " gradient of input " + std::to_string(i));
  }
}

Input in(Shape s, DType d = kFloat32) { return Input{std::move(s), d}; }
Input positive(Shape s) { return Input{std::move(s), kFloat32, Values::Positive}; }
Input index(Shape s, int64_t bound) { return Input{std::move(s), kInt64, Values::Index, bound, false}; }
Input transposedIn(Shape s) {
  Input i{std::move(s)};
  i.transposed = true;
  return i;
}

Fn one(std::function<Tensor(const std::vector<Tensor>&)> f) {
  return [f](const std::vector<Tensor>& x) { return std::vector<Tensor>{f(x)}; };
}

std::vector<Case> floatCases() {
  std::vector<Case> cases;
  auto unary = [&](std::string name, Tensor (*f)(const Tensor&, const SourceLoc&), bool pos = false) {
    cases.push_back({name, {pos ? positive({37, 29}) : in({37, 29})},
                     one([f](auto& x) { return f(x[0], SourceLoc::current()); })});
  };
  unary("neg", neg);
  unary("abs", abs);
  unary("exp", exp);
  unary("log", log, true);
  unary("sqrt", sqrt, true);
  unary("rsqrt", rsqrt, true);
  unary("tanh", tanh);
  unary("sigmoid", sigmoid);
  unary("relu", relu);
  unary("sin", sin);
  unary("cos", cos);
  unary("floor", floor);
  cases.push_back({"gelu", {in({1000})}, one([](auto& x) { return gelu(x[0]); })});
  cases.push_back({"gelu tanh", {in({1000})}, one([](auto& x) { return gelu(x[0], "tanh"); })});
  auto binary = [&](std::string name, Tensor (*f)(const Tensor&, const Tensor&, const SourceLoc&),
                    bool pos = false) {
    cases.push_back({name, {pos ? positive({33, 17}) : in({33, 17}), in({33, 17})},
                     one([f](auto& x) { return f(x[0], x[1], SourceLoc::current()); })});
    cases.push_back({name + " broadcast strided", {pos ? positive({17, 33}) : in({17, 33}), in({17})},
                     one([f](auto& x) { return f(x[0].t(), x[1].reshape({17, 1}), SourceLoc::current()); })});
  };
  binary("add", add);
  binary("sub", sub);
  binary("mul", mul);
  binary("div", div);
  binary("pow", pow, true);
  binary("maximum", maximum);
  binary("minimum", minimum);
  cases.push_back({"scalar ops", {in({64})}, one([](auto& x) { return add(mul(x[0], 3.0), 0.5); })});
  cases.push_back({"compare where", {in({40, 7}), in({40, 7})}, [](auto& x) {
                     return std::vector<Tensor>{where(lt(x[0], x[1]), x[0], mul(x[1], 2.0)), eq(x[0], x[0]),
                                                ge(x[0], 0.0), logical_not(gt(x[1], 0.0)),
                                                logical_and(gt(x[0], 0.0), lt(x[1], 0.0)),
                                                logical_or(gt(x[0], 0.0), lt(x[1], 0.0))};
                   }});
  cases.push_back({"convert", {in({50})}, [](auto& x) {
                     return std::vector<Tensor>{x[0].to(kFloat64), x[0].to(kHalf), x[0].to(kBFloat16),
                                                mul(x[0], 10.0).to(kInt32), x[0].to(kInt64), x[0].to(kBool)};
                   }});
  cases.push_back({"views", {in({6, 5, 4})}, [](auto& x) {
                     Tensor v = x[0].permute({2, 0, 1}).slice(1, 1, 6, 2).reshape({4, 3, 5});
                     return std::vector<Tensor>{v.contiguous(), x[0].narrow(2, 1, 2).clone(),
                                                x[0].unsqueeze(0).expand({3, 6, 5, 4}).contiguous()};
                   }});
  cases.push_back({"cat", {in({3, 4}), in({5, 4}), in({4, 2})}, one([](auto& x) {
                     return cat({cat({x[0], x[1]}, 0), x[2].t().slice(0, 0, 1).expand({8, 4})}, 1);
                   })});
  cases.push_back({"sum dims", {in({7, 9, 11})}, [](auto& x) {
                     return std::vector<Tensor>{sum(x[0], {1}), sum(x[0], {0, 2}, true), sum(x[0])};
                   }, 4});
  cases.push_back({"sum large", {in({1 << 20})}, one([](auto& x) { return sum(x[0]); }), 200});
  cases.push_back({"sum rows", {in({4096, 512})}, one([](auto& x) { return sum(x[0], {1}); }), 20});
  cases.push_back({"sum columns", {in({512, 4096})}, one([](auto& x) { return sum(x[0], {0}); }), 20});
  cases.push_back({"mean amax amin prod", {in({13, 31})}, [](auto& x) {
                     return std::vector<Tensor>{mean(x[0], {1}), amax(x[0], {0}), amin(x[0]),
                                                prod(x[0].slice(1, 0, 6), {1})};
                   }, 8});
  cases.push_back({"argmax", {in({13, 31})}, [](auto& x) {
                     return std::vector<Tensor>{argmax(x[0], 1), argmin(x[0], 0)};
                   }});
  cases.push_back({"softmax log_softmax", {in({32, 100})}, [](auto& x) {
                     return std::vector<Tensor>{softmax(x[0], 1), log_softmax(x[0], 0)};
                   }, 4});
  cases.push_back({"layer_norm", {in({16, 64}), in({64}), in({64})},
                   one([](auto& x) { return layer_norm(x[0], {64}, x[1], x[2]); }), 8});
  cases.push_back({"take gather index_add", {in({10, 6}), index({7}, 10), index({10, 3}, 6)}, [](auto& x) {
                     return std::vector<Tensor>{take(x[0], x[1], 0), gather(x[0], 1, x[2]),
                                                embedding(x[0], x[1].reshape({7, 1}))};
                   }});
  cases.push_back({"cross_entropy", {in({32, 10}), index({32}, 10)},
                   one([](auto& x) { return cross_entropy(x[0], x[1]); }), 8});
  cases.push_back({"mm", {in({33, 65}), in({65, 17})}, one([](auto& x) { return matmul(x[0], x[1]); }), 16});
  cases.push_back({"mm transposed", {transposedIn({33, 65}), transposedIn({65, 17})},
                   one([](auto& x) { return matmul(x[0], x[1]); }), 16});
  cases.push_back({"bmm", {in({3, 20, 30}), in({3, 30, 10})}, one([](auto& x) { return bmm(x[0], x[1]); }), 16});
  cases.push_back({"addmm relu", {in({17}), in({9, 40}), in({40, 17})},
                   one([](auto& x) { return relu(addmm(x[0], x[1], x[2])); }), 16});
  cases.push_back({"linear batch", {in({64, 784}), in({128, 784}), in({128})},
                   one([](auto& x) { return addmm(x[2], x[0], x[1].t()); }), 64});
  cases.push_back({"conv2d", {in({2, 3, 11, 9}), in({8, 3, 3, 3}), in({8})},
                   one([](auto& x) { return conv2d(x[0], x[1], x[2], {1}, {1}); }), 16});
  cases.push_back({"conv2d strided grouped dilated", {in({2, 4, 13, 12}), in({6, 2, 3, 2})},
                   one([](auto& x) { return conv2d(x[0], x[1], Tensor(), {2, 1}, {1, 0}, {2, 1}, 2); }), 16});
  cases.push_back({"conv2d depthwise", {in({2, 8, 10, 10}), in({8, 1, 3, 3})},
                   one([](auto& x) { return conv2d(x[0], x[1], Tensor(), {2}, {1}, {1}, 8); }), 16});
  cases.push_back({"max_pool2d avg_pool2d", {in({2, 3, 9, 8})}, [](auto& x) {
                     return std::vector<Tensor>{max_pool2d(x[0], {3, 3}, {2, 2}, {1, 1}), avg_pool2d(x[0], {2, 2}),
                                                adaptive_avg_pool2d(x[0], {1, 1})};
                   }, 4});
  cases.push_back({"batch_norm training", {in({8, 4, 5, 5}), in({4}), in({4})}, one([](auto& x) {
                     Tensor rm = zeros({4}, TensorOptions(x[0].dtype()).device(x[0].device()));
                     Tensor rv = ones({4}, TensorOptions(x[0].dtype()).device(x[0].device()));
                     return batch_norm(x[0], rm, rv, x[1], x[2], true);
                   }), 16});
  return cases;
}

// One test per dtype, declared (so run) before the coverage check at the end.
void floatParity(DType dtype) {
  for (const Case& c : floatCases()) runAndReport(c, dtype);
}
TEST(CudaOps, Float32MatchesTheCpu) { REQUIRE_CUDA(); floatParity(kFloat32); }
TEST(CudaOps, Float64MatchesTheCpu) { REQUIRE_CUDA(); floatParity(kFloat64); }
TEST(CudaOps, Float16MatchesTheCpu) { REQUIRE_CUDA(); floatParity(kFloat16); }
TEST(CudaOps, BFloat16MatchesTheCpu) { REQUIRE_CUDA(); floatParity(kBFloat16); }

// Integer and bool dtypes through the ops that take them.
TEST(CudaOpsIntegral, MatchTheCpu) {
  REQUIRE_CUDA();
  for (DType dtype : {kInt32, kInt64}) {
    std::vector<Case> cases{
        {"int arithmetic", {in({40, 3}, dtype), in({40, 3}, dtype)}, [](auto& x) {
           return std::vector<Tensor>{add(x[0], x[1]), sub(x[0], x[1]), mul(x[0], x[1]), neg(x[0]), abs(x[0]),
                                      relu(x[0]), maximum(x[0], x[1]), minimum(x[0], x[1]),
                                      pow(x[0], abs(x[1]).slice(0, 0, 40)), lt(x[0], x[1]), x[0].to(kFloat32),
                                      sum(x[0], {0}), amax(x[0], {1}), prod(x[0].slice(0, 0, 5), {0})};
         }},
        {"int cat take", {in({6, 3}, dtype), index({4}, 6)}, [](auto& x) {
           return std::vector<Tensor>{cat({x[0], x[0]}, 1), take(x[0], x[1], 0), x[0].t().contiguous()};
         }},
    };
    for (const Case& c : cases) runAndReport(c, dtype);
  }
  Tensor b = gt(randn({30}), 0.0);
  expectClose(logical_not(b), logical_not(b.to(kGpu)), 1, "bool not");
  expectClose(add(b, b), add(b.to(kGpu), b.to(kGpu)), 1, "bool add");
  expectClose(where(b, b, logical_not(b)), where(b.to(kGpu), b.to(kGpu), logical_not(b.to(kGpu))), 1, "bool where");
}

TEST(CudaFactories, SameValuesOnEveryDevice) {
  REQUIRE_CUDA();
  manual_seed(5);
  Tensor a = randn({1000});
  manual_seed(5);
  Tensor b = randn({1000}, kCUDA);
  EXPECT_EQ(b.device(), kGpu);
  expectClose(a, b, 0, "randn");
  expectClose(full({3, 4}, 2.5, kFloat64), full({3, 4}, 2.5, TensorOptions(kFloat64).device(kCUDA)), 0, "full");
  expectClose(zeros({5}, kInt64), zeros({5}, TensorOptions(kInt64).device(kCUDA)), 0, "zeros");
  const Tensor expected = arange(0.0, 10.0, 0.5);
  Tensor r;
  {
    detail::FactoryDeviceGuard onGpu(kGpu);  // as inside ops on CUDA tensors
    r = arange(0.0, 10.0, 0.5);
  }
  EXPECT_EQ(r.device(), kGpu);
  expectClose(expected, r, 0, "arange");
  // The rng op itself with its key on the device (a traced program's state would be): the
  // same samples and the same next key as with the key on the CPU.
  const Attrs attrs{{"distribution", std::string("normal")}, {"shape", Shape{300}}, {"dtype", kFloat32},
                    {"a", 0.0}, {"b", 1.0}};
  const Tensor key = tensor(std::vector<int64_t>{42, 7});
  std::vector<Tensor> onCpu = dispatch(ops::kRng, {key}, attrs, SourceLoc::current());
  std::vector<Tensor> onGpu = dispatch(ops::kRng, {key.cuda()}, attrs, SourceLoc::current());
  expectClose(onCpu[0], onGpu[0], 0, "rng samples");
  expectClose(onCpu[1], onGpu[1], 0, "rng next key");
  manual_seed(9);
  Tensor m = bernoulli({500}, 0.3);
  manual_seed(9);
  expectClose(m, bernoulli({500}, 0.3, kCUDA), 0, "bernoulli");
}

bool isCollective(const OpDef& op) {
  return &op == &ops::kAllReduce || &op == &ops::kAllReduceStart || &op == &ops::kWait;
}

// Every op of the table with a kernel has run on the device in the suites above (gtest
// runs plain TESTs in the order they are declared; this one is last). The collectives are
// the exception: they need an MPI job, and kiln::distributed stages CUDA tensors through
// the host.
TEST(CudaZCoverage, EveryOpWithAKernelRanOnTheDevice) {
  REQUIRE_CUDA();
  std::set<std::string> ran = cuda::opsRun();
  std::string missing;
  for (const OpDef* op : ops::allOps())
    if (op->kernel && !isCollective(*op) && !ran.count(std::string(op->name))) missing += " " + std::string(op->name);
  EXPECT_EQ(missing, "") << "ops that never ran on CUDA:" << missing;
  std::printf("%zu ops of the table ran on %s (%s)\n", ran.size(), cuda::device_name().c_str(),
              cuda::device_arch().c_str());
}

}  // namespace
}  // namespace kiln
