// Samplers: which dataset indices an epoch visits, in order, for a DataLoader that is given
// one (DataLoaderOptions::sampler). DistributedSampler gives each rank of a data-parallel
// job its own equal share (PyTorch's torch.utils.data.DistributedSampler).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kiln/core/Error.h"

namespace kiln::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The indices epoch `epoch` visits in a dataset of `datasetSize` examples.
  virtual std::vector<size_t> indices(size_t datasetSize, uint64_t epoch) const = 0;
  // How many that is (the same for every epoch).
  virtual size_t size(size_t datasetSize) const = 0;
};

struct DistributedSamplerOptions {
  size_t num_replicas = 1;  // distributed::world_size()
  size_t rank = 0;          // distributed::rank()
  // Epoch e draws a permutation from seed + e, the one a DataLoader with shuffle and the
  // same seed visits in one process: the ranks' shares of it together are that epoch.
  bool shuffle = true;
  uint64_t seed = 0;
  // Leaves out the last examples so that the shares are equal; else they are padded by
  // repeating indices from the start of the epoch's order.
  bool drop_last = false;
};

// Rank r of R visits positions r, r + R, r + 2R, ... of the epoch's order, padded (or cut)
// to a multiple of R, so that every rank has the same number of examples and batches.
class DistributedSampler : public Sampler {
 public:
  // kiln::Error for num_replicas 0 or rank >= num_replicas.
  explicit DistributedSampler(DistributedSamplerOptions options,
                              const SourceLoc& loc = SourceLoc::current());

  std::vector<size_t> indices(size_t datasetSize, uint64_t epoch) const override;
  size_t size(size_t datasetSize) const override;

  const DistributedSamplerOptions& options() const { return options_; }

 private:
  DistributedSamplerOptions options_;
};

namespace detail {
// 0 .. n-1, or its Fisher-Yates shuffle drawn from Philox(seed): the DataLoader's order.
std::vector<size_t> visitOrder(size_t n, bool shuffle, uint64_t seed);
}  // namespace detail

}  // namespace kiln::data
