// LibTorch's dataset pipeline (kiln/data/DatasetPipeline.h): a CRTP dataset, map() with
// Normalize<> and Stack<>, make_data_loader with either sampler, and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/data/DatasetPipeline.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln::data {
namespace {

using golden::valuesAsDouble;
using golden::valuesAsInt64;
using kiln::testing::at;
using ::testing::ElementsAre;

// Example i: a [1, 2, 2] image filled with i, target i; `sized` false has no size().
class Squares : public datasets::Dataset<Squares> {
 public:
  explicit Squares(size_t n, bool sized = true) : n_(n), sized_(sized) {}
  Example<> get(size_t index) override {
    ++*calls_;
    return {full({1, 2, 2}, double(index)), full({}, int64_t(index))};
  }
  std::optional<size_t> size() const override { return sized_ ? std::optional(n_) : std::nullopt; }
  int calls() const { return *calls_; }

 private:
  size_t n_;
  bool sized_;
  std::shared_ptr<int> calls_ = std::make_shared<int>(0);
};

TEST(DatasetPipelineTest, MapAppliesATransformToEachExample) {
  Squares squares(3);
  auto normalized = squares.map(transforms::Normalize<>(1.0, 0.5));
  EXPECT_EQ(normalized.size(), std::optional<size_t>(3));
  Example<> e = normalized.get(2);
  EXPECT_THAT(valuesAsDouble(e.data), ElementsAre(2, 2, 2, 2));  // (2 - 1) / 0.5
  EXPECT_THAT(valuesAsInt64(e.target), ElementsAre(2));
  EXPECT_EQ(squares.calls(), 1);  // the lvalue was copied into the map, sharing its counter
  auto halved = std::move(normalized).map([](const Tensor& x) { return x / 2.0; });
  EXPECT_THAT(valuesAsDouble(halved.get(0).data), ElementsAre(-1, -1, -1, -1));
  auto stacked = halved.map(transforms::Stack<>());
  EXPECT_THAT(valuesAsDouble(stacked.get(0).data), ElementsAre(-1, -1, -1, -1));  // identity per example
}

TEST(DatasetPipelineTest, ASequentialLoaderStacksBatchesInOrder) {
  auto loader = make_data_loader<samplers::SequentialSampler>(
      Squares(5).map(transforms::Normalize<>(0.0, 1.0)).map(transforms::Stack<>()), 2);
  EXPECT_EQ(loader->size(), 3u);
  std::vector<int64_t> targets;
  std::vector<Shape> shapes;
  for (Example<>& batch : *loader) {  // a stacked batch is an Example<>, as in LibTorch
    shapes.push_back(batch.data.sizes());
    for (int64_t t : valuesAsInt64(batch.target)) targets.push_back(t);
    EXPECT_EQ(valuesAsDouble(batch.data)[0], double(targets[targets.size() - batch.target.numel()]));
  }
  EXPECT_THAT(targets, ElementsAre(0, 1, 2, 3, 4));
  EXPECT_THAT(shapes, ElementsAre(Shape{2, 1, 2, 2}, Shape{2, 1, 2, 2}, Shape{1, 1, 2, 2}));
}

TEST(DatasetPipelineTest, TheDefaultRandomSamplerShufflesEveryExampleOnce) {
  auto loader = make_data_loader(Squares(6).map(transforms::Stack<>()),
                                 DataLoaderOptions(4).seed(3));
  EXPECT_TRUE(loader->options().shuffle());
  std::vector<int64_t> targets;
  for (auto& batch : *loader)
    for (int64_t t : valuesAsInt64(batch.target)) targets.push_back(t);
  std::vector<int64_t> sorted = targets;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_THAT(sorted, ElementsAre(0, 1, 2, 3, 4, 5));
}

// LibTorch's builder spelling: settings chain, and a batch size converts to options.
TEST(DatasetPipelineTest, OptionsChainAsLibTorchSpellsThem) {
  DataLoaderOptions options = DataLoaderOptions().batch_size(2).workers(2).drop_last(true);
  EXPECT_EQ(options.batch_size(), 2u);
  EXPECT_EQ(options.workers(), 2u);
  EXPECT_TRUE(options.drop_last());
  auto loader = make_data_loader<samplers::SequentialSampler>(Squares(5).map(transforms::Stack<>()), options);
  EXPECT_FALSE(loader->options().shuffle());
  std::vector<int64_t> targets;
  for (auto& batch : *loader)
    for (int64_t t : valuesAsInt64(batch.target)) targets.push_back(t);
  EXPECT_THAT(targets, ElementsAre(0, 1, 2, 3));  // the last, short batch dropped
  DataLoaderOptions fromSize = 64;
  EXPECT_EQ(fromSize.batch_size(), 64u);
  EXPECT_EQ(fromSize.workers(), 0u);
}

TEST(DatasetPipelineTest, AnUnsizedDatasetIsAnError) {
  EXPECT_KILN_ERROR(make_data_loader(Squares(2, false).map(transforms::Stack<>()), 1), Error,
                    "kiln::make_data_loader: the dataset's size() is nullopt; the loader needs a "
                    "dataset of known size" + at());
}

}  // namespace
}  // namespace kiln::data
