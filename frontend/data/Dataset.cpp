// TensorDataset: examples as rows of in-memory tensors.
#include "kiln/data/Dataset.h"

namespace kiln::data {

namespace {

// Row i as a view (torch's select(0, i)).
Tensor row(const Tensor& t, int64_t i, const SourceLoc& loc) {
  return t.narrow(0, i, 1, loc).squeeze(0, loc);
}

}  // namespace

TensorDataset::TensorDataset(Tensor data, Tensor targets, const SourceLoc& loc)
    : data_(std::move(data)), targets_(std::move(targets)), loc_(loc) {
  if (!data_.defined() || data_.dim() == 0)
    throw ShapeError::make(loc, "data::TensorDataset",
                           "data must have a dim 0 to index examples along, got ",
                           data_.defined() ? "a 0-d tensor" : "an undefined tensor");
  if (targets_.defined() && (targets_.dim() == 0 || targets_.size(0) != data_.size(0)))
    throw ShapeError::make(loc, "data::TensorDataset", "data has shape ", data_.sizes(),
                           " but targets have shape ", targets_.sizes(),
                           "; both need the same size of dim 0");
}

Example<> TensorDataset::get(size_t index) {
  if (index >= size())
    throw ShapeError::make(loc_, "data::TensorDataset", "index ", index,
                           " is out of range for a dataset of ", size(), " examples");
  const int64_t i = int64_t(index);
  Example<> example{row(data_, i, loc_), Tensor()};
  if (targets_.defined()) example.target = row(targets_, i, loc_);
  return example;
}

size_t TensorDataset::size() const { return size_t(data_.size(0)); }

}  // namespace kiln::data
