// torch::save / torch::load (kiln/io/Serialize.h): round trips of a tensor, a list of
// tensors, a module and an optimizer, atomic writes, and the errors for a file of another
// kind and a module of other shapes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/io/Safetensors.h"
#include "kiln/io/Serialize.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/SGD.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/io/IoTestSupport.h"

namespace kiln {
namespace {

using io::testing::freshDir;
using io::testing::listDir;
using io::testing::values;
using kiln::testing::at;
using ::testing::ElementsAre;

TEST(SerializeTest, ATensorRoundTrips) {
  const std::string path = freshDir() + "/x.pt";
  Tensor x = randn({2, 3}, requires_grad());
  save(x, path);
  Tensor loaded;
  load(loaded, path);
  EXPECT_EQ(loaded.sizes(), x.sizes());
  EXPECT_EQ(loaded.dtype(), kFloat32);
  EXPECT_EQ(values(loaded), values(x));
  EXPECT_FALSE(loaded.requires_grad());  // values only, as LibTorch's pickled tensor data
  Tensor ints = tensor({{1, 2}, {3, 4}});
  save(ints, path);  // replaces the file
  load(loaded, path);
  EXPECT_EQ(loaded.dtype(), kInt64);
  EXPECT_THAT(values(loaded), ElementsAre(1, 2, 3, 4));
}

TEST(SerializeTest, AListOfTensorsRoundTripsInOrder) {
  const std::string dir = freshDir();
  std::vector<Tensor> saved;
  for (int64_t i = 0; i < 12; ++i) saved.push_back(full({i % 3 + 1}, double(i)));
  save(saved, dir + "/list.pt");
  std::vector<Tensor> loaded{ones({1})};
  load(loaded, dir + "/list.pt");
  ASSERT_EQ(loaded.size(), saved.size());
  for (size_t i = 0; i < saved.size(); ++i) EXPECT_EQ(values(loaded[i]), values(saved[i])) << i;
  save(std::vector<Tensor>{}, dir + "/empty.pt");
  load(loaded, dir + "/empty.pt");
  EXPECT_TRUE(loaded.empty());
  EXPECT_EQ(listDir(dir), (std::set<std::string>{"empty.pt", "list.pt"}));  // no temporaries left
}

TEST(SerializeTest, AModuleRoundTripsIntoItsOwnTensors) {
  const std::string path = freshDir() + "/model.pt";
  manual_seed(1);
  nn::Sequential model(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2));
  save(model, path);
  manual_seed(2);
  nn::Sequential other(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2));
  std::vector<Tensor> before = other->parameters();
  ASSERT_NE(values(before[0]), values(model->parameters()[0]));
  load(other, path);
  std::vector<Tensor> after = other->parameters();
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_TRUE(after[i].is_same(before[i]));  // loaded in place: optimizers keep working
    EXPECT_EQ(values(after[i]), values(model->parameters()[i]));
  }
}

TEST(SerializeTest, AnOptimizerRoundTripsItsState) {
  const std::string path = freshDir() + "/optimizer.pt";
  nn::Linear model(3, 1);
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  for (int i = 0; i < 2; ++i) {
    optimizer.zero_grad();
    model(ones({4, 3})).sum().backward();
    optimizer.step();
  }
  save(optimizer, path);
  nn::Linear copy(3, 1);
  optim::SGD restored(copy->parameters(), optim::SGDOptions(0.5));
  load(restored, path);
  OrderedDict<Tensor> want = optimizer.state_dict(), got = restored.state_dict();
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, value] : want) EXPECT_EQ(values(got.at(name)), values(value)) << name;
}

TEST(SerializeTest, LoadingIntoAModuleOfOtherShapesIsAnError) {
  const std::string path = freshDir() + "/model.pt";
  save(nn::Linear(4, 3), path);
  nn::Linear narrower(2, 3);
  EXPECT_KILN_ERROR(load(narrower, path), Error,
                    "kiln::load_state_dict: error(s) in loading the state dict of Linear:\n"
                    "  size mismatch for weight: [3, 4] in the state dict, [3, 2] in the module" + at());
}

TEST(SerializeTest, LoadingAnotherKindOfValueIsAnError) {
  const std::string dir = freshDir();
  save(nn::Linear(2, 2), dir + "/model.pt");
  Tensor x;
  EXPECT_KILN_ERROR(load(x, dir + "/model.pt"), IOError,
                    "kiln::load: " + dir + "/model.pt: holds a module, not a tensor" + at());
  OrderedDict<Tensor> plain;
  plain.insert("w", ones({2}));
  io::save(plain, dir + "/plain.safetensors");
  EXPECT_KILN_ERROR(load(x, dir + "/plain.safetensors"), IOError,
                    "kiln::load: " + dir + "/plain.safetensors: has no \"kiln.kind\" metadata, so it "
                    "was not written by kiln::save; read it with io::load" + at());
}

}  // namespace
}  // namespace kiln
