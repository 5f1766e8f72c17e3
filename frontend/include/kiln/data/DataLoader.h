// DataLoader: batches of a Dataset, shuffled per epoch from a seed, optionally prefetched
// by background threads; `for (auto& [x, y] : loader)` runs one epoch.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>

#include "kiln/core/OptionArg.h"
#include "kiln/core/Tensor.h"
#include "kiln/data/Dataset.h"
#include "kiln/data/Sampler.h"
#include "kiln/data/Transforms.h"

namespace kiln::data {

// Examples stacked along a new dim 0: an Example<>, as LibTorch's Stack<> makes one.
using Batch = Example<>;

// LibTorch's DataLoaderOptions, whose settings chain: `DataLoaderOptions(64).workers(2)`
// (a batch size converts to one, so `make_data_loader(dataset, 64)` reads as LibTorch's).
// shuffle, seed, sampler, prefetch and transform are Kiln's.
class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT: implicit, as LibTorch

  KILN_ARG(size_t, batch_size) = 1;
  // Background threads assembling batches; 0 assembles each batch inline when the loop
  // asks for it. Batches arrive in order and are identical for every value.
  KILN_ARG(size_t, workers) = 0;
  // Leaves out a last batch smaller than batch_size.
  KILN_ARG(bool, drop_last) = false;
  // Epoch e visits the dataset in the order of a permutation drawn from seed + e (a
  // Fisher-Yates shuffle on Philox words), the same for every number of workers.
  KILN_ARG(bool, shuffle) = false;
  KILN_ARG(uint64_t, seed) = 0;
  // Chooses each epoch's indices instead (DistributedSampler); excludes shuffle.
  KILN_ARG(std::shared_ptr<Sampler>, sampler);
  // Batches each worker may have ready ahead of the loop (PyTorch's prefetch_factor).
  KILN_ARG(size_t, prefetch) = 2;
  // Applied to each example, keyed by (epoch, dataset index), before batching.
  KILN_ARG(transforms::Transform, transform);
};

// Iterating starts an epoch: the first begin() is epoch 0, each later one the next epoch
// (set_epoch chooses it, to resume). One epoch runs at a time: begin() ends any epoch still
// running, so only the newest iterator is valid, and none outlives its loader. An
// exception from the dataset or a transform (in a worker or inline) ends the epoch and is
// rethrown to the loop at the batch where it occurred, after the batches before it.
// Destroying the loader mid-epoch stops and joins its workers. Data loading is never
// recorded by a trace and builds no autograd history.
class DataLoader {
 public:
  class Iterator;

  // kiln::Error for batch_size 0, prefetch 0 with workers, or a sampler with shuffle.
  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options = {},
             const SourceLoc& loc = SourceLoc::current());
  // Takes a dataset by value: DataLoader(data::MNIST(root), DataLoaderOptions(64).workers(2)).
  template <class D>
    requires std::derived_from<std::remove_cvref_t<D>, Dataset>
  DataLoader(D&& dataset, DataLoaderOptions options = {},
             const SourceLoc& loc = SourceLoc::current())
      : DataLoader(std::make_shared<std::remove_cvref_t<D>>(std::forward<D>(dataset)),
                   std::move(options), loc) {}
  ~DataLoader();
  DataLoader(DataLoader&&) noexcept;
  DataLoader& operator=(DataLoader&&) noexcept;

  Iterator begin();
  Iterator end();

  // Batches per epoch (len(loader) in PyTorch).
  size_t size() const;
  // The epoch the next begin() starts.
  uint64_t epoch() const { return nextEpoch_; }
  void set_epoch(uint64_t epoch) { nextEpoch_ = epoch; }

  Dataset& dataset() const { return *dataset_; }
  const DataLoaderOptions& options() const { return options_; }

 private:
  class Epoch;

  std::shared_ptr<Dataset> dataset_;
  DataLoaderOptions options_;
  SourceLoc loc_;  // where the loader was made: batching errors point there
  uint64_t nextEpoch_ = 0;
  std::unique_ptr<Epoch> epoch_;  // the running epoch, if any
};

// An input iterator over one epoch's batches. operator++ fetches the next batch (waiting
// for a worker or assembling it) and rethrows what that raised.
class DataLoader::Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = Batch;
  using difference_type = std::ptrdiff_t;
  using pointer = Batch*;
  using reference = Batch&;

  Iterator() = default;  // end

  Batch& operator*() const;
  Batch* operator->() const { return &**this; }
  Iterator& operator++();
  void operator++(int) { ++*this; }
  // Iterators compare by whether they are at the end, which is all a loop asks.
  bool operator==(const Iterator& other) const { return atEnd() == other.atEnd(); }

 private:
  friend class DataLoader;
  explicit Iterator(Epoch* epoch) : epoch_(epoch) {}
  bool atEnd() const;

  Epoch* epoch_ = nullptr;
};

}  // namespace kiln::data
