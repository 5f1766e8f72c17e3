// LibTorch's dataset pipeline: datasets::Dataset<Self, Example> (a CRTP base with get and
// size), .map(transform) giving a MapDataset, transforms::Stack<>, and make_data_loader,
// which runs the pipeline through Kiln's one DataLoader (DataLoader.h):
//
//   auto data = MyDataset(...).map(transforms::Normalize<>(0.5, 0.25)).map(transforms::Stack<>());
//   auto loader = make_data_loader(std::move(data), /*batch_size=*/64);
//   for (auto& batch : *loader) { batch.data; batch.target; }
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "kiln/core/Error.h"
#include "kiln/data/DataLoader.h"
#include "kiln/data/Dataset.h"
#include "kiln/data/Transforms.h"

namespace kiln::data {

namespace transforms {
// LibTorch's Stack<>: the collation that stacks a batch's examples along a new dim 0.
// Kiln's DataLoader always stacks, so in a pipeline it is the identity on each example
// and marks where the pipeline ends; make_data_loader requires it last, as LibTorch's
// loader would otherwise yield vectors of examples.
template <class T = Example<>>
struct Stack {
  T operator()(T example) const { return example; }
};
}  // namespace transforms

namespace datasets {

template <class Source, class AppliedTransform>
class MapDataset;

// A dataset as LibTorch spells one: `get(index)` one example, `size()` how many (nullopt
// for an unsized stream, which make_data_loader refuses). Self is the derived class.
// get() is called from the DataLoader's workers when DataLoaderOptions::workers() > 0 (Dataset.h).
template <class Self, class SingleExample = Example<>>
class Dataset {
 public:
  using ExampleType = SingleExample;
  virtual ~Dataset() = default;
  virtual ExampleType get(size_t index) = 0;
  virtual std::optional<size_t> size() const = 0;

  // This dataset's examples passed through `transform`: a callable on the example's data
  // (Normalize<>, any Kiln transform) or on the Example, as Kiln's transforms::Transform
  // takes. An lvalue is copied into the result, an rvalue moved.
  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) const& {
    return MapDataset<Self, TransformType>(static_cast<const Self&>(*this), std::move(transform));
  }
  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return MapDataset<Self, TransformType>(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

template <class Source, class AppliedTransform>
class MapDataset : public Dataset<MapDataset<Source, AppliedTransform>, Example<>> {
 public:
  MapDataset(Source dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)), applied_(transform_) {}

  Example<> get(size_t index) override { return applied_(dataset_.get(index)); }
  std::optional<size_t> size() const override { return dataset_.size(); }

  const Source& dataset() const { return dataset_; }
  const AppliedTransform& transform() const { return transform_; }

 private:
  Source dataset_;
  AppliedTransform transform_;
  transforms::Transform applied_;  // transform_, through the one adapter DataLoader uses
};

}  // namespace datasets

// LibTorch's sampler names, as make_data_loader's template argument: RandomSampler (its
// default) shuffles each epoch (DataLoaderOptions::seed() picks the order), SequentialSampler
// keeps the dataset's order.
namespace samplers {
struct RandomSampler {};
struct SequentialSampler {};
}  // namespace samplers

namespace detail {
template <class D>
struct EndsWithStack : std::false_type {};
template <class Source, class T>
struct EndsWithStack<datasets::MapDataset<Source, transforms::Stack<T>>> : std::true_type {};

// A pipeline seen as the DataLoader's Dataset.
template <class D>
class PipelineDataset : public data::Dataset {
 public:
  PipelineDataset(D dataset, size_t size) : dataset_(std::move(dataset)), size_(size) {}
  Example<> get(size_t index) override { return dataset_.get(index); }
  size_t size() const override { return size_; }

 private:
  D dataset_;
  size_t size_;
};
}  // namespace detail

// A DataLoader over `dataset`, whose last map is Stack<>, as a unique_ptr as LibTorch
// returns it (so `for (auto& batch : *loader)`). `options` may be a batch size, as in
// `make_data_loader(std::move(dataset), 64)`. Sampler sets options.shuffle(). Error when
// the dataset's size() is nullopt.
template <class Sampler = samplers::RandomSampler, class D>
std::unique_ptr<DataLoader> make_data_loader(D dataset, DataLoaderOptions options = {},
                                             const SourceLoc& loc = SourceLoc::current()) {
  static_assert(detail::EndsWithStack<D>::value,
                "make_data_loader: end the pipeline with .map(transforms::Stack<>()); Kiln's "
                "loader yields stacked batches only");
  static_assert(std::is_same_v<Sampler, samplers::RandomSampler> ||
                    std::is_same_v<Sampler, samplers::SequentialSampler>,
                "make_data_loader: the sampler is RandomSampler or SequentialSampler");
  const std::optional<size_t> size = dataset.size();
  if (!size)
    throw Error::make(loc, "make_data_loader", "the dataset's size() is nullopt; the loader needs "
                      "a dataset of known size");
  options.shuffle(std::is_same_v<Sampler, samplers::RandomSampler>);
  return std::make_unique<DataLoader>(
      std::make_shared<detail::PipelineDataset<D>>(std::move(dataset), *size), std::move(options), loc);
}

}  // namespace kiln::data
