#include "kiln/data/DataLoader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iterator>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <thread>

#include "DataTestSupport.h"
#include "kiln/core/Dispatcher.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"

namespace kiln::data {
namespace {

using testing::at;

// Example i: data [1, 1, 3] = {i, i + 0.25, i + 0.5} (an image a flip can mirror), target
// the 0-d int64 i. `hook` runs first on every get() (to throw or record).
class IndexDataset : public Dataset {
 public:
  explicit IndexDataset(size_t n, std::function<void(size_t)> hook = {})
      : n_(n), hook_(std::move(hook)) {}

  Example<> get(size_t i) override {
    if (hook_) hook_(i);
    const float v = float(i);
    return {tensor(std::vector<float>{v, v + 0.25f, v + 0.5f}, Shape{1, 1, 3}),
            tensor(std::vector<int64_t>{int64_t(i)}, Shape{})};
  }
  size_t size() const override { return n_; }

 private:
  size_t n_;
  std::function<void(size_t)> hook_;
};

std::vector<int64_t> targetsOf(const Batch& batch) {
  const int64_t* p = batch.target.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + batch.target.numel());
}

std::vector<float> dataOf(const Batch& batch) {
  const float* p = batch.data.data_ptr<float>();
  return std::vector<float>(p, p + batch.data.numel());
}

// The dataset indices of one epoch, in the order the batches delivered them.
std::vector<int64_t> runEpoch(DataLoader& loader) {
  std::vector<int64_t> order;
  for (auto& batch : loader)
    for (int64_t i : targetsOf(batch)) order.push_back(i);
  return order;
}

// The documented order: Fisher-Yates on Philox(seed + epoch), swapping i with
// floor(u * (i + 1)) for the 64-bit u of words 2i, 2i + 1.
std::vector<int64_t> expectedShuffle(size_t n, uint64_t seed) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<uint32_t> words(2 * n);
  fillRandomBits(Generator{seed, 0}, words);
  for (size_t i = n - 1; i > 0; --i) {
    const uint64_t u = uint64_t(words[2 * i]) | uint64_t(words[2 * i + 1]) << 32;
    std::swap(order[i], order[size_t((unsigned __int128)u * (i + 1) >> 64)]);
  }
  return order;
}

static_assert(std::input_iterator<DataLoader::Iterator>);

TEST(DataLoaderTest, BatchesStackExamplesAlongDimZero) {
  DataLoader loader(IndexDataset(10), DataLoaderOptions(4));
  EXPECT_EQ(loader.size(), 3u);
  std::vector<Shape> shapes;
  std::vector<int64_t> order;
  for (auto& [data, target] : loader) {
    shapes.push_back(data.sizes());
    EXPECT_EQ(data.dtype(), kFloat32);
    EXPECT_EQ(target.dtype(), kInt64);
    EXPECT_EQ(target.sizes(), (Shape{data.size(0)}));
    EXPECT_FALSE(data.requires_grad());
  }
  EXPECT_EQ(shapes, (std::vector<Shape>{{4, 1, 1, 3}, {4, 1, 1, 3}, {2, 1, 1, 3}}));
  auto it = loader.begin();
  EXPECT_EQ(dataOf(*it), (std::vector<float>{0, 0.25f, 0.5f, 1, 1.25f, 1.5f, 2, 2.25f, 2.5f,
                                             3, 3.25f, 3.5f}));
  EXPECT_EQ(runEpoch(loader), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(DataLoaderTest, DropLastLeavesOutTheShortBatch) {
  DataLoader loader(IndexDataset(10), DataLoaderOptions(4).drop_last(true));
  EXPECT_EQ(loader.size(), 2u);
  EXPECT_EQ(runEpoch(loader), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  DataLoader exact(IndexDataset(8), DataLoaderOptions(4).drop_last(true));
  EXPECT_EQ(exact.size(), 2u);
  EXPECT_EQ(runEpoch(exact).size(), 8u);
  DataLoader tooFew(IndexDataset(3), DataLoaderOptions(4).drop_last(true).workers(2));
  EXPECT_EQ(tooFew.size(), 0u);
  EXPECT_TRUE(runEpoch(tooFew).empty());
}

TEST(DataLoaderTest, EmptyDatasetGivesNoBatches) {
  for (size_t workers : {0, 2}) {
    DataLoader loader(IndexDataset(0), DataLoaderOptions(3).workers(workers));
    EXPECT_EQ(loader.size(), 0u);
    EXPECT_TRUE(loader.begin() == loader.end());
  }
}

TEST(DataLoaderTest, ShuffleVisitsEveryIndexOncePerEpoch) {
  DataLoader loader(IndexDataset(103), DataLoaderOptions(10).shuffle(true).seed(42));
  std::set<std::vector<int64_t>> epochs;
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(loader.epoch(), uint64_t(e));
    std::vector<int64_t> order = runEpoch(loader);
    EXPECT_EQ(order, expectedShuffle(103, 42 + e)) << "epoch " << e;
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(103);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all) << "epoch " << e;
    EXPECT_NE(order, all);
    epochs.insert(order);
  }
  EXPECT_EQ(epochs.size(), 3u) << "each epoch has its own order";
}

TEST(DataLoaderTest, EpochEShufflesWithSeedPlusE) {
  auto firstEpochs = [](uint64_t seed, uint64_t start, int count) {
    DataLoader loader(IndexDataset(50), DataLoaderOptions(7).shuffle(true).seed(seed));
    loader.set_epoch(start);
    std::vector<std::vector<int64_t>> orders;
    for (int e = 0; e < count; ++e) orders.push_back(runEpoch(loader));
    return orders;
  };
  const auto seed5 = firstEpochs(5, 0, 3);
  EXPECT_EQ(firstEpochs(5, 0, 3), seed5) << "deterministic";
  EXPECT_EQ(firstEpochs(6, 0, 1)[0], seed5[1]);
  EXPECT_EQ(firstEpochs(5, 2, 1)[0], seed5[2]) << "set_epoch resumes";
  EXPECT_NE(firstEpochs(9, 0, 1)[0], seed5[0]);
}

// Random transforms, keyed by (epoch, index), and a keyed lambda.
transforms::Transform augmentation() {
  return transforms::Compose{
      transforms::RandomHorizontalFlip(0.5, 3),
      [](const Tensor& x, const SampleKey& key) { return x + double(1000 * key.epoch); },
  };
}

TEST(DataLoaderTest, WorkersGiveTheBatchesOfInlineMode) {
  auto epochs = [](size_t workers, size_t prefetch) {
    DataLoader loader(IndexDataset(57), DataLoaderOptions(5)
                                            .shuffle(true)
                                            .seed(8)
                                            .workers(workers)
                                            .prefetch(prefetch)
                                            .transform(augmentation()));
    std::vector<std::vector<float>> data;
    std::vector<std::vector<int64_t>> targets;
    for (int e = 0; e < 2; ++e)
      for (auto& batch : loader) {
        data.push_back(dataOf(batch));
        targets.push_back(targetsOf(batch));
      }
    return std::pair(data, targets);
  };
  const auto inlineMode = epochs(0, 2);
  ASSERT_EQ(inlineMode.first.size(), 24u);
  // The flips happened: some example of epoch 1 is mirrored ({i + 0.5, i + 0.25, i} + 1000).
  bool mirrored = false;
  for (size_t b = 12; b < 24; ++b)
    for (size_t k = 0; k < inlineMode.first[b].size(); k += 3)
      mirrored |= inlineMode.first[b][k] > inlineMode.first[b][k + 2];
  EXPECT_TRUE(mirrored);
  EXPECT_GE(inlineMode.first[12][0], 1000.0f);
  for (size_t workers : {1, 2, 3, 8})
    for (size_t prefetch : {1, 3}) {
      const auto withWorkers = epochs(workers, prefetch);
      EXPECT_EQ(withWorkers.first, inlineMode.first) << workers << " workers, prefetch " << prefetch;
      EXPECT_EQ(withWorkers.second, inlineMode.second) << workers << " workers, prefetch " << prefetch;
    }
}

TEST(DataLoaderTest, WorkersRunOffTheLoopsThread) {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  auto record = [&](size_t) {
    std::lock_guard lock(mutex);
    threads.insert(std::this_thread::get_id());
  };
  DataLoader inlineLoader(IndexDataset(20, record), DataLoaderOptions(2));
  runEpoch(inlineLoader);
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
  threads.clear();
  DataLoader workers(IndexDataset(20, record), DataLoaderOptions(2).workers(2));
  runEpoch(workers);
  EXPECT_FALSE(threads.contains(std::this_thread::get_id()));
  EXPECT_GE(threads.size(), 1u);
  EXPECT_LE(threads.size(), 2u);
}

// Batch size 1 without shuffling: batch b is dataset index b. The hook records every index
// fetched beyond the window the loop's position allows; the loop waits (however long that
// takes) for the window to fill. A loader that made fewer batches never gets past a wait
// (bazel's timeout fails the test); one that made more fetched an index past the window.
TEST(DataLoaderTest, PrefetchIsBounded) {
  std::atomic<int> gets = 0;
  std::atomic<size_t> allowed = 3;  // indices below this may be fetched
  std::mutex mutex;
  std::vector<size_t> beyond;  // indices fetched outside the window
  {
    DataLoader loader(IndexDataset(100,
                                   [&](size_t i) {
                                     if (i >= allowed) {
                                       std::lock_guard lock(mutex);
                                       beyond.push_back(i);
                                     }
                                     ++gets;
                                   }),
                      DataLoaderOptions(1).workers(2).prefetch(1));
    auto it = loader.begin();  // batch 0 taken: batches 1 and 2 may be made, no more
    while (gets < 3) std::this_thread::yield();
    allowed = 4;
    ++it;  // batch 1 taken: batch 3 may be made
    while (gets < 4) std::this_thread::yield();
  }  // the loader joins its workers
  EXPECT_EQ(gets, 4);
  EXPECT_EQ(beyond, std::vector<size_t>{});
}

TEST(DataLoaderTest, ExceptionsReachTheLoopAtTheirBatch) {
  for (size_t workers : {0, 1, 3}) {
    bool fail = true;
    DataLoader loader(IndexDataset(30,
                                   [&](size_t i) {
                                     if (fail && i == 13) throw std::runtime_error("bad example 13");
                                   }),
                      DataLoaderOptions(4).workers(workers));
    std::vector<int64_t> seen;
    auto it = loader.begin();
    try {
      for (; it != loader.end(); ++it)
        for (int64_t i : targetsOf(*it)) seen.push_back(i);
      ADD_FAILURE() << "no exception with " << workers << " workers";
    } catch (const std::runtime_error& error) {
      EXPECT_STREQ(error.what(), "bad example 13");
    }
    EXPECT_EQ(seen.size(), 12u) << "the three batches before the one holding 13";
    EXPECT_TRUE(it == loader.end()) << "the exception ended the epoch";
    fail = false;
    EXPECT_EQ(runEpoch(loader).size(), 30u) << "a new epoch runs";
    EXPECT_EQ(loader.epoch(), 2u);
  }
}

TEST(DataLoaderTest, KilnErrorsKeepTheirKind) {
  for (size_t workers : {0, 2}) {
    DataLoader loader(IndexDataset(8,
                                   [](size_t i) {
                                     if (i == 0) throw IOError::make(SourceLoc::current(), "op", "gone");
                                   }),
                      DataLoaderOptions(2).workers(workers));
    EXPECT_THROW(loader.begin(), IOError) << "the first batch fails inside begin()";
  }
}

// Counted in dataset get() calls, not time: 4 workers with the default prefetch of 2 make at
// most 8 batches (80 examples) beyond the one the loop waits for, while a loader that
// finished an abandoned epoch before stopping would fetch all 10000 examples.
TEST(DataLoaderTest, BreakingOutAndDestroyingStopsWorkersPromptly) {
  constexpr int kWindow = 4 * 2;  // workers * prefetch batches
  std::atomic<int> gets = 0;
  auto count = [&](size_t) { ++gets; };
  {
    DataLoader loader(IndexDataset(10000, count), DataLoaderOptions(10).workers(4));
    int batches = 0;
    for (auto& batch : loader) {
      (void)batch;
      if (++batches == 2) break;
    }
    loader.begin();  // abandons the running epoch, starts the next
    EXPECT_EQ(loader.epoch(), 2u);
    // Epoch 1: two batches taken when abandoned, so batches 0 to 1 + kWindow at most;
    // epoch 2: batch 0 taken inside begin(), so batches 0 to kWindow at most.
    EXPECT_LE(gets, 10 * ((2 + kWindow) + (1 + kWindow)));
  }
  EXPECT_LE(gets, 10 * ((2 + kWindow) + (1 + kWindow))) << "destroying the loader";
  gets = 0;
  {
    DataLoader loader(IndexDataset(10000, count), DataLoaderOptions(10).workers(4));
    loader.begin();  // batch 0 taken: batch 1 awaited, batches up to kWindow may be made
    while (gets < 10 * (1 + kWindow)) std::this_thread::yield();  // the window fills
  }  // destroyed while the workers wait for the loop
  EXPECT_EQ(gets, 10 * (1 + kWindow));
}

TEST(DataLoaderTest, TakesDatasetsByValueOrSharedPointer) {
  TensorDataset rows(arange(0.0, 12.0, 1.0, kFloat32).reshape({6, 2}));
  DataLoader byValue(rows, DataLoaderOptions(4));
  auto first = byValue.begin();
  EXPECT_EQ(first->data.sizes(), (Shape{4, 2}));
  EXPECT_FALSE(first->target.defined()) << "no targets, no batch target";
  auto shared = std::make_shared<TensorDataset>(rows);
  DataLoader byPointer(shared, DataLoaderOptions(4));
  EXPECT_EQ(&byPointer.dataset(), shared.get());
  EXPECT_EQ(byPointer.size(), 2u);
}

class HalfLabelled : public Dataset {
 public:
  Example<> get(size_t i) override {
    return {zeros({2}), i == 0 ? Tensor() : zeros({}, kInt64)};
  }
  size_t size() const override { return 2; }
};

TEST(DataLoaderTest, OptionAndBatchErrors) {
  EXPECT_KILN_ERROR(DataLoader(IndexDataset(4), DataLoaderOptions(0)), Error,
                    "kiln::data::DataLoader: batch_size must be at least 1" + at());
  EXPECT_KILN_ERROR(DataLoader(IndexDataset(4), DataLoaderOptions().workers(2).prefetch(0)), Error,
                    "kiln::data::DataLoader: prefetch must be at least 1 when workers is 2" +
                        at());
  EXPECT_KILN_ERROR(DataLoader(std::shared_ptr<Dataset>()), Error,
                    "kiln::data::DataLoader: got no dataset (a null pointer)" + at());
  // Batching errors point at the line that made the loader.
  const SourceLoc made = SourceLoc::current();
  DataLoader mixed(HalfLabelled(), DataLoaderOptions(2), made);
  const std::string line = at(made);
  EXPECT_KILN_ERROR(mixed.begin(), Error,
                    "kiln::data::DataLoader: some examples of a batch have a target and some do "
                    "not" + line);
}

TEST(DataLoaderTest, TensorDatasetErrors) {
  EXPECT_KILN_ERROR(TensorDataset(zeros({3, 2}), zeros({4})), ShapeError,
                    "kiln::data::TensorDataset: data has shape [3, 2] but targets have shape "
                    "[4]; both need the same size of dim 0" + at());
  EXPECT_KILN_ERROR(TensorDataset(zeros({})), ShapeError,
                    "kiln::data::TensorDataset: data must have a dim 0 to index examples along, "
                    "got a 0-d tensor" + at());
  const SourceLoc made = SourceLoc::current();
  TensorDataset three(zeros({3, 2}), Tensor(), made);
  const std::string line = at(made);
  EXPECT_KILN_ERROR(three.get(3), ShapeError,
                    "kiln::data::TensorDataset: index 3 is out of range for a dataset of 3 "
                    "examples" + line);
}

// Counts the ops a trace would see.
class CountingHook : public DispatchHook {
 public:
  bool symbolic() const override { return false; }
  void onOp(const OpCall&) override { ++ops; }
  void onValueRead(const Tensor&, std::string_view, const SourceLoc&) override { ++reads; }
  int ops = 0;
  int reads = 0;
};

TEST(DataLoaderTest, DataLoadingIsNeverTraced) {
  DataLoader loader(IndexDataset(6), DataLoaderOptions(2).transform(augmentation()));
  CountingHook hook;
  {
    DispatchHookGuard tracing(&hook);
    int batches = 0;
    for (auto& batch : loader) batches += batch.data.defined();
    EXPECT_EQ(batches, 3);
  }
  EXPECT_EQ(hook.ops, 0);
  EXPECT_EQ(hook.reads, 0);
}

}  // namespace
}  // namespace kiln::data
