// Datasets: the Example a dataset returns, the Dataset interface the DataLoader reads, and
// TensorDataset over in-memory tensors (torch::data's datasets, simplified).
#pragma once

#include <cstddef>

#include "kiln/core/Tensor.h"

namespace kiln::data {

// One sample: its input and its label, as LibTorch's torch::data::Example<> (the types
// are parameters there too; the DataLoader batches Example<>). `target` may be undefined
// (unlabelled data); a batch then has an undefined target too.
template <class Data = Tensor, class Target = Tensor>
struct Example {
  Data data;
  Target target;
};

// Random access to `size()` examples. The DataLoader calls get() from its worker threads,
// several at once when DataLoaderOptions::workers() > 1, so an implementation must allow concurrent calls
// (read-only state after construction is enough; the built-in datasets are so).
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual Example<> get(size_t index) = 0;
  virtual size_t size() const = 0;
};

// Examples are the rows of `data` and `targets` (dim 0), as PyTorch's TensorDataset:
// get(i) returns views of row i. `targets` may be undefined.
class TensorDataset : public Dataset {
 public:
  // ShapeError when the two tensors disagree on their number of rows or `data` is 0-d.
  TensorDataset(Tensor data, Tensor targets = Tensor(),
                const SourceLoc& loc = SourceLoc::current());

  Example<> get(size_t index) override;
  size_t size() const override;

  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_;
  Tensor targets_;
  SourceLoc loc_;
};

}  // namespace kiln::data
