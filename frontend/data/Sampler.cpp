// Epoch orders: the shuffle every loader and sampler shares, and DistributedSampler.
#include "kiln/data/Sampler.h"

#include <numeric>

#include "kiln/core/Random.h"

namespace kiln::data {

namespace detail {

// Step i swaps i with j = floor(u * (i + 1)) for the 64-bit u made of words 2i and 2i + 1
// of the stream.
std::vector<size_t> visitOrder(size_t n, bool shuffle, uint64_t seed) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  if (!shuffle || n < 2) return order;
  std::vector<uint32_t> words(2 * n);
  fillRandomBits(Generator{seed, 0}, words);
  for (size_t i = n - 1; i > 0; --i) {
    const uint64_t u = uint64_t(words[2 * i]) | uint64_t(words[2 * i + 1]) << 32;
    const size_t j = size_t((unsigned __int128)u * (i + 1) >> 64);
    std::swap(order[i], order[j]);
  }
  return order;
}

}  // namespace detail

DistributedSampler::DistributedSampler(DistributedSamplerOptions options, const SourceLoc& loc)
    : options_(options) {
  if (options_.num_replicas == 0)
    throw Error::make(loc, "data::DistributedSampler", "num_replicas must be at least 1");
  if (options_.rank >= options_.num_replicas)
    throw Error::make(loc, "data::DistributedSampler", "rank ", options_.rank,
                      " is not in [0, ", options_.num_replicas, ")");
}

size_t DistributedSampler::size(size_t datasetSize) const {
  const size_t replicas = options_.num_replicas;
  return options_.drop_last ? datasetSize / replicas : (datasetSize + replicas - 1) / replicas;
}

std::vector<size_t> DistributedSampler::indices(size_t datasetSize, uint64_t epoch) const {
  std::vector<size_t> order =
      detail::visitOrder(datasetSize, options_.shuffle, options_.seed + epoch);
  const size_t total = size(datasetSize) * options_.num_replicas;
  // Padding repeats the order from its start, as often as needed (more than once only
  // when there are fewer examples than ranks).
  for (size_t i = 0; order.size() < total; ++i) order.push_back(order[i]);
  std::vector<size_t> mine;
  for (size_t i = options_.rank; i < total; i += options_.num_replicas) mine.push_back(order[i]);
  return mine;
}

}  // namespace kiln::data
