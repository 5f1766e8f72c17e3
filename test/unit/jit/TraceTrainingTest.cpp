// Training inside a trace: forward, backward and an optimizer step recorded together
// give the same losses and weights as eager training, in both modes (docs/ARCHITECTURE.md §5).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <vector>

#include "kiln/core/CustomFunction.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/Adam.h"
#include "kiln/optim/LRScheduler.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/jit/TraceTestSupport.h"

namespace kiln {
namespace {

using testing::sameBits;
using ::testing::HasSubstr;

nn::Sequential makeModel() {
  manual_seed(0);
  return nn::Sequential(nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 3));
}

struct Batch {
  Tensor x, y;
};

std::vector<Batch> batches(int n) {
  std::vector<Batch> out;
  manual_seed(42);
  for (int i = 0; i < n; ++i) out.push_back({randn({5, 8}), randint(0, 3, {5})});
  return out;
}

template <class Optimizer>
Tensor step(nn::Sequential& model, Optimizer& opt, const Tensor& x, const Tensor& y) {
  Tensor loss = cross_entropy(model->forward(x), y);
  opt.zero_grad(/*set_to_none=*/true);
  loss.backward();
  opt.step();
  return loss;
}

template <class MakeOptimizer>
void expectTracedTrainingMatchesEager(bool symbolic, MakeOptimizer makeOptimizer) {
  std::vector<Batch> data = batches(8);
  nn::Sequential eagerModel = makeModel();
  auto eagerOpt = makeOptimizer(eagerModel);
  std::vector<float> eagerLosses;
  for (const Batch& b : data) eagerLosses.push_back(step(eagerModel, eagerOpt, b.x, b.y).template item<float>());

  nn::Sequential model = makeModel();
  auto opt = makeOptimizer(model);
  auto trainStep = jit::trace([&](Tensor x, Tensor y) { return step(model, opt, x, y); },
                              {.symbolic = symbolic});
  for (size_t i = 0; i < data.size(); ++i)
    EXPECT_EQ(trainStep(data[i].x, data[i].y).template item<float>(), eagerLosses[i]) << "step " << i;
  EXPECT_EQ(trainStep.num_traces(), 1u);  // the warm-up is not kept
  auto params = model->named_parameters();
  auto eagerParams = eagerModel->named_parameters();
  for (const auto& [name, p] : params) {
    EXPECT_TRUE(sameBits(p, eagerParams.at(name))) << name;
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_FALSE(p.grad().is_placeholder()) << name;
    EXPECT_TRUE(sameBits(p.grad(), eagerParams.at(name).grad())) << name << ".grad";
  }
  std::string ir = trainStep.graph_str();
  if (std::getenv("DUMP_IR")) std::cerr << ir;
  EXPECT_THAT(ir, HasSubstr("kiln.state_update"));
  EXPECT_THAT(ir, HasSubstr("kiln.grad_update"));
}

class TraceTraining : public ::testing::TestWithParam<bool> {};

TEST_P(TraceTraining, SgdWithMomentumMatchesEagerBitwise) {
  expectTracedTrainingMatchesEager(GetParam(), [](nn::Sequential& m) {
    return optim::SGD(m->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  });
}

TEST_P(TraceTraining, AdamMatchesEagerBitwise) {
  expectTracedTrainingMatchesEager(GetParam(), [](nn::Sequential& m) {
    return optim::Adam(m->parameters(), optim::AdamOptions(0.01).capturable(true));
  });
}

// Issue 19, case 2: the default form's bias corrections depend on the step count. A
// trace records them from the step state; reading the count would bake the recorded
// step's correction into every later call (by value) or throw (symbolic).
TEST_P(TraceTraining, AdamDefaultFormMatchesEagerBitwise) {
  expectTracedTrainingMatchesEager(GetParam(), [](nn::Sequential& m) {
    return optim::Adam(m->parameters(), optim::AdamOptions(0.01).amsgrad(true));
  });
}

TEST_P(TraceTraining, AdamWDefaultFormMatchesEagerBitwise) {
  expectTracedTrainingMatchesEager(GetParam(), [](nn::Sequential& m) {
    return optim::AdamW(m->parameters(), optim::AdamWOptions(0.01).weight_decay(0.1));
  });
}

// A custom autograd function in a traced step: the tracer records its forward's ops, and
// at backward() the ops its backward runs, as for any composed op (docs/LIBTORCH.md).
struct ScaledTanh : public autograd::Function<ScaledTanh> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x, double scale) {
    Tensor y = tanh(x);
    ctx->save_for_backward({y});
    ctx->saved_data["scale"] = scale;
    return mul(y, scale);
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx,
                                          autograd::variable_list g) {
    Tensor y = ctx->get_saved_variables()[0];
    Tensor slope = mul(sub(ones_like(y), mul(y, y)), ctx->saved_data["scale"].toDouble());
    return {mul(g[0], slope), Tensor()};
  }
};

TEST_P(TraceTraining, CustomFunctionMatchesEagerBitwise) {
  auto makeLayers = [] {
    manual_seed(5);
    nn::Linear first(8, 16);
    nn::Linear second(16, 3);
    return std::make_pair(first, second);
  };
  auto step = [](std::pair<nn::Linear, nn::Linear>& net, optim::SGD& opt, const Tensor& x,
                 const Tensor& y) {
    Tensor loss = cross_entropy(net.second->forward(ScaledTanh::apply(net.first->forward(x), 0.5)), y);
    opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
    opt.step();
    return loss;
  };
  auto paramsOf = [](std::pair<nn::Linear, nn::Linear>& net) {
    std::vector<Tensor> params = net.first->parameters();
    for (const Tensor& p : net.second->parameters()) params.push_back(p);
    return params;
  };
  std::vector<Batch> data = batches(6);
  auto eagerNet = makeLayers();
  optim::SGD eagerOpt(paramsOf(eagerNet), optim::SGDOptions(0.1));
  auto net = makeLayers();
  optim::SGD opt(paramsOf(net), optim::SGDOptions(0.1));
  auto trainStep = jit::trace([&](Tensor x, Tensor y) { return step(net, opt, x, y); },
                              {.symbolic = GetParam()});
  for (size_t i = 0; i < data.size(); ++i) {
    Tensor eagerLoss = step(eagerNet, eagerOpt, data[i].x, data[i].y);
    EXPECT_TRUE(sameBits(trainStep(data[i].x, data[i].y), eagerLoss)) << "step " << i;
  }
  EXPECT_EQ(trainStep.num_traces(), 1u);
  std::vector<Tensor> params = paramsOf(net), eagerParams = paramsOf(eagerNet);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(sameBits(params[i], eagerParams[i])) << i;
    EXPECT_TRUE(sameBits(params[i].grad(), eagerParams[i].grad())) << i;
  }
  EXPECT_THAT(trainStep.graph_str(), HasSubstr("kiln.tanh"));
}

INSTANTIATE_TEST_SUITE_P(ByValueAndSymbolic, TraceTraining, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Symbolic" : "ByValue"; });

TEST(TraceTrainingTest, StateIsNamedAfterModulesAndOptimizerSlots) {
  nn::Sequential model = makeModel();
  optim::Adam opt(model->parameters(), optim::AdamOptions(0.01).capturable(true));
  Tensor extra = ones({5, 3});  // read but not named: keeps the default name
  auto trainStep = jit::trace([&](Tensor x, Tensor y) {
    Tensor loss = add(step(model, opt, x, y), sum(extra));
    return loss;
  });
  trainStep.name_module("model", model).name_optimizer("opt", opt);
  for (const Batch& b : batches(3)) trainStep(b.x, b.y);
  std::string ir = trainStep.graph_str();
  EXPECT_THAT(ir, HasSubstr("kiln.state = \"model.0.weight\""));
  EXPECT_THAT(ir, HasSubstr("kiln.state = \"model.2.bias\""));
  EXPECT_THAT(ir, HasSubstr("kiln.state = \"opt.exp_avg.model.0.weight\""));
  EXPECT_THAT(ir, HasSubstr("kiln.state = \"opt.exp_avg_sq.model.2.weight\""));
  EXPECT_THAT(ir, HasSubstr("kiln.state_update = \"opt.step.model.2.bias\""));
  EXPECT_THAT(ir, HasSubstr("kiln.grad_update = \"model.0.bias.grad\""));
  EXPECT_THAT(ir, ::testing::ContainsRegex("kiln.state = \"state.[0-9]+\""));  // extra
}

TEST(TraceTrainingTest, NamedModulesTrainingModeIsPartOfTheKey) {
  manual_seed(0);
  nn::Sequential model(nn::Linear(4, 4), nn::Dropout(0.5));
  auto forward = jit::trace([&](Tensor x) { return model->forward(x); });
  forward.name_module("model", model);
  Tensor x = ones({2, 4});
  forward(x);
  model->eval();
  setenv("KILN_LOG", "retrace", 1);
  ::testing::internal::CaptureStderr();
  Tensor evalOut = forward(x);
  std::string log = ::testing::internal::GetCapturedStderr();
  unsetenv("KILN_LOG");
  EXPECT_EQ(forward.num_traces(), 2u);
  EXPECT_THAT(log, HasSubstr("module modes (model=train;) → (model=eval;)"));
  EXPECT_TRUE(sameBits(evalOut, model->forward(x)));  // no dropout in eval
  model[1]->train();  // mixed: one bit per module, pre-order
  forward(x);
  EXPECT_EQ(forward.num_traces(), 3u);
}

// Issue 19, case 2: learning rates are state, so a schedule that changes the rate on
// every call never records again, named optimizer or not, and the weights are eager's;
// with SGD and with Adam (whose update reads the rate in double).
template <class Optimizer, class Options>
void expectASchedulerNeverRetraces(Options options, bool named) {
  std::vector<Batch> data = batches(6);
  nn::Sequential eagerModel = makeModel();
  Optimizer eagerOpt(eagerModel->parameters(), options);
  optim::StepLR eagerSchedule(eagerOpt, /*step_size=*/1, /*gamma=*/0.7);
  nn::Sequential model = makeModel();
  Optimizer opt(model->parameters(), options);
  optim::StepLR schedule(opt, /*step_size=*/1, /*gamma=*/0.7);
  auto trainStep = jit::trace([&](Tensor x, Tensor y) { return step(model, opt, x, y); });
  if (named) trainStep.name_module("model", model).name_optimizer("opt", opt);
  for (const Batch& b : data) {
    Tensor eagerLoss = step(eagerModel, eagerOpt, b.x, b.y);
    eagerSchedule.step();
    EXPECT_TRUE(sameBits(trainStep(b.x, b.y), eagerLoss));
    schedule.step();
  }
  EXPECT_EQ(trainStep.num_traces(), 1u);
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), options.lr() * std::pow(0.7, 6));
  for (const auto& [name, p] : model->named_parameters())
    EXPECT_TRUE(sameBits(p, eagerModel->named_parameters()[name])) << name;
  if (named) EXPECT_THAT(trainStep.graph_str(), HasSubstr("kiln.state = \"opt.lr.0\""));
}

TEST(TraceTrainingTest, ASchedulerNeverRetracesSgd) {
  expectASchedulerNeverRetraces<optim::SGD>(optim::SGDOptions(0.1).momentum(0.9), false);
  expectASchedulerNeverRetraces<optim::SGD>(optim::SGDOptions(0.1), true);
}

TEST(TraceTrainingTest, ASchedulerNeverRetracesAdamAndAdamW) {
  expectASchedulerNeverRetraces<optim::Adam>(optim::AdamOptions(0.01), true);
  expectASchedulerNeverRetraces<optim::Adam>(optim::AdamOptions(0.01).capturable(true), false);
  expectASchedulerNeverRetraces<optim::AdamW>(optim::AdamWOptions(0.01), true);
}

// The other hyperparameters are baked into the recording, so for a named optimizer they
// are part of the key: a changed momentum records again, never runs with the old one.
TEST(TraceTrainingTest, NamedOptimizersOtherHyperparametersArePartOfTheKey) {
  std::vector<Batch> data = batches(4);
  nn::Sequential eagerModel = makeModel();
  optim::SGD eagerOpt(eagerModel->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  nn::Sequential model = makeModel();
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  auto trainStep = jit::trace([&](Tensor x, Tensor y) { return step(model, opt, x, y); });
  trainStep.name_module("model", model).name_optimizer("opt", opt);
  setenv("KILN_LOG", "retrace", 1);
  ::testing::internal::CaptureStderr();
  for (size_t i = 0; i < data.size(); ++i) {
    if (i == 2) {
      static_cast<optim::SGDOptions&>(eagerOpt.param_groups()[0].options()).momentum(0.5);
      static_cast<optim::SGDOptions&>(opt.param_groups()[0].options()).momentum(0.5);
    }
    step(eagerModel, eagerOpt, data[i].x, data[i].y);
    trainStep(data[i].x, data[i].y);
  }
  std::string log = ::testing::internal::GetCapturedStderr();
  unsetenv("KILN_LOG");
  EXPECT_EQ(trainStep.num_traces(), 2u);
  EXPECT_THAT(log, HasSubstr("momentum=0.9;"));
  EXPECT_THAT(log, HasSubstr("momentum=0.5;"));
  for (const auto& [name, p] : model->named_parameters())
    EXPECT_TRUE(sameBits(p, eagerModel->named_parameters()[name])) << name;
}

// Issue 19, case 3: the depthwise kernel reads its own weights (a finite check) and
// inputs. A kernel reading its operands is the op computing, not the user reading a
// value: tracing by value warns of nothing, and training the depthwise weights traced
// equals eager step after step (nothing was baked).
TEST(TraceTrainingTest, DepthwiseConvolutionsTrainTracedAsEagerWithoutABakeWarning) {
  auto makeNet = [] {
    manual_seed(3);
    return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(6, 6, 3).padding(1).groups(6)), nn::ReLU(),
                          nn::Conv2d(6, 2, 1));
  };
  auto lossOf = [](nn::Sequential& net, const Tensor& x) { return mean(mul(net->forward(x), net->forward(x))); };
  manual_seed(11);
  std::vector<Tensor> inputs;
  for (int i = 0; i < 12; ++i) inputs.push_back(randn({2, 6, 16, 16}));
  nn::Sequential eagerNet = makeNet();
  optim::SGD eagerOpt(eagerNet->parameters(), optim::SGDOptions(0.5));
  nn::Sequential net = makeNet();
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.5));
  auto trainStep = jit::trace([&](Tensor x) {
    Tensor loss = lossOf(net, x);
    opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
    opt.step();
    return loss;
  });
  ::testing::internal::CaptureStderr();
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor eagerLoss = lossOf(eagerNet, inputs[i]);
    eagerOpt.zero_grad(/*set_to_none=*/true);
    eagerLoss.backward();
    eagerOpt.step();
    EXPECT_TRUE(sameBits(trainStep(inputs[i]), eagerLoss)) << "step " << i;
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(trainStep.num_traces(), 1u);
  auto eagerParams = eagerNet->named_parameters();
  for (const auto& [name, p] : net->named_parameters())
    EXPECT_TRUE(sameBits(p, eagerParams.at(name))) << name;
  // The weights moved: a baked first-step weight would have shown above.
  EXPECT_FALSE(sameBits(net->named_parameters().at("0.weight"), makeNet()->named_parameters().at("0.weight")));
}

// BatchNorm2d's cumulative average (momentum nullopt) divides by num_batches_tracked with
// a tensor op instead of reading the count: a symbolic trace records it (it threw), and
// the running statistics after 5 traced steps are eager's.
TEST(TraceTrainingTest, BatchNormsCumulativeAverageTracesSymbolically) {
  auto makeNet = [] {
    manual_seed(4);
    return nn::Sequential(nn::Conv2d(3, 4, 3), nn::BatchNorm2d(nn::BatchNormOptions(4).momentum(std::nullopt)));
  };
  nn::Sequential eagerNet = makeNet(), net = makeNet();
  auto forward = jit::trace([&](Tensor x) { return net->forward(x); }, {.symbolic = true});
  manual_seed(12);
  for (int i = 0; i < 5; ++i) {
    Tensor x = randn({2, 3, 6, 6});
    EXPECT_TRUE(sameBits(forward(x), eagerNet->forward(x))) << "call " << i;
  }
  EXPECT_EQ(forward.num_traces(), 1u);
  auto eagerBuffers = eagerNet->named_buffers();
  for (const auto& [name, b] : net->named_buffers()) EXPECT_TRUE(sameBits(b, eagerBuffers.at(name))) << name;
}

TEST(TraceTrainingTest, TensorsCreatedOnEveryCallAreAnError) {
  std::vector<Tensor> kept;
  auto traced = jit::trace([&](Tensor x) {
    kept.push_back(mul(x, 2.0));
    return x;
  });
  traced(ones({2}));  // a warm-up
  EXPECT_KILN_ERROR_HAS(traced(ones({2})), TraceError,
                        "creates 1 tensor(s) on every call that outlive the call and are not "
                        "outputs (shapes [2])");
}

}  // namespace
}  // namespace kiln
