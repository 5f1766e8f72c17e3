// jit::trace end to end on small functions: by value and symbolic, state by reference and
// state updates, retraces and their limits, value reads, and the errors of each path.
#include "kiln/jit/Trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <tuple>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/jit/TraceTestSupport.h"

namespace kiln {
namespace {

using testing::sameBits;
using ::testing::HasSubstr;

Tensor input(Shape shape, uint64_t seed) { return testing::seededInput(std::move(shape), seed); }

struct Affine {
  Tensor w = input({4, 3}, 1);
  Tensor b = input({3}, 2);
  Tensor operator()(const Tensor& x) const { return relu(add(matmul(x, w), b)); }
};

class TraceModes : public ::testing::TestWithParam<bool> {};

TEST_P(TraceModes, LaterCallsRunTheRecordingBitwiseAsEager) {
  Affine f;
  auto traced = jit::trace([&](Tensor x) { return f(x); }, {.symbolic = GetParam()});
  for (uint64_t seed : {10, 11, 12}) {
    Tensor x = input({2, 4}, seed);
    EXPECT_TRUE(sameBits(traced(x), f(x))) << "seed " << seed;
  }
  EXPECT_EQ(traced.num_traces(), 1u);
  std::string ir = traced.graph_str();
  EXPECT_THAT(ir, HasSubstr("kiln.input = 0"));
  EXPECT_THAT(ir, HasSubstr("kiln.state = \"state.0\""));
  EXPECT_THAT(ir, HasSubstr("kiln.matmul"));
  EXPECT_THAT(ir, HasSubstr("kiln.output = 0"));
}

TEST_P(TraceModes, StateIsBoundByReference) {
  Affine f;
  auto traced = jit::trace([&](Tensor x) { return f(x); }, {.symbolic = GetParam()});
  Tensor x = input({2, 4}, 10);
  traced(x);
  {
    NoGradGuard noGrad;
    f.w.mul_(2.0);  // later calls see the new weights
  }
  EXPECT_TRUE(sameBits(traced(x), f(x)));
}

TEST_P(TraceModes, InPlaceWritesToStateAreAppliedAfterEachCall) {
  Tensor count = zeros({1});
  auto traced = jit::trace(
      [&](Tensor x) {
        count.add_(1.0);
        return add(x, count);
      },
      {.symbolic = GetParam()});
  Tensor x = zeros({1});
  for (float expected : {1.0f, 2.0f, 3.0f}) {
    EXPECT_EQ(traced(x).item<float>(), expected);
    EXPECT_EQ(count.item<float>(), expected);
  }
  EXPECT_THAT(traced.graph_str(), HasSubstr("kiln.state_update = \"state.0\""));
}

TEST_P(TraceModes, TuplesVectorsAndVoid) {
  auto pair = jit::trace([](Tensor a, Tensor b) { return std::make_tuple(add(a, b), mul(a, b)); },
                         {.symbolic = GetParam()});
  Tensor a = input({3}, 1), b = input({3}, 2);
  for (int call = 0; call < 2; ++call) {
    auto [s, p] = pair(a, b);
    EXPECT_TRUE(sameBits(s, add(a, b)));
    EXPECT_TRUE(sameBits(p, mul(a, b)));
  }
  auto list = jit::trace([](Tensor a) { return std::vector<Tensor>{exp(a), neg(a), a}; },
                         {.symbolic = GetParam()});
  for (int call = 0; call < 2; ++call) {
    std::vector<Tensor> out = list(a);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_TRUE(sameBits(out[0], exp(a)));
    EXPECT_TRUE(sameBits(out[2], a));
  }
  Tensor sink = zeros({3});
  auto effect = jit::trace([&](Tensor a) { sink.copy_(mul(a, 2.0)); }, {.symbolic = GetParam()});
  effect(a);
  effect(b);
  EXPECT_TRUE(sameBits(sink, mul(b, 2.0)));
}

TEST_P(TraceModes, NewShapesAndStaticArgumentsRetrace) {
  auto traced = jit::trace([](Tensor x, int power) {
    Tensor y = x;
    for (int i = 1; i < power; ++i) y = mul(y, x);
    return y;
  }, {.symbolic = GetParam(), .automatic_dynamic = false});  // a new shape records again
  Tensor x = input({2}, 1);
  EXPECT_TRUE(sameBits(traced(x, 2), mul(x, x)));
  EXPECT_TRUE(sameBits(traced(x, 3), mul(mul(x, x), x)));
  EXPECT_TRUE(sameBits(traced(input({5}, 2), 2), mul(input({5}, 2), input({5}, 2))));
  EXPECT_TRUE(sameBits(traced(x, 2), mul(x, x)));  // cached
  EXPECT_EQ(traced.num_traces(), 3u);
}

// MegEngine's exclude_from_trace example: add 1, then 1 more when a host counter is even.
TEST_P(TraceModes, ExcludedBlocksRunOnEveryCall) {
  int count = 0;
  auto traced = jit::trace(
      [&](Tensor x) {
        x = add(x, 1.0);
        return jit::exclude_from_trace(
            [&count](const Tensor& y) { return count++ % 2 == 0 ? add(y, 1.0) : y; }, x);
      },
      {.symbolic = GetParam()});
  std::vector<float> printed;
  for (int call = 0; call < 3; ++call) printed.push_back(traced(ones({1})).item<float>());
  EXPECT_EQ(printed, (std::vector<float>{3, 2, 3}));
  EXPECT_EQ(count, 3);
  EXPECT_EQ(traced.num_traces(), 1u);
  EXPECT_THAT(traced.graph_str(), HasSubstr("kiln.callback(%"));
}

TEST_P(TraceModes, ExcludedBlocksMayReturnNothingOrSeveralTensors) {
  std::vector<float> seen;
  auto traced = jit::trace(
      [&](Tensor x) {
        jit::exclude_from_trace([&seen](const Tensor& t) { seen.push_back(t.item<float>()); }, x);
        auto [a, b] = jit::exclude_from_trace(
            [](const Tensor& t) { return std::make_tuple(neg(t), mul(t, 2.0)); }, x);
        return add(a, b);
      },
      {.symbolic = GetParam()});
  EXPECT_EQ(traced(full({1}, 5.0)).item<float>(), 5.0f);
  EXPECT_EQ(traced(full({1}, 7.0)).item<float>(), 7.0f);
  EXPECT_EQ(seen, (std::vector<float>{5, 7}));  // reads inside are allowed, every call
}

TEST(TraceTest, ExcludeFromTraceOutsideATraceJustRuns) {
  Tensor y = jit::exclude_from_trace([](const Tensor& t) { return neg(t); }, ones({1}));
  EXPECT_EQ(y.item<float>(), -1.0f);
}

// A symbolic trace's views have the strides eager views have: contiguous() of a transposed
// input records the copy eager code makes, and view() of it is the error eager code gets
// (issue 19, kiln-fuzz seed 108071: placeholders were always contiguous before).
TEST_P(TraceModes, ViewsHaveEagerStrides) {
  auto layout = jit::trace(
      [](Tensor x) {
        Tensor t = x.transpose(0, 1);
        EXPECT_FALSE(t.is_contiguous());
        EXPECT_TRUE(t.contiguous().is_contiguous());
        EXPECT_TRUE(x.slice(1, 0, 3, 2).strides() == (Strides{4, 2}));
        return t.contiguous();
      },
      {.symbolic = GetParam()});
  Tensor x = testing::seededInput({3, 4}, 5);
  EXPECT_TRUE(sameBits(layout(x), x.transpose(0, 1).contiguous()));
  EXPECT_THAT(layout.graph_str(), HasSubstr("kiln.reshape"));  // the copy contiguous() made
  auto viewed = jit::trace([](Tensor x) { return x.transpose(0, 1).view({12}); },
                           {.symbolic = GetParam()});
  EXPECT_THROW(viewed(x), ShapeError);
}

INSTANTIATE_TEST_SUITE_P(ByValueAndSymbolic, TraceModes, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Symbolic" : "ByValue"; });

TEST(TraceTest, RetraceReasonsAreLoggedWithKilnLogRetrace) {
  setenv("KILN_LOG", "compile,retrace", 1);
  auto traced = jit::trace([](Tensor x) { return neg(x); });
  traced(zeros({64, 784}));
  ::testing::internal::CaptureStderr();
  traced(zeros({32, 784}));
  std::string log = ::testing::internal::GetCapturedStderr();
  unsetenv("KILN_LOG");
  EXPECT_THAT(log, HasSubstr("kiln: retrace 'main' (2 traces): input 0 shape [64, 784] → [32, 784]"));
}

TEST(TraceTest, TooManyRetracesFailWithTheHistory) {
  auto traced = jit::trace([](Tensor x) { return neg(x); }, {.name = "f", .max_retraces = 1});
  traced(zeros({1}));
  traced(zeros({2}));
  EXPECT_KILN_ERROR_HAS(traced(zeros({3})), TraceError,
                        "'f' would retrace a 2th time (max_retraces = 1) because input 0 shape "
                        "[2] → [3]; earlier retraces:\n  retrace 1: input 0 shape [1] → [2]");
}

TEST(TraceTest, FallbackToEagerPastTheLimit) {
  auto traced = jit::trace([](Tensor x) { return neg(x); },
                           {.max_retraces = 0, .fallback_to_eager = true});
  traced(zeros({1}));
  Tensor x = input({2}, 3);
  EXPECT_TRUE(sameBits(traced(x), neg(x)));
  EXPECT_EQ(traced.num_traces(), 1u);
}

TEST(TraceTest, ByValueReadsWarnOnceAndBakeTheValueIn) {
  Tensor scale = full({}, 3.0);
  auto traced = jit::trace([&](Tensor x) { return mul(x, scale.item<float>()); });
  ::testing::internal::CaptureStderr();
  traced(ones({1}));
  std::string warning = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(warning, HasSubstr("kiln: warning: the trace bakes in the value item reads here"));
  EXPECT_THAT(warning, HasSubstr("TraceTest.cpp"));
  scale.fill_(5.0);
  EXPECT_EQ(traced(ones({1})).item<float>(), 3.0f);  // baked in
}

TEST(TraceTest, SymbolicReadsAreErrorsNamingTheWaysOut) {
  auto traced = jit::trace([](Tensor x) { return mul(x, sum(x).item<float>()); },
                           {.symbolic = true});
  EXPECT_KILN_ERROR_HAS(traced(ones({2})), TraceError,
                        "while tracing symbolically: it is a placeholder. Trace with symbolic = "
                        "false to bake the value in, or move the read into "
                        "jit::exclude_from_trace");
}

TEST(TraceTest, WritingAnInputInPlaceIsAnError) {
  auto traced = jit::trace([](Tensor x) { return x.mul_(2.0); });
  EXPECT_KILN_ERROR_HAS(traced(ones({2})), TraceError,
                        "the traced function writes its input 0 (shape [2]) in place");
}

TEST(TraceTest, WritingThroughAViewIsAnError) {
  Tensor state = zeros({2, 2});
  auto traced = jit::trace([&](Tensor x) {
    Tensor row = state.reshape({4});
    row.add_(x);
    return row;
  });
  EXPECT_KILN_ERROR_HAS(traced(ones({4})), TraceError,
                        "in-place write to a tensor of shape [4] that shares memory with state "
                        "'state.0'");
  auto local = jit::trace([](Tensor x) {  // views made inside the trace: the alias group
    Tensor y = mul(x, 1.0);
    Tensor row = y.reshape({4});
    row.add_(1.0);
    return y;
  });
  EXPECT_KILN_ERROR_HAS(local(ones({2, 2})), TraceError,
                        "in-place write to a tensor of shape [4] that shares memory with a live "
                        "view of shape [2, 2]");
}

TEST(TraceTest, WritingStateThatSharesMemoryWithOtherStateIsAnError) {
  Tensor base = zeros({3, 4});
  Tensor flat = base.reshape({12});  // made outside: the trace sees two state tensors
  auto viaView = jit::trace([&](Tensor x) {
    flat.add_(1.0);
    return add(base, x);
  });
  EXPECT_KILN_ERROR_HAS(viaView(ones({3, 4})), TraceError,
                        "reads a tensor of shape [3, 4] that shares memory with state 'state.0', "
                        "which it wrote earlier");
  Tensor s = zeros({3});
  auto viaDetach = jit::trace([&](Tensor x) {
    Tensor d = s.detach();  // s not read yet: d and s become separate state
    d.add_(x);
    return s.clone();
  });
  EXPECT_KILN_ERROR_HAS(viaDetach(ones({3})), TraceError, "that shares memory with state");
  Tensor t = zeros({3});
  auto readAfterWrite = jit::trace([&](Tensor x) {
    t.add_(x);
    return t.detach().reshape({3, 1});  // a new alias of the written memory
  });
  EXPECT_NO_THROW(readAfterWrite(ones({3})));  // the alias is bound to the written value
}

TEST(TraceTest, ReseedingInsideATraceIsAnError) {
  auto traced = jit::trace([](Tensor x) {
    manual_seed(5);
    return add(x, rand({3}));
  });
  EXPECT_KILN_ERROR_HAS(traced(ones({3})), TraceError,
                        "kiln::manual_seed: cannot reseed the generator inside a traced function");
}

TEST(TraceTest, OneTensorAsTwoInputsOrAsInputAndState) {
  auto twice = jit::trace([](Tensor a, Tensor b) { return add(a, mul(b, 2.0)); });
  Tensor x = input({3}, 1), a = input({3}, 2), b = input({3}, 3);
  twice(x, x);
  EXPECT_TRUE(sameBits(twice(a, b), add(a, mul(b, 2.0))));
  Tensor w = input({3}, 4);
  auto withState = jit::trace([&](Tensor v) { return mul(v, add(w, 1.0)); });
  withState(w);
  EXPECT_TRUE(sameBits(withState(a), mul(a, add(w, 1.0))));
}

TEST(TraceTest, CapturedConstantsCannotBeUpdated) {
  Tensor count = zeros({1});
  auto traced = jit::trace([&](Tensor x) { return add(x, count.add_(1.0)); },
                           {.capture_as_const = true});
  EXPECT_KILN_ERROR_HAS(traced(ones({1})), TraceError,
                        "writes state 'state.0' (shape [1]) in place, but capture_as_const made "
                        "it a constant");
}

TEST(TraceTest, CaptureAsConstBakesStateIn) {
  Tensor w = full({1}, 2.0);
  auto traced = jit::trace([&](Tensor x) { return mul(x, w); }, {.capture_as_const = true});
  traced(ones({1}));
  w.fill_(7.0);
  EXPECT_EQ(traced(ones({1})).item<float>(), 2.0f);
  EXPECT_THAT(traced.graph_str(), ::testing::Not(HasSubstr("kiln.state")));
}

TEST(TraceTest, StateReplacedByAnotherShapeIsAnError) {
  Tensor w = ones({2});
  auto traced = jit::trace([&](Tensor x) { return mul(x, w); });
  traced(ones({2}));
  *w.impl() = *ones({3}).impl();  // what Module::to-style replacement of contents does
  EXPECT_KILN_ERROR_HAS(traced(ones({2})), TraceError,
                        "state 'state.0' was float32 of shape [2] when traced and is now float32 "
                        "of shape [3]");
}

TEST(TraceTest, KilnJitBackendSelectsTheEngine) {
  for (const char* backend : {"INTERP", "MLIR"}) {
    setenv("KILN_JIT_BACKEND", backend, 1);
    auto traced = jit::trace([](Tensor x) { return neg(x); });
    traced(ones({1}));
    EXPECT_EQ(traced(ones({1})).item<float>(), -1.0f) << backend;
  }
  setenv("KILN_JIT_BACKEND", "NVRTC", 1);  // CUDA only
  auto onCpu = jit::trace([](Tensor x) { return neg(x); });
  EXPECT_KILN_ERROR_HAS(
      {
        onCpu(ones({1}));
        onCpu(ones({1}));
      },
      CompileError, "backend NVRTC does not run programs on cpu; backends for cpu: INTERP (");
  setenv("KILN_JIT_BACKEND", "TPU", 1);
  EXPECT_KILN_ERROR_HAS(jit::trace([](Tensor x) { return neg(x); }), CompileError,
                        "trace: KILN_JIT_BACKEND=TPU names no backend; available: INTERP (");
  unsetenv("KILN_JIT_BACKEND");
}

// CompileOptions::backend names the backend for one trace, over KILN_JIT_BACKEND.
TEST(TraceTest, CompileOptionsNameTheBackendForOneTrace) {
  setenv("KILN_JIT_BACKEND", "TPU", 1);  // not read: the option wins
  jit::TraceOptions options;
  options.compile.backend = "INTERP";
  auto traced = jit::trace([](Tensor x) { return neg(x); }, options);
  traced(ones({1}));
  EXPECT_EQ(traced(ones({1})).item<float>(), -1.0f);
  unsetenv("KILN_JIT_BACKEND");
  options.compile.backend = "CUDNN";
  EXPECT_KILN_ERROR_HAS(jit::trace([](Tensor x) { return neg(x); }, options), CompileError,
                        "CompileOptions::backend=CUDNN names no backend; available: INTERP (");
}

// Unset, KILN_JIT_BACKEND means MLIR: the recording is compiled (or loaded from the disk
// cache); INTERP runs it on the interpreter.
TEST(TraceTest, TracesCompileByDefault) {
  unsetenv("KILN_JIT_BACKEND");
  setenv("KILN_LOG", "compile", 1);
  auto compiledLog = [](const char* backend) {
    if (backend) setenv("KILN_JIT_BACKEND", backend, 1);
    auto traced = jit::trace([](Tensor x) { return neg(x); });
    ::testing::internal::CaptureStderr();
    traced(ones({3}));
    Tensor y = traced(ones({3}));
    std::string log = ::testing::internal::GetCapturedStderr();
    unsetenv("KILN_JIT_BACKEND");
    EXPECT_TRUE(sameBits(y, neg(ones({3}))));
    return log;
  };
  const std::string byDefault = compiledLog(nullptr);
  EXPECT_THAT(byDefault, ::testing::ContainsRegex("kiln: (compiled|loaded) @main"));
  EXPECT_THAT(compiledLog("INTERP"), ::testing::Not(HasSubstr("@main")));
  unsetenv("KILN_LOG");
}

// A compiled training step writes the new gradients into the old ones when nothing but
// the parameter holds them (eager code would free them at zero_grad), and leaves alone a
// gradient the caller kept.
TEST(TraceTest, CompiledStepsReuseGradientsNobodyElseHolds) {
  unsetenv("KILN_JIT_BACKEND");
  manual_seed(0);
  nn::Linear layer(4, 3);
  optim::SGD opt(layer->parameters(), optim::SGDOptions(0.1));
  auto step = jit::trace([&](Tensor x) {
    Tensor loss = sum(layer->forward(x));
    opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
    opt.step();
    return loss;
  });
  Tensor x = randn({2, 4});
  for (int i = 0; i < 3; ++i) step(x);  // warm-up, record, run compiled
  const void* gradient = layer->weight.grad().rawData();
  step(x);
  EXPECT_EQ(layer->weight.grad().rawData(), gradient);
  EXPECT_TRUE(sameBits(layer->weight.grad(), matmul(ones({3, 2}), x)));

  Tensor kept = layer->weight.grad();
  Tensor before = kept.clone();
  Tensor other = randn({2, 4});
  step(other);
  EXPECT_NE(layer->weight.grad().rawData(), kept.rawData());
  EXPECT_TRUE(sameBits(kept, before));
  EXPECT_TRUE(sameBits(layer->weight.grad(), matmul(ones({3, 2}), other)));
}

// backward() without zero_grad() adds to the existing gradients, traced as eagerly: a
// recording made while a .grad was missing is not reused once it exists (and the other
// way round), and a .grad the program adds to is updated where it is bound.
TEST(TraceTest, GradientsAccumulateAcrossTracedCalls) {
  manual_seed(0);
  Tensor w = randn({3, 4}).requires_grad_();
  Tensor we = w.detach().clone().requires_grad_();
  Tensor x = randn({2, 3});
  auto backward = jit::trace([&](Tensor in) {
    Tensor loss = sum(matmul(in, w));
    loss.backward();
    return loss;
  });
  setenv("KILN_LOG", "retrace", 1);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 4; ++i) {
    backward(x);
    sum(matmul(x, we)).backward();
  }
  std::string log = ::testing::internal::GetCapturedStderr();
  unsetenv("KILN_LOG");
  EXPECT_LT(amax(abs(sub(w.grad(), we.grad()))).item<float>(), 1e-5f);
  EXPECT_EQ(backward.num_traces(), 2u);  // without a .grad, then adding to it
  EXPECT_THAT(log, HasSubstr("the .grad of 'state.0' now exists"));

  // zero_grad(set_to_none) outside the traced function: each call makes a fresh gradient
  // again, with the first recording.
  w.mutable_grad() = Tensor();
  backward(x);
  EXPECT_EQ(backward.num_traces(), 2u);
  EXPECT_LT(amax(abs(sub(w.grad(), matmul(x.transpose(0, 1), ones({2, 4}))))).item<float>(),
            1e-5f);
}

// mutable_grad() inside a traced function: clearing the slot and writing the gradient in
// place are recorded with the rest, so every call leaves the .grad eager code leaves. The
// trace keys on the .grad the slot held when the call began (once none, then one), not
// on what the function left there; it used to see the cleared slot at its first read
// of w and retrace on every call.
TEST(TraceTest, MutableGradInsideATracedFunction) {
  manual_seed(0);
  Tensor w = randn({3, 4}).requires_grad_();
  Tensor we = w.detach().clone().requires_grad_();
  auto body = [](Tensor& weight, const Tensor& in) {
    weight.mutable_grad() = Tensor();
    Tensor loss = sum(matmul(in, weight));
    loss.backward();
    weight.mutable_grad().mul_(0.5);
    return loss;
  };
  auto step = jit::trace([&](Tensor in) { return body(w, in); });
  for (int i = 0; i < 4; ++i) {
    Tensor x = randn({2, 3});
    step(x);
    body(we, x);
    ASSERT_TRUE(w.grad().defined()) << i;
    EXPECT_LT(amax(abs(sub(w.grad(), we.grad()))).item<float>(), 1e-5f) << i;
  }
  EXPECT_EQ(step.num_traces(), 2u);
}

// CompileOptions reach the compiler: without fusion the elementwise chain is one eager
// host op per op instead of one fused kernel, with the same result; a bound below 2 on a
// fused kernel's inputs is an error naming the option.
TEST(TraceTest, CompileOptionsReachTheCompiler) {
  unsetenv("KILN_JIT_BACKEND");
  auto chain = [](Tensor x) { return mul(exp(neg(x)), 2.0); };
  auto compileLine = [&](jit::CompileOptions options) {
    auto traced = jit::trace(chain, {.compile = options});
    setenv("KILN_LOG", "compile", 1);
    setenv("KILN_CACHE_DIR", "off", 0);
    ::testing::internal::CaptureStderr();
    Tensor x = input({4}, 8);
    traced(x);
    EXPECT_TRUE(sameBits(traced(x), chain(x)) ||
                amax(abs(sub(traced(x), chain(x)))).item<float>() < 1e-5f);
    std::string log = ::testing::internal::GetCapturedStderr();
    unsetenv("KILN_LOG");
    return log;
  };
  EXPECT_THAT(compileLine({}), ::testing::ContainsRegex("[0-9]+ kernels, 0 host ops"));
  EXPECT_THAT(compileLine({.fuse = false}), ::testing::ContainsRegex("0 kernels, [1-9][0-9]* host ops"));
  auto bounded = jit::trace(chain, {.compile = {.fuse_max_inputs = 1}});
  EXPECT_KILN_ERROR_HAS(bounded(ones({4})), Error,
                        "CompileOptions::fuse_max_inputs must be at least 2, got 1");
}

TEST(TraceTest, PlaceholdersThatEscapeATraceAreErrorsInTheNext) {
  Tensor leaked;
  auto first = jit::trace([&](Tensor x) {
    leaked = x;  // the symbolic input placeholder itself
    return neg(x);
  }, {.symbolic = true});
  first(ones({2}));
  ASSERT_TRUE(leaked.is_placeholder());
  auto second = jit::trace([&](Tensor x) { return add(x, leaked); }, {.symbolic = true});
  EXPECT_KILN_ERROR_HAS(second(ones({2})), TraceError,
                        "an op reads a symbolic placeholder (shape [2]) that this trace did not "
                        "create: a tensor from another trace escaped into this one");
}

TEST(TraceTest, UndefinedOutputsAreErrors) {
  auto traced = jit::trace([](Tensor x) { return std::make_tuple(neg(x), Tensor()); });
  EXPECT_KILN_ERROR_HAS(traced(ones({2})), TraceError,
                        "output 1 of the traced function is undefined");
}

TEST(TraceTest, SourceLocationsOnDemand) {
  auto traced = jit::trace([](Tensor x) { return exp(x); });
  traced(ones({2}));
  EXPECT_THAT(traced.graph_str(/*locations=*/true), HasSubstr("TraceTest.cpp"));
  EXPECT_THAT(traced.graph_str(), ::testing::Not(HasSubstr("TraceTest.cpp")));
}

TEST(TraceTest, OneTracedFunctionFromManyThreads) {
  Affine f;
  auto traced = jit::trace([&](Tensor x) { return f(x); }, {.symbolic = true});
  std::vector<Tensor> xs, expected;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    xs.push_back(input({2 + int64_t(seed % 2), 4}, seed));
    expected.push_back(f(xs.back()));
  }
  std::vector<int> ok(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) ok[t] += sameBits(traced(xs[t]), expected[t]);
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok, std::vector<int>(4, 20));
  // Batches of 2 and 3 rows: the second recording merged with the first into one dynamic
  // one, which the threads then share.
  EXPECT_EQ(traced.num_traces(), 1u);
}

// Threads calling at different batch sizes at once: each new size records and merges into
// the dynamic entry while other threads still run the entries it replaces. A call keeps
// the entry it runs alive (it used to be freed under it: a crash in about one run in ten).
TEST(TraceTest, ThreadsKeepRunningEntriesThatAnotherThreadMerges) {
  Affine f;
  for (int round = 0; round < 40; ++round) {
    jit::TraceOptions options;
    options.symbolic = true;
    options.compile.backend = "INTERP";  // the race is in the frontend: keep rounds cheap
    auto traced = jit::trace([&](Tensor x) { return f(x); }, options);
    std::vector<Tensor> xs, expected;
    for (int t = 0; t < 4; ++t) {
      xs.push_back(input({2 + t, 4}, 100 + round * 4 + t));
      expected.push_back(f(xs.back()));
    }
    std::vector<int> ok(4, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < 10; ++i) ok[t] += sameBits(traced(xs[t]), expected[t]);
      });
    for (auto& thread : threads) thread.join();
    ASSERT_EQ(ok, std::vector<int>(4, 10)) << "round " << round;
    EXPECT_EQ(traced.num_traces(), 1u) << "round " << round;
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// LibTorch's zero_grad() (zeroing in place, the default) inside a traced training step: the
// first call has no .grad yet and later calls do, and every call must still give the eager
// loss and weights, by value and symbolically, under the interpreter and compiled.
TEST(TraceTest, ATracedStepWithZeroingZeroGradMatchesEager) {
  for (const char* backend : {"INTERP", "MLIR"})
    for (bool symbolic : {false, true}) {
      SCOPED_TRACE(std::string(backend) + (symbolic ? " symbolic" : " by value"));
      auto make = [] {
        manual_seed(3);
        return nn::Linear(4, 3);
      };
      nn::Linear eager = make(), model = make();
      optim::SGD eagerOpt(eager->parameters(), optim::SGDOptions(0.1).momentum(0.9));
      optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
      auto step = [](nn::Linear& m, optim::SGD& o, const Tensor& x, const Tensor& y) {
        o.zero_grad();
        Tensor loss = cross_entropy(m->forward(x), y);
        loss.backward();
        o.step();
        return loss;
      };
      auto traced = jit::trace([&](Tensor x, Tensor y) { return step(model, opt, x, y); },
                               {.symbolic = symbolic, .compile = {.backend = backend}});
      for (int i = 0; i < 5; ++i) {
        manual_seed(100 + i);
        Tensor x = randn({8, 4}), y = randint(0, 3, {8});
        const float want = step(eager, eagerOpt, x, y).item<float>();
        const float got = traced(x, y).item<float>();
        EXPECT_NEAR(got, want, 1e-5) << "step " << i;
      }
      for (auto [a, b] : {std::pair{model->weight, eager->weight}, std::pair{model->bias, eager->bias}})
        EXPECT_LE(amax(abs(sub(a, b))).item<float>(), 1e-5f);
    }
}

}  // namespace
}  // namespace kiln
