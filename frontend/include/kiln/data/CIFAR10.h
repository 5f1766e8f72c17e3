// CIFAR-10: a reader for its binary batches and the CIFAR10 dataset.
#pragma once

#include <string>

#include "kiln/core/Tensor.h"
#include "kiln/data/Dataset.h"

namespace kiln::data {

// One CIFAR-10 binary batch (data_batch_1.bin, ..., test_batch.bin; gzipped or not, by
// magic bytes): records of 1 label byte and 3072 pixel bytes (1024 red, 1024 green, 1024
// blue, rows top to bottom). data: float32 [N, 3, 32, 32] in [0, 1] (b / 255.0f); target:
// int64 [N]. kiln::IOError naming the file and what is wrong: cannot be opened or read,
// corrupt or truncated gzip data, empty, not a whole number of 3073-byte records, or a
// label outside 0-9.
Example<> read_cifar10_batch(const std::string& path, const SourceLoc& loc = SourceLoc::current());

// CIFAR-10 under `root` or `root`/cifar-10-batches-bin (the layout of the official
// cifar-10-binary.tar.gz): data_batch_1.bin ... data_batch_5.bin concatenated in order
// (train) or test_batch.bin (test), each plain or with ".gz". Examples are float32
// [3, 32, 32] images and 0-d int64 labels. IOError when a file is missing (naming the
// directories tried) or bad.
class CIFAR10 : public TensorDataset {
 public:
  explicit CIFAR10(const std::string& root, bool train = true,
                   const SourceLoc& loc = SourceLoc::current());

  const Tensor& images() const { return data(); }
};

}  // namespace kiln::data
