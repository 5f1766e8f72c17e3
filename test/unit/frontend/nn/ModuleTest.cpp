// nn::Module: registration, the tree walks and their names, modes, to(), zero_grad,
// state_dict / load_state_dict, holders, printing and forward observers.
#include "kiln/nn/Module.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Cuda.h"
#include "kiln/core/Ops.h"
#include "kiln/nn/Modules.h"
#include "test/unit/frontend/Golden.h"

namespace kiln::nn {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using golden::valuesAsDouble;

// what() of the kiln::Error `fn` throws; fails the test if it throws nothing.
std::vector<std::string> keysOf(const OrderedDict<Tensor>& dict) { return dict.keys(); }

// A user module in LibTorch's style: members assigned from register_*.
class NetImpl : public Module {
 public:
  NetImpl() {
    fc1 = register_module("fc1", Linear(4, 3));
    block = register_module("block", Sequential(Linear(3, 3), BatchNorm2d(3)));
    scale = register_parameter("scale", ones({1}));
    steps = register_buffer("steps", zeros({}, kInt64));
  }
  Tensor forward(const Tensor& x) { return fc1->forward(x) * scale; }

  Linear fc1{nullptr};
  Sequential block{nullptr};
  Tensor scale, steps;
};
KILN_MODULE(Net);

TEST(ModuleTest, NamedParametersUseDottedPathsInPreOrder) {
  Net net;
  EXPECT_EQ(keysOf(net->named_parameters()),
            (std::vector<std::string>{"scale", "fc1.weight", "fc1.bias", "block.0.weight",
                                      "block.0.bias", "block.1.weight", "block.1.bias"}));
  EXPECT_EQ(keysOf(net->named_parameters(/*recurse=*/false)), std::vector<std::string>{"scale"});
  EXPECT_EQ(net->parameters().size(), 7u);
  EXPECT_TRUE(net->parameters()[1].is_same(net->fc1->weight));
  EXPECT_EQ(keysOf(net->named_buffers()),
            (std::vector<std::string>{"steps", "block.1.running_mean", "block.1.running_var",
                                      "block.1.num_batches_tracked"}));
  EXPECT_EQ(net->buffers(false).size(), 1u);
}

TEST(ModuleTest, ChildrenAndModules) {
  Net net;
  EXPECT_EQ(net->named_children().keys(), (std::vector<std::string>{"fc1", "block"}));
  ASSERT_EQ(net->children().size(), 2u);
  EXPECT_EQ(net->children()[0].get(), net->fc1.get());
  EXPECT_EQ(net->named_modules().keys(),
            (std::vector<std::string>{"", "fc1", "block", "block.0", "block.1"}));
  EXPECT_EQ(net->named_modules("net").keys(),
            (std::vector<std::string>{"net", "net.fc1", "net.block", "net.block.0", "net.block.1"}));
  EXPECT_EQ(net->modules(/*include_self=*/false).size(), 4u);
  EXPECT_EQ(net->modules()[0].get(), net.get());
}

TEST(ModuleTest, ASharedModuleIsListedOnceButSavedUnderEachName) {
  Linear shared(2, 2);
  Sequential model(shared, ReLU(), shared);
  EXPECT_EQ(model->named_parameters().keys(), (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(model->named_modules().keys(), (std::vector<std::string>{"", "0", "1"}));
  EXPECT_EQ(model->state_dict().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  model->load_state_dict(model->state_dict());
}

TEST(ModuleTest, ParametersRequireGradAndBuffersDoNot) {
  Net net;
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
  for (const Tensor& b : net->buffers()) EXPECT_FALSE(b.requires_grad());
  auto m = std::make_shared<Module>();
  Tensor frozen = m->register_parameter("frozen", ones({2}), /*requires_grad=*/false);
  EXPECT_FALSE(frozen.requires_grad());
  EXPECT_EQ(m->parameters().size(), 1u);
}

TEST(ModuleTest, UndefinedSlotsAreLeftOut) {
  auto m = std::make_shared<Module>();
  m->register_parameter("bias", Tensor());
  m->register_buffer("stats", Tensor());
  EXPECT_TRUE(m->parameters().empty());
  EXPECT_TRUE(m->buffers().empty());
  EXPECT_TRUE(m->state_dict().empty());
}

TEST(ModuleTest, RegistrationErrorsNameTheProblem) {
  auto m = std::make_shared<Module>();
  m->register_parameter("w", ones({2}));
  EXPECT_THAT([&] { m->register_parameter("", ones({1})); },
              ThrowsMessage<Error>(HasSubstr("must not be empty")));
  EXPECT_THAT([&] { m->register_buffer("a.b", ones({1})); },
              ThrowsMessage<Error>(HasSubstr("register_buffer: the name must not contain a dot, got 'a.b'")));
  EXPECT_THAT([&] { m->register_buffer("w", ones({1})); },
              ThrowsMessage<Error>(HasSubstr("Module already has a parameter named 'w'")));
  EXPECT_THAT([&] { m->register_module("w", Linear(1, 1)); },
              ThrowsMessage<Error>(HasSubstr("parameter named 'w'")));
  EXPECT_THAT([&] { m->register_parameter("i", ones({2}, kInt64)); },
              ThrowsMessage<Error>(HasSubstr("floating-point")));
  Tensor leaf = ones({2}).requires_grad_();
  EXPECT_THAT([&] { m->register_parameter("h", leaf * 2.0); },
              ThrowsMessage<Error>(HasSubstr("must be a leaf")));
  EXPECT_THAT([&] { m->register_module("null", std::shared_ptr<Module>()); },
              ThrowsMessage<Error>(HasSubstr("is null")));
}

TEST(ModuleTest, NamedModulesOfAModuleNotOwnedBySharedPtr) {
  Module onStack;
  EXPECT_THAT([&] { onStack.named_modules(); },
              ThrowsMessage<Error>(HasSubstr("owned by a std::shared_ptr")));
  EXPECT_TRUE(onStack.named_modules("", /*include_self=*/false).empty());
}

TEST(ModuleTest, TrainAndEvalReachEveryModule) {
  Net net;
  EXPECT_TRUE(net->is_training());
  net->eval();
  for (const auto& m : net->modules()) EXPECT_FALSE(m->is_training()) << m->name();
  net->train();
  for (const auto& m : net->modules()) EXPECT_TRUE(m->is_training()) << m->name();
  net->block->train(false);
  EXPECT_TRUE(net->is_training());
  EXPECT_FALSE(net->block[1]->is_training());
}

TEST(ModuleTest, ToFloat64ConvertsInPlaceAndKeepsIdentity) {
  Net net;
  Tensor weightHandle = net->fc1->weight;                // the member
  Tensor listed = net->parameters()[1];                  // an optimizer's handle
  std::vector<double> before = valuesAsDouble(weightHandle);
  Tensor x = ones({2, 4});
  sum(net->forward(x)).backward();
  ASSERT_TRUE(weightHandle.grad().defined());

  net->to(kFloat64);
  EXPECT_EQ(weightHandle.dtype(), kFloat64);
  EXPECT_EQ(listed.dtype(), kFloat64);
  EXPECT_TRUE(listed.is_same(net->fc1->weight));
  EXPECT_EQ(valuesAsDouble(weightHandle), before);  // float -> double is exact
  EXPECT_TRUE(weightHandle.requires_grad());
  EXPECT_TRUE(weightHandle.is_leaf());
  EXPECT_EQ(weightHandle.grad().dtype(), kFloat64);
  for (const auto& [name, t] : net->named_buffers())
    EXPECT_EQ(t.dtype(), name.ends_with("steps") || name.ends_with("num_batches_tracked") ? kInt64
                                                                                       : kFloat64)
        << name;
  Tensor y = net->forward(ones({2, 4}, kFloat64));
  EXPECT_EQ(y.dtype(), kFloat64);
  sum(y).backward();  // gradients flow into the converted leaves
  EXPECT_EQ(net->fc1->weight.grad().dtype(), kFloat64);

  net->to(kFloat32);
  EXPECT_EQ(net->fc1->weight.dtype(), kFloat32);
  EXPECT_THAT([&] { net->to(kInt32); },
              ThrowsMessage<Error>(HasSubstr("floating-point dtypes only")));
}

TEST(ModuleTest, ToCpuKeepsEveryTensorAsItIs) {
  Net net;
  sum(net->forward(ones({2, 4}))).backward();
  OrderedDict<Tensor> params = net->named_parameters(), buffers = net->named_buffers();
  std::vector<const void*> storage;
  for (const Tensor& t : params.values()) storage.push_back(t.rawData());
  Tensor grad = net->fc1->weight.grad();
  std::vector<double> before = valuesAsDouble(net->fc1->weight);

  net->to(kCPU);
  net->to(Device(kCPU));
  size_t i = 0;
  for (const auto& [name, t] : net->named_parameters()) {
    EXPECT_TRUE(t.is_same(params[name])) << name;
    EXPECT_EQ(t.rawData(), storage[i++]) << name;  // nothing copied
    EXPECT_TRUE(t.requires_grad()) << name;
    EXPECT_TRUE(t.is_leaf()) << name;
    EXPECT_EQ(t.device(), Device(kCPU)) << name;
  }
  for (const auto& [name, t] : net->named_buffers()) EXPECT_TRUE(t.is_same(buffers[name])) << name;
  EXPECT_TRUE(net->fc1->weight.grad().is_same(grad));
  EXPECT_EQ(valuesAsDouble(net->fc1->weight), before);
}

TEST(ModuleTest, ToCudaWithoutADeviceSaysWhyAndMovesNothing) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present (test/gpu covers it)";
  Net net;
  Tensor weight = net->fc1->weight;
  for (Device device : {Device(kCUDA), Device(kCUDA, 1)}) {
    try {
      net->to(device);
      FAIL() << "moved to " << device << " without a CUDA device";
    } catch (const Error& e) {
      EXPECT_TRUE(e.message().starts_with("no CUDA device")) << e.message();
      EXPECT_THAT(e.message(), HasSubstr(cuda::unavailable_reason()));
      EXPECT_EQ(e.op(), "Module::to");
    }
  }
  // LibTorch's spelling, through a holder.
  EXPECT_THAT([&] { net->to(kCUDA); }, ThrowsMessage<Error>(HasSubstr("no CUDA device: ")));
  for (const Tensor& t : net->parameters()) EXPECT_TRUE(t.device().isCPU());
  for (const Tensor& t : net->buffers()) EXPECT_TRUE(t.device().isCPU());
  EXPECT_TRUE(weight.is_same(net->fc1->weight));
}

TEST(ModuleTest, ZeroGrad) {
  Linear fc(3, 2);
  sum(fc->forward(ones({1, 3}))).backward();
  ASSERT_TRUE(fc->weight.grad().defined());
  fc->zero_grad();  // zeroes in place by default, as LibTorch 1.13
  ASSERT_TRUE(fc->weight.grad().defined());
  for (double v : valuesAsDouble(fc->weight.grad())) EXPECT_EQ(v, 0.0);
  fc->zero_grad(/*set_to_none=*/true);
  EXPECT_FALSE(fc->weight.grad().defined());
  EXPECT_FALSE(fc->bias.grad().defined());
}

TEST(ModuleTest, StateDictOrderAndValues) {
  Net net;
  EXPECT_EQ(keysOf(net->state_dict()),
            (std::vector<std::string>{"scale", "steps", "fc1.weight", "fc1.bias", "block.0.weight",
                                      "block.0.bias", "block.1.weight", "block.1.bias",
                                      "block.1.running_mean", "block.1.running_var",
                                      "block.1.num_batches_tracked"}));
  OrderedDict<Tensor> state = net->state_dict();
  const Tensor& w = state["fc1.weight"];
  EXPECT_FALSE(w.requires_grad());
  EXPECT_EQ(valuesAsDouble(w), valuesAsDouble(net->fc1->weight));
  // The entries alias the module's tensors, as PyTorch's state_dict().
  {
    NoGradGuard noGrad;
    net->fc1->weight.fill_(0.5);
  }
  EXPECT_EQ(valuesAsDouble(w)[0], 0.5);
}

TEST(ModuleTest, StateDictRoundTrip) {
  Net a, b;
  {
    NoGradGuard noGrad;
    a->block[1]->as<BatchNorm2d>()->running_mean.fill_(0.25);
    a->steps.fill_(7);
  }
  ASSERT_NE(valuesAsDouble(a->fc1->weight), valuesAsDouble(b->fc1->weight));
  Tensor bWeight = b->fc1->weight;
  IncompatibleKeys result = b->load_state_dict(a->state_dict());
  EXPECT_TRUE(result.missing_keys.empty());
  EXPECT_TRUE(result.unexpected_keys.empty());
  for (const auto& [name, t] : a->state_dict())
    EXPECT_EQ(valuesAsDouble(t), valuesAsDouble(b->state_dict()[name])) << name;
  EXPECT_TRUE(bWeight.is_same(b->fc1->weight));  // copied in place
  EXPECT_TRUE(bWeight.requires_grad());
  EXPECT_TRUE(bWeight.is_leaf());
  // A copy, not an alias.
  {
    NoGradGuard noGrad;
    a->fc1->weight.fill_(3.0);
  }
  EXPECT_NE(valuesAsDouble(b->fc1->weight)[0], 3.0);
}

TEST(ModuleTest, LoadStateDictConvertsDtypes) {
  Linear a(2, 2), b(2, 2);
  a->to(kFloat64);
  b->load_state_dict(a->state_dict());
  EXPECT_EQ(b->weight.dtype(), kFloat32);
  EXPECT_EQ(valuesAsDouble(b->weight), valuesAsDouble(a->weight.to(kFloat32)));
}

TEST(ModuleTest, StrictLoadListsEveryProblem) {
  Net net;
  OrderedDict<Tensor> state = net->state_dict();
  OrderedDict<Tensor> bad;
  for (const auto& [name, t] : state) {
    if (name == "fc1.bias" || name == "block.1.running_var") continue;  // missing
    if (name == "fc1.weight") bad.insert(name, zeros({2, 4}));        // wrong shape
    else if (name == "block.0.bias") bad.insert(name, zeros({1, 3})); // wrong shape
    else if (name == "scale") bad.insert(name, full({1}, 5.0));      // fine, but not loaded
    else bad.insert(name, t);
  }
  bad.insert("fc2.weight", zeros({1}));  // unexpected
  bad.insert("extra", zeros({1}));       // unexpected
  auto load = [&] { net->load_state_dict(bad); };  // the error points at this line
  const std::string at = std::string(kiln::detail::displayPath(__FILE__)) + ":" +
                         std::to_string(__LINE__ - 2);
  EXPECT_THAT(load, ThrowsMessage<Error>(::testing::StrEq(
                        "kiln::load_state_dict: error(s) in loading the state dict of Net:\n"
                        "  missing keys: \"fc1.bias\", \"block.1.running_var\"\n"
                        "  unexpected keys: \"fc2.weight\", \"extra\"\n"
                        "  size mismatch for fc1.weight: [2, 4] in the state dict, [3, 4] in the "
                        "module\n"
                        "  size mismatch for block.0.bias: [1, 3] in the state dict, [3] in the "
                        "module (at " + at + ")")));
  EXPECT_EQ(valuesAsDouble(net->scale), std::vector<double>{1.0});  // nothing was copied
}

TEST(ModuleTest, NonStrictLoadReportsKeysButStillRejectsShapes) {
  Linear fc(3, 2);
  OrderedDict<Tensor> partial;
  partial.insert("weight", full({2, 3}, 0.5));
  partial.insert("other", zeros({1}));
  IncompatibleKeys result = fc->load_state_dict(partial, /*strict=*/false);
  EXPECT_EQ(result.missing_keys, std::vector<std::string>{"bias"});
  EXPECT_EQ(result.unexpected_keys, std::vector<std::string>{"other"});
  EXPECT_EQ(valuesAsDouble(fc->weight), std::vector<double>(6, 0.5));

  OrderedDict<Tensor> wrong;
  wrong.insert("weight", zeros({3, 2}));
  EXPECT_THAT([&] { fc->load_state_dict(wrong, /*strict=*/false); },
              ThrowsMessage<Error>(::testing::AllOf(
                  HasSubstr("size mismatch for weight: [3, 2] in the state dict, [2, 3] in the module"),
                  ::testing::Not(HasSubstr("missing")))));
}

TEST(ModuleTest, HolderBasics) {
  Linear fc(4, 2);
  EXPECT_TRUE(bool(fc));
  EXPECT_EQ(fc->options.in_features(), 4);
  Linear alias = fc;  // holders share the module
  EXPECT_EQ(alias.get(), fc.get());
  Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_THAT([&] { empty->forward(ones({1, 4})); },
              ThrowsMessage<Error>(HasSubstr("empty holder")));
  empty = fc;
  EXPECT_EQ(empty->weight.sizes(), (Shape{2, 4}));
  Tensor y = fc(ones({3, 4}));  // operator() forwards
  EXPECT_EQ(y.sizes(), (Shape{3, 2}));
  MSELoss loss;
  EXPECT_EQ(loss(zeros({2}), ones({2})).item<float>(), 1.0f);
  std::shared_ptr<Module> base = fc.ptr();
  EXPECT_EQ(base->as<Linear>(), fc.get());
  EXPECT_EQ(base->as<LinearImpl>(), fc.get());
  EXPECT_EQ(base->as<Conv2d>(), nullptr);
}

TEST(ModuleTest, ReplaceModule) {
  Net net;
  net->replace_module("fc1", Linear(4, 5).ptr());
  EXPECT_EQ(net->named_parameters()["fc1.weight"].sizes(), (Shape{5, 4}));
  EXPECT_EQ(net->named_children().keys(), (std::vector<std::string>{"fc1", "block"}));
  EXPECT_THAT([&] { net->replace_module("nope", Linear(1, 1).ptr()); },
              ThrowsMessage<Error>(HasSubstr("no submodule")));
}

TEST(ModuleTest, Names) {
  EXPECT_EQ(Linear(1, 1)->name(), "Linear");
  EXPECT_EQ(Net()->name(), "Net");
  EXPECT_EQ(Module("Custom").name(), "Custom");
  EXPECT_EQ(Module().name(), "Module");
}

TEST(ModuleTest, PrintsTheTree) {
  Sequential model(Linear(784, 256), ReLU(), Linear(256, 10));
  std::ostringstream os;
  os << model;
  EXPECT_EQ(os.str(),
            "Sequential(\n"
            "  (0): Linear(in_features=784, out_features=256, bias=true)\n"
            "  (1): ReLU()\n"
            "  (2): Linear(in_features=256, out_features=10, bias=true)\n"
            ")");
  std::ostringstream nested;
  nested << *Net();
  EXPECT_EQ(nested.str(),
            "Net(\n"
            "  (fc1): Linear(in_features=4, out_features=3, bias=true)\n"
            "  (block): Sequential(\n"
            "    (0): Linear(in_features=3, out_features=3, bias=true)\n"
            "    (1): BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)\n"
            "  )\n"
            ")");
  std::ostringstream leaf;
  leaf << Module("Empty");
  EXPECT_EQ(leaf.str(), "Empty()");
}

TEST(ModuleTest, ApplyVisitsEveryModuleWithItsName) {
  Net net;
  std::vector<std::string> names;
  net->apply([&](const std::string& name, Module& m) { names.push_back(name + "=" + m.name()); });
  EXPECT_EQ(names, (std::vector<std::string>{"=Net", "fc1=Linear", "block=Sequential",
                                             "block.0=Linear", "block.1=BatchNorm2d"}));
  int count = 0;
  net->apply([&](Module&) { ++count; });
  EXPECT_EQ(count, 5);
}

// Writes down what it is told: "> Linear [2, 4]" on entry, "< Linear [2, 3]" on exit.
class RecordingObserver final : public ForwardObserver {
 public:
  void onForwardBegin(const Module& module, std::span<const Tensor> inputs) override {
    record(">", module, inputs);
  }
  void onForwardEnd(const Module& module, std::span<const Tensor> outputs) override {
    record("<", module, outputs);
  }
  std::vector<std::string> events;

 private:
  void record(const char* what, const Module& module, std::span<const Tensor> tensors) {
    using kiln::operator<<;  // Shape's, hidden by nn's
    std::ostringstream os;
    os << what << " " << module.name();
    for (const Tensor& t : tensors) os << " " << t.sizes();
    events.push_back(os.str());
  }
};

TEST(ModuleTest, ForwardObserverSeesHolderAndSequentialCallsOnce) {
  Sequential model(Linear(4, 3), ReLU());
  Net net;
  Tensor x = ones({2, 4});
  const std::vector<std::string> sequentialCall{"> Sequential [2, 4]", "> Linear [2, 4]",
                                                "< Linear [2, 3]",     "> ReLU [2, 3]",
                                                "< ReLU [2, 3]",       "< Sequential [2, 3]"};
  RecordingObserver observer;
  {
    ForwardObserverGuard guard(&observer);
    EXPECT_EQ(currentForwardObserver(), &observer);
    model(x);  // the holder's call enters Sequential::forward: reported once
    EXPECT_EQ(observer.events, sequentialCall);
    observer.events.clear();
    model->forward(x);  // Sequential::forward reports itself
    EXPECT_EQ(observer.events, sequentialCall);
    observer.events.clear();
    net->forward(x);  // a custom forward called directly, calling fc1->forward directly
    EXPECT_THAT(observer.events, ::testing::IsEmpty());
    net(x);
    EXPECT_EQ(observer.events, (std::vector<std::string>{"> Net [2, 4]", "< Net [2, 3]"}));
  }
  EXPECT_EQ(currentForwardObserver(), nullptr);
  observer.events.clear();
  model(x);
  EXPECT_THAT(observer.events, ::testing::IsEmpty());
}

TEST(ModuleTest, ForwardObserverAfterAThrowingForward) {
  Sequential model(Linear(4, 3));
  RecordingObserver observer;
  ForwardObserverGuard guard(&observer);
  EXPECT_THROW(model(ones({2, 5})), ShapeError);
  EXPECT_EQ(observer.events, (std::vector<std::string>{"> Sequential [2, 5]", "> Linear [2, 5]"}));
  observer.events.clear();
  model(ones({2, 4}));  // the unwound calls are not taken for calls in progress
  EXPECT_EQ(observer.events.size(), 4u);
}

}  // namespace
}  // namespace kiln::nn
