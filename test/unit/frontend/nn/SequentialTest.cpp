// Sequential and ModuleList: construction from holders, shared_ptrs and values, indexing,
// forward chaining, naming and printing.
#include "kiln/nn/Sequential.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "kiln/core/Functional.h"
#include "kiln/nn/Modules.h"
#include "test/unit/frontend/Golden.h"

namespace kiln::nn {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using golden::valuesAsDouble;

// A user module whose forward takes no source location.
struct DoubleItImpl : Module {
  Tensor forward(const Tensor& x) { return x * 2.0; }
};
KILN_MODULE(DoubleIt);

TEST(SequentialTest, ForwardChainsTheChildren) {
  Sequential model(Linear(4, 3), ReLU(), Linear(3, 2));
  Tensor x = tensor(std::vector<float>{1, -2, 3, 0.5f, -1, 0, 2, 1}, Shape{2, 4});
  Tensor expected = model->ptr<LinearImpl>(2)->forward(relu(model->at<LinearImpl>(0).forward(x)));
  Tensor y = model->forward(x);
  EXPECT_EQ(y.sizes(), (Shape{2, 2}));
  EXPECT_EQ(valuesAsDouble(y), valuesAsDouble(expected));
  EXPECT_EQ(valuesAsDouble(model(x)), valuesAsDouble(expected));
}

TEST(SequentialTest, AcceptsHoldersSharedPtrsAndValues) {
  auto shared = std::make_shared<DoubleItImpl>();
  Sequential model(DoubleIt(), shared, DoubleItImpl());
  model->push_back(Sequential(DoubleIt()));  // nested
  model->push_back("last", Tanh());
  EXPECT_EQ(model->size(), 5u);
  EXPECT_EQ(model[1].get(), shared.get());
  EXPECT_EQ(model->named_children().keys(),
            (std::vector<std::string>{"0", "1", "2", "3", "last"}));
  Tensor y = model->forward(full({1}, 0.01));
  EXPECT_NEAR(y.item<double>(), std::tanh(0.16), 1e-7);
}

TEST(SequentialTest, Indexing) {
  Sequential model(Linear(1, 2), ReLU());
  EXPECT_NE(model[0]->as<Linear>(), nullptr);
  EXPECT_EQ(model[-1].get(), model[1].get());
  EXPECT_EQ(model->ptr<ReLUImpl>(1).get(), model[1].get());
  EXPECT_EQ(model->ptr<LinearImpl>(1), nullptr);
  EXPECT_THAT([&] { model[2]; },
              ThrowsMessage<Error>(HasSubstr("Sequential: index 2 is out of range for 2 modules")));
  EXPECT_THAT([&] { model->at<LinearImpl>(1); },
              ThrowsMessage<Error>(HasSubstr("not of the requested type")));
  int count = 0;
  for (const auto& m : *model) count += m != nullptr;
  EXPECT_EQ(count, 2);
}

TEST(SequentialTest, EmptyForwardIsAnError) {
  Sequential empty;
  EXPECT_TRUE(empty->is_empty());
  EXPECT_THAT([&] { empty->forward(ones({1})); },
              ThrowsMessage<Error>(HasSubstr("forward() on an empty Sequential")));
}

TEST(SequentialTest, DuplicateNamesAreRejectedWithoutLeavingACall) {
  Sequential model{ReLU()};
  EXPECT_THAT([&] { model->push_back("0", ReLU()); },
              ThrowsMessage<Error>(HasSubstr("submodule named '0'")));
  EXPECT_EQ(model->size(), 1u);
  EXPECT_EQ(model->forward(full({1}, -1.0)).item<double>(), 0.0);
}

TEST(SequentialTest, ParametersOfChildren) {
  Sequential model(Linear(2, 3), ReLU(), Linear(LinearOptions(3, 1).bias(false)));
  EXPECT_EQ(model->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight"}));
}

TEST(ModuleListTest, HoldsModulesWithoutForward) {
  ModuleList list(Linear(2, 3), Tanh());
  list->push_back(CrossEntropyLoss());  // any module, forward or not
  EXPECT_EQ(list->size(), 3u);
  EXPECT_NE(list[0]->as<Linear>(), nullptr);
  EXPECT_NE(list[2]->as<CrossEntropyLoss>(), nullptr);
  std::vector<std::shared_ptr<Module>> more{Linear(1, 1).ptr()};
  list->extend(more);
  EXPECT_EQ(list->named_parameters().keys(),
            (std::vector<std::string>{"0.weight", "0.bias", "3.weight", "3.bias"}));
  std::ostringstream os;
  os << list;
  EXPECT_EQ(os.str(),
            "ModuleList(\n"
            "  (0): Linear(in_features=2, out_features=3, bias=true)\n"
            "  (1): Tanh()\n"
            "  (2): CrossEntropyLoss()\n"
            "  (3): Linear(in_features=1, out_features=1, bias=true)\n"
            ")");
}

TEST(SequentialTest, ChildrenCannotBeReplaced) {
  Sequential model{ReLU(), Tanh()};
  EXPECT_THAT([&] { model->replace_module("1", Sigmoid().ptr()); },
              ThrowsMessage<Error>(HasSubstr("cannot replace child '1' of a Sequential")));
}

TEST(ModuleListTest, ReplaceModuleKeepsTheIndexInStep) {
  ModuleList list{ReLU(), Tanh()};
  auto sigmoid = Sigmoid().ptr();
  list->replace_module("1", sigmoid);
  EXPECT_EQ(list[1].get(), sigmoid.get());
  EXPECT_EQ(list->children()[1].get(), sigmoid.get());
  EXPECT_THAT([&] { list->replace_module("2", sigmoid); },
              ThrowsMessage<Error>(HasSubstr("replace_module: no submodule named '2'")));
}

TEST(ModuleListTest, RegisteredAsAChild) {
  struct TowerImpl : Module {
    TowerImpl() {
      layers = register_module("layers", ModuleList(Linear(2, 2), Linear(2, 2)));
    }
    ModuleList layers{nullptr};
  };
  auto tower = std::make_shared<TowerImpl>();
  EXPECT_EQ(tower->named_parameters().keys(),
            (std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.1.weight",
                                      "layers.1.bias"}));
}

}  // namespace
}  // namespace kiln::nn
