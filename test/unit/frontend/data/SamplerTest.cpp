// DistributedSampler: equal shares with padding or drop_last, shuffled by epoch and seed,
// and a DataLoader over it.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/data/DataLoader.h"
#include "kiln/data/Sampler.h"
#include "test/unit/frontend/core/ExpectError.h"

namespace kiln::data {
namespace {

using Indices = std::vector<size_t>;

DistributedSampler sampler(size_t replicas, size_t rank, bool shuffle, bool dropLast = false,
                           uint64_t seed = 0) {
  return DistributedSampler(DistributedSamplerOptions{.num_replicas = replicas, .rank = rank,
                                                      .shuffle = shuffle, .seed = seed,
                                                      .drop_last = dropLast});
}

TEST(DistributedSamplerTest, PadsByRepeatingTheStart) {
  // 10 examples on 3 ranks: 12 positions, the last two repeat indices 0 and 1.
  EXPECT_EQ(sampler(3, 0, false).indices(10, 0), Indices({0, 3, 6, 9}));
  EXPECT_EQ(sampler(3, 1, false).indices(10, 0), Indices({1, 4, 7, 0}));
  EXPECT_EQ(sampler(3, 2, false).indices(10, 0), Indices({2, 5, 8, 1}));
  EXPECT_EQ(sampler(3, 2, false).size(10), 4u);
  // Fewer examples than ranks: the order repeats more than once.
  EXPECT_EQ(sampler(5, 3, false).indices(2, 0), Indices({1}));
  EXPECT_EQ(sampler(5, 4, false).indices(2, 0), Indices({0}));
}

TEST(DistributedSamplerTest, DropLastCutsToEqualShares) {
  EXPECT_EQ(sampler(3, 0, false, true).indices(10, 0), Indices({0, 3, 6}));
  EXPECT_EQ(sampler(3, 2, false, true).indices(10, 0), Indices({2, 5, 8}));
  EXPECT_EQ(sampler(3, 2, false, true).size(10), 3u);
}

TEST(DistributedSamplerTest, ShuffledSharesPartitionTheEpochsPermutation) {
  for (uint64_t epoch : {0, 1}) {
    Indices all;
    for (size_t r = 0; r < 4; ++r) {
      Indices mine = sampler(4, r, true, false, 7).indices(20, epoch);
      EXPECT_EQ(mine.size(), 5u);
      all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    Indices want(20);
    for (size_t i = 0; i < 20; ++i) want[i] = i;
    EXPECT_EQ(all, want) << "epoch " << epoch;
  }
  EXPECT_NE(sampler(4, 0, true, false, 7).indices(20, 0), sampler(4, 0, true, false, 7).indices(20, 1));
  EXPECT_NE(sampler(4, 0, true, false, 7).indices(20, 0), sampler(4, 0, true, false, 8).indices(20, 0));
  // The shares are of the order a shuffled DataLoader with the same seed visits.
  const Indices order = detail::visitOrder(20, true, 7);
  EXPECT_EQ(sampler(4, 1, true, false, 7).indices(20, 0),
            Indices({order[1], order[5], order[9], order[13], order[17]}));
}

TEST(DistributedSamplerTest, DataLoaderVisitsTheSamplersIndices) {
  // Example i holds the value i.
  Tensor data = arange(0, 10, 1, kFloat32).reshape({10, 1});
  auto shared = std::make_shared<DistributedSampler>(sampler(3, 1, false));
  DataLoader loader(std::make_shared<TensorDataset>(data),
                    DataLoaderOptions(3).sampler(shared));
  EXPECT_EQ(loader.size(), 2u);
  std::vector<float> seen;
  for (auto& batch : loader)
    for (int64_t i = 0; i < batch.data.size(0); ++i) seen.push_back(batch.data[i][0].item<float>());
  EXPECT_EQ(seen, std::vector<float>({1, 4, 7, 0}));
}

TEST(DistributedSamplerTest, Errors) {
  EXPECT_KILN_ERROR(DistributedSampler({.num_replicas = 0}), Error,
                    "kiln::data::DistributedSampler: num_replicas must be at least 1" + testing::at());
  EXPECT_KILN_ERROR(DistributedSampler({.num_replicas = 2, .rank = 2}), Error,
                    "kiln::data::DistributedSampler: rank 2 is not in [0, 2)" + testing::at());
  auto shared = std::make_shared<DistributedSampler>(sampler(2, 0, false));
  EXPECT_KILN_ERROR(DataLoader(std::make_shared<TensorDataset>(ones({4, 1})),
                               DataLoaderOptions(2).shuffle(true).sampler(shared)),
                    Error,
                    "kiln::data::DataLoader: shuffle and a sampler exclude each other (the "
                    "sampler orders the epoch; DistributedSampler shuffles itself)" + testing::at());
}

}  // namespace
}  // namespace kiln::data
