// The optimizer base: zero_grad, closures, parameter groups, the flattened state_dict and
// its checked round trip, and what a tracer sees of a step.
#include <gtest/gtest.h>

#include <set>

#include "kiln/core/Autograd.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/optim/Adam.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/optim/OptimTestSupport.h"

namespace kiln::optim {
namespace {

using kiln::testing::at;
using testing::closeTo;
using testing::makeParams;
using testing::setGrads;

// ---- zero_grad ------------------------------------------------------------------------

TEST(Optimizer, ZeroGradWithSetToNoneClearsGradients) {
  std::vector<Tensor> params = makeParams(kFloat64);
  setGrads(params, 0);
  SGD opt(params, 0.1);
  opt.zero_grad(/*set_to_none=*/true);
  for (const Tensor& p : params) EXPECT_FALSE(p.grad().defined());
}

// LibTorch 1.13's default.
TEST(Optimizer, ZeroGradZeroesInPlaceByDefault) {
  std::vector<Tensor> params = makeParams(kFloat64);
  setGrads(params, 0);
  Tensor before = params[0].grad();
  SGD opt(params, 0.1);
  opt.zero_grad();
  EXPECT_TRUE(params[0].grad().is_same(before));
  EXPECT_TRUE(closeTo(params[0].grad(), std::vector<double>(6, 0.0)));
  EXPECT_TRUE(closeTo(params[1].grad(), std::vector<double>(4, 0.0)));
}

TEST(Optimizer, ZeroGradDetachesAGradientWithHistory) {
  Tensor p = tensor(std::vector<double>{1.0, 2.0}).requires_grad_();
  Tensor x = tensor(std::vector<double>{3.0, 4.0}).requires_grad_();
  p.set_grad(x * 2.0);
  SGD opt({p}, 0.1);
  opt.zero_grad(false);
  EXPECT_TRUE(p.grad().is_leaf());
  EXPECT_FALSE(p.grad().requires_grad());
  EXPECT_TRUE(closeTo(p.grad(), {0.0, 0.0}));
}

TEST(Optimizer, BackwardAfterZeroGradDoesNotAccumulate) {
  Tensor p = tensor(std::vector<double>{1.0, -2.0}).requires_grad_();
  SGD opt({p}, 0.5);
  for (bool setToNone : {true, false}) {
    sum(p * p).backward();
    EXPECT_TRUE(closeTo(p.grad(), {2.0, -4.0})) << setToNone;
    opt.zero_grad(setToNone);
  }
  sum(p * p).backward();
  opt.step();
  EXPECT_TRUE(closeTo(p, {0.0, 0.0}));  // p - 0.5 * 2p
}

TEST(Optimizer, StepCallsTheClosureAndReturnsItsLoss) {
  Tensor p = tensor(std::vector<double>{3.0}).requires_grad_();
  SGD opt({p}, 0.25);
  int calls = 0;
  Tensor loss = opt.step([&] {
    ++calls;
    opt.zero_grad();
    Tensor l = sum(p * p);
    l.backward();
    return l;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(loss.item<double>(), 9.0);
  EXPECT_TRUE(closeTo(p, {1.5}));
  EXPECT_FALSE(opt.step().defined());
}

// ---- parameter groups -----------------------------------------------------------------

TEST(Optimizer, GroupsWithoutOptionsTakeACopyOfTheDefaults) {
  std::vector<Tensor> params = makeParams(kFloat64);
  SGD opt({params[0]}, SGDOptions(0.1).momentum(0.9));
  opt.add_param_group(OptimizerParamGroup({params[1]}, std::make_unique<SGDOptions>(0.01)));
  ASSERT_EQ(opt.param_groups().size(), 2u);
  EXPECT_EQ(opt.size(), 2u);
  const auto& first = static_cast<const SGDOptions&>(opt.param_groups()[0].options());
  const auto& second = static_cast<const SGDOptions&>(opt.param_groups()[1].options());
  EXPECT_EQ(first.lr(), 0.1);
  EXPECT_EQ(first.momentum(), 0.9);
  EXPECT_EQ(second.lr(), 0.01);
  EXPECT_EQ(second.momentum(), 0);
  opt.param_groups()[0].options().set_lr(0.5);  // a group's options are its own
  EXPECT_EQ(opt.defaults().get_lr(), 0.1);
}

TEST(Optimizer, EachGroupStepsWithItsOwnLearningRate) {
  std::vector<Tensor> params = makeParams(kFloat64);
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{params[0]});
  groups.emplace_back(std::vector<Tensor>{params[1]}, std::make_unique<SGDOptions>(1.0));
  SGD opt(std::move(groups), 0.0);
  setGrads(params, 0);
  opt.step();
  EXPECT_TRUE(closeTo(params[0], testing::kInitial[0].values));  // lr 0
  std::vector<double> expected = testing::kInitial[1].values;
  std::vector<double> grad = testing::gradValues(1, 0);
  for (size_t i = 0; i < expected.size(); ++i) expected[i] -= grad[i];
  EXPECT_TRUE(closeTo(params[1], expected));
}

TEST(Optimizer, RejectsParametersItCannotUpdate) {
  std::vector<Tensor> params = makeParams(kFloat64);
  EXPECT_KILN_ERROR(SGD(std::vector<Tensor>{}, 0.1), Error,
                    "kiln::optim::SGD: got an empty parameter list" + at());
  EXPECT_KILN_ERROR(SGD({params[0], Tensor()}, 0.1), Error,
                    "kiln::optim::SGD: parameter 1 of group 0 is undefined" + at());
  Tensor computed = params[0] * 2.0;
  EXPECT_KILN_ERROR(SGD({computed}, 0.1), Error,
                    "kiln::optim::SGD: parameter 0 of group 0 is not a leaf tensor (an op "
                    "computed it); optimizers update the leaves a model owns" + at());
  EXPECT_KILN_ERROR(SGD({params[0], params[1], params[0]}, 0.1), Error,
                    "kiln::optim::SGD: parameter 2 of group 0 is already optimized in group 0" + at());
  SGD opt({params[0]}, 0.1);
  EXPECT_KILN_ERROR(opt.add_param_group(OptimizerParamGroup({params[1], params[0]})), Error,
                    "kiln::optim::SGD: parameter 1 of group 1 is already optimized in group 0" + at());
  EXPECT_KILN_ERROR(
      opt.add_param_group(OptimizerParamGroup({params[1]}, std::make_unique<SGDOptions>(-2.0))),
      Error, "kiln::optim::SGD: invalid learning rate -2 (must be >= 0)" + at());
  EXPECT_KILN_ERROR(
      opt.add_param_group(OptimizerParamGroup({params[1]}, std::make_unique<AdamOptions>(0.1))),
      Error,
      "kiln::optim::SGD: parameter group 1 has options of another kind than optim::SGD's "
      "defaults" + at());
  EXPECT_EQ(opt.param_groups().size(), 1u);  // nothing was added
}

// ---- state_dict -----------------------------------------------------------------------

std::vector<std::string> keysOf(const OrderedDict<Tensor>& dict) { return dict.keys(); }

TEST(Optimizer, StateDictFlattensPyTorchsLayout) {
  std::vector<Tensor> params = makeParams(kFloat64);
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{params[0]});
  groups.emplace_back(std::vector<Tensor>{params[1]});
  Adam opt(std::move(groups), AdamOptions(0.01).amsgrad(true));
  params[1].set_grad(ones({4}, kFloat64));  // only parameter 1 gets state
  opt.step();
  OrderedDict<Tensor> dict = opt.state_dict();
  EXPECT_EQ(keysOf(dict),
            (std::vector<std::string>{
                "state.1.step", "state.1.exp_avg", "state.1.exp_avg_sq", "state.1.max_exp_avg_sq",
                "param_groups.0.lr", "param_groups.0.betas", "param_groups.0.eps",
                "param_groups.0.weight_decay", "param_groups.0.amsgrad", "param_groups.0.maximize",
                "param_groups.0.capturable", "param_groups.0.params",
                "param_groups.1.lr", "param_groups.1.betas", "param_groups.1.eps",
                "param_groups.1.weight_decay", "param_groups.1.amsgrad", "param_groups.1.maximize",
                "param_groups.1.capturable", "param_groups.1.params"}));
  EXPECT_TRUE(dict["state.1.exp_avg"].is_same(opt.state(params[1])->at("exp_avg")));
  EXPECT_EQ(dict["param_groups.0.lr"].dtype(), kFloat64);
  EXPECT_EQ(dict["param_groups.0.lr"].item<double>(), 0.01);
  EXPECT_EQ(dict["param_groups.0.amsgrad"].dtype(), kBool);
  EXPECT_TRUE(dict["param_groups.0.amsgrad"].item<bool>());
  EXPECT_TRUE(closeTo(dict["param_groups.1.betas"], {0.9, 0.999}));
  EXPECT_EQ(golden::valuesAsInt64(dict["param_groups.1.params"]), (std::vector<int64_t>{1}));
}

// Runs `first` steps, moves the state into a fresh optimizer over fresh parameters with
// the same values, and runs the rest there: the trajectory must be the uninterrupted one.
TEST(Optimizer, StateDictRoundTripContinuesTheSameTrajectory) {
  const golden::OptimizerGolden& golden = testing::findGolden("adam_amsgrad_wd");
  auto options = AdamOptions(0.02).betas({0.8, 0.99}).eps(1e-6).weight_decay(0.1).amsgrad(true);
  std::vector<Tensor> params = makeParams(kFloat64);
  Adam first(params, options);
  for (int k = 0; k < 2; ++k) {
    setGrads(params, k);
    first.step();
  }
  OrderedDict<Tensor> saved = first.state_dict();

  std::vector<Tensor> resumed;
  for (const Tensor& p : params) resumed.push_back(p.detach().clone().requires_grad_());
  Adam second(resumed, AdamOptions(0.5));  // hyperparameters come from the state dict
  second.load_state_dict(saved);
  const auto& restored = static_cast<const AdamOptions&>(second.param_groups()[0].options());
  EXPECT_EQ(restored.lr(), 0.02);
  EXPECT_EQ(restored.betas(), Betas(0.8, 0.99));
  EXPECT_TRUE(restored.amsgrad());
  // The loaded state is a copy: stepping the first optimizer leaves it alone.
  EXPECT_FALSE(second.state(resumed[0])->at("exp_avg").is_same(saved["state.0.exp_avg"]));

  for (int k = 2; k < testing::kSteps; ++k) {
    setGrads(resumed, k);
    second.step();
    for (size_t j = 0; j < resumed.size(); ++j)
      EXPECT_TRUE(closeTo(resumed[j], golden.trajectory[k][j])) << "step " << k + 1;
  }
}

TEST(Optimizer, LoadStateDictCastsStateToTheParameterDtype) {
  std::vector<Tensor> params64 = makeParams(kFloat64);
  SGD first(params64, SGDOptions(0.1).momentum(0.9));
  setGrads(params64, 0);
  first.step();
  std::vector<Tensor> params32 = makeParams(kFloat32);
  SGD second(params32, SGDOptions(0.1).momentum(0.9));
  second.load_state_dict(first.state_dict());
  EXPECT_EQ(second.state(params32[0])->at("momentum_buffer").dtype(), kFloat32);
}

// State is made, and loaded, on each parameter's device (test/gpu/CudaModuleTest checks CUDA
// parameters); the step count too, so an update reads nothing from another device.
TEST(Optimizer, StateLivesOnTheParameterDevice) {
  std::vector<Tensor> params = makeParams(kFloat32);
  Adam adam(params, AdamOptions(0.01).amsgrad(true));
  setGrads(params, 0);
  adam.step();
  std::vector<Tensor> resumed = makeParams(kFloat32);
  Adam second(resumed, AdamOptions(0.01));
  second.load_state_dict(adam.state_dict());
  for (size_t j = 0; j < params.size(); ++j) {
    for (const auto& [name, value] : *adam.state(params[j]))
      EXPECT_EQ(value.device(), params[j].device()) << name;
    ASSERT_NE(second.state(resumed[j]), nullptr);
    for (const auto& [name, value] : *second.state(resumed[j])) {
      EXPECT_EQ(value.device(), resumed[j].device()) << name;
      EXPECT_FALSE(value.is_same(adam.state(params[j])->at(name))) << name;  // a copy
    }
  }
  EXPECT_EQ(second.state(resumed[0])->at("step").dtype(), kFloat32);
  EXPECT_EQ(second.state(resumed[0])->at("step").item<double>(), 1.0);
}

class LoadStateDictErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    params_ = makeParams(kFloat64);
    opt_ = std::make_unique<Adam>(params_, AdamOptions(0.01));
    setGrads(params_, 0);
    opt_->step();
    dict_ = opt_->state_dict();
  }

  // dict_ with `key` replaced (or removed, for an undefined tensor) or added.
  OrderedDict<Tensor> with(const std::string& key, Tensor value) const {
    OrderedDict<Tensor> out;
    for (const auto& [k, v] : dict_)
      if (k != key) out.insert(k, v);
      else if (value.defined()) out.insert(k, value);
    if (!dict_.contains(key) && value.defined()) out.insert(key, value);
    return out;
  }

  // The failed load changed nothing.
  void expectUnchanged() {
    EXPECT_EQ(opt_->param_groups()[0].options().get_lr(), 0.01);
    EXPECT_EQ(opt_->state(params_[0])->at("step").item<double>(), 1.0);
  }

  std::vector<Tensor> params_;
  std::unique_ptr<Adam> opt_;
  OrderedDict<Tensor> dict_;
};

TEST_F(LoadStateDictErrors, GroupsThatDoNotMatch) {
  OrderedDict<Tensor> twoGroups = dict_;
  twoGroups.insert("param_groups.1.params", tensor(std::vector<int64_t>{5}));
  EXPECT_KILN_ERROR(opt_->load_state_dict(twoGroups), Error,
                    "kiln::optim::Adam::load_state_dict: the state dict has 2 parameter groups "
                    "but the optimizer has 1" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("param_groups.0.params", tensor(std::vector<int64_t>{0}))),
                    Error,
                    "kiln::optim::Adam::load_state_dict: parameter group 0 of the state dict has "
                    "1 parameters but the optimizer's has 2" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("param_groups.0.params", tensor(std::vector<int64_t>{1, 1}))),
                    Error,
                    "kiln::optim::Adam::load_state_dict: parameter index 1 appears twice in "
                    "param_groups" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("param_groups.0.params", ones({2}))), Error,
                    "kiln::optim::Adam::load_state_dict: 'param_groups.0.params' must be a 1-d "
                    "int64 tensor, got float32 [2]" + at());
  expectUnchanged();
}

TEST_F(LoadStateDictErrors, HyperparametersMissingOrOfTheWrongKind) {
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("param_groups.0.eps", Tensor())), Error,
                    "kiln::optim::Adam::load_state_dict: missing key 'param_groups.0.eps'" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("param_groups.0.lr", ones({2}, kFloat64))), Error,
                    "kiln::optim::Adam::load_state_dict: 'param_groups.0.lr' must be a 0-d "
                    "floating-point tensor, got float64 [2]" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("param_groups.0.amsgrad", scalar_tensor(1.0))), Error,
                    "kiln::optim::Adam::load_state_dict: 'param_groups.0.amsgrad' must be a 0-d "
                    "bool tensor, got float32 []" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("param_groups.0.lr", scalar_tensor(-1.0, kFloat64))),
                    Error,
                    "kiln::optim::Adam::load_state_dict: invalid learning rate -1 (must be >= 0)" + at());
  expectUnchanged();
}

TEST_F(LoadStateDictErrors, StateThatDoesNotFit) {
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("state.1.exp_avg", zeros({3}, kFloat64))), Error,
                    "kiln::optim::Adam::load_state_dict: 'state.1.exp_avg' has shape [3] but "
                    "parameter 1 has shape [4]" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("state.0.step", zeros({2}))), Error,
                    "kiln::optim::Adam::load_state_dict: 'state.0.step' must have one element, "
                    "got shape [2]" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("state.0.exp_avg_sq", Tensor())), Error,
                    "kiln::optim::Adam::load_state_dict: the state of parameter 0 has 'step', "
                    "'exp_avg' but optim::Adam keeps 'step', 'exp_avg', 'exp_avg_sq'" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("state.0.momentum_buffer", zeros({2, 3}))), Error,
                    "kiln::optim::Adam::load_state_dict: unexpected keys "
                    "'state.0.momentum_buffer'" + at());
  EXPECT_KILN_ERROR(opt_->load_state_dict(with("state.2.exp_avg", zeros({2, 3}))), Error,
                    "kiln::optim::Adam::load_state_dict: unexpected keys 'state.2.exp_avg'" + at());
  expectUnchanged();
}

// ---- what a tracer sees ----------------------------------------------------------------

// Counts the ops of a step as the tracer's hook would see them.
class CountingHook : public DispatchHook {
 public:
  bool symbolic() const override { return false; }
  void onOp(const OpCall& call) override {
    if (call.inPlace) inPlaceTargets.insert(call.inputs[0].impl());
    ++ops;
  }
  void onValueRead(const Tensor&, std::string_view, const SourceLoc&) override { ++valueReads; }

  int ops = 0;
  int valueReads = 0;
  std::set<const TensorImpl*> inPlaceTargets;
};

TEST(Optimizer, StepsAreOrdinaryOpsThatUpdateParametersAndStateInPlace) {
  std::vector<Tensor> params = makeParams(kFloat32);
  SGD opt(params, SGDOptions(0.1).momentum(0.9));
  for (int k = 0; k < 2; ++k) {
    setGrads(params, k);
    CountingHook hook;
    {
      DispatchHookGuard guard(&hook);
      opt.step();
    }
    EXPECT_EQ(hook.valueReads, 0);
    for (const Tensor& p : params) EXPECT_TRUE(hook.inPlaceTargets.count(p.impl()));
    if (k == 1) {
      for (const Tensor& p : params)
        EXPECT_TRUE(hook.inPlaceTargets.count(opt.state(p)->at("momentum_buffer").impl()));
    }
  }
}

TEST(Optimizer, AdamStepsWithoutReadingValuesInBothForms) {
  for (bool capturable : {false, true}) {
    std::vector<Tensor> params = makeParams(kFloat32);
    Adam opt(params, AdamOptions(0.01).capturable(capturable));
    setGrads(params, 0);
    opt.step();  // state exists from here on, as when a trace records a later step
    setGrads(params, 1);
    CountingHook hook;
    {
      DispatchHookGuard guard(&hook);
      opt.step();
    }
    // Neither form reads a value: the default form's bias corrections are tensor ops on
    // the step count, where PyTorch's reads step_t.item() (issue 19, case 2).
    EXPECT_EQ(hook.valueReads, 0) << capturable;
    for (const Tensor& p : params)
      for (const char* name : {"step", "exp_avg", "exp_avg_sq"})
        EXPECT_TRUE(hook.inPlaceTargets.count(opt.state(p)->at(name).impl())) << name;
  }
}

}  // namespace
}  // namespace kiln::optim
