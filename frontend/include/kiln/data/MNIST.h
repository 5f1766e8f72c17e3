// MNIST and Fashion-MNIST: readers for idx files (gzipped or not) and the MNIST dataset,
// for Kiln's DataLoader and, as LibTorch spells it, for the dataset pipeline.
#pragma once

#include <optional>
#include <string>

#include "kiln/core/Tensor.h"
#include "kiln/data/Dataset.h"
#include "kiln/data/DatasetPipeline.h"

namespace kiln::data {

// An idx3 unsigned-byte image file (magic 0x00000803) as float32 [N, 1, H, W], each byte
// b read as b / 255.0f (torchvision's ToTensor). A gzip file is recognized by its magic
// bytes, whatever its name. kiln::IOError naming the file and what is wrong: cannot be
// opened or read, corrupt or truncated gzip data, wrong magic, a payload shorter or longer
// than the header's counts.
Tensor read_idx_images(const std::string& path, const SourceLoc& loc = SourceLoc::current());

// An idx1 unsigned-byte label file (magic 0x00000801) as int64 [N]; errors as above.
Tensor read_idx_labels(const std::string& path, const SourceLoc& loc = SourceLoc::current());

// MNIST or Fashion-MNIST under `root`: train-images-idx3-ubyte and train-labels-idx1-ubyte
// (train) or t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (test), each plain or with
// ".gz" (the plain file is preferred), as the original distribution and Debian's
// dataset-fashion-mnist (/usr/share/datasets/fashion-mnist) lay them out. Examples are
// float32 [1, H, W] images in [0, 1] and 0-d int64 labels. IOError when a file is missing
// (naming the directory tried), bad (as above) or the two counts differ.
class MNIST : public TensorDataset {
 public:
  explicit MNIST(const std::string& root, bool train = true,
                 const SourceLoc& loc = SourceLoc::current());

  // All images [N, 1, H, W] and labels [N] (LibTorch's names).
  const Tensor& images() const { return data(); }
};

namespace datasets {

// LibTorch's torch::data::datasets::MNIST: the dataset above as a Dataset<Self>, so that
// `MNIST(root).map(transforms::Normalize<>(0.1307, 0.3081)).map(transforms::Stack<>())`
// feeds make_data_loader. Same files, examples and errors.
class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };

  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain,
                 const SourceLoc& loc = SourceLoc::current());

  Example<> get(size_t index) override { return examples_.get(index); }
  std::optional<size_t> size() const override { return examples_.size(); }
  bool is_train() const noexcept { return mode_ == Mode::kTrain; }
  const Tensor& images() const { return examples_.images(); }
  const Tensor& targets() const { return examples_.targets(); }

 private:
  data::MNIST examples_;
  Mode mode_;
};

}  // namespace datasets

}  // namespace kiln::data
