// What the Fashion-MNIST examples share: finding and preparing the data, the ARCHITECTURE.md §1
// MLP, and scoring a model on the test set.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "examples/common/Flags.h"
#include "examples/common/Metrics.h"
#include "kiln/core/Device.h"
#include "kiln/core/Tensor.h"
#include "kiln/data/DataLoader.h"
#include "kiln/data/MNIST.h"
#include "kiln/nn/Modules.h"

namespace kiln::examples {

// The flags both Fashion-MNIST programs take, with their defaults.
struct TrainingOptions {
  std::string data = "/usr/share/datasets/fashion-mnist";
  int64_t epochs = 2;
  int64_t batchSize = 64;
  double lr = 0.05;
  double momentum = 0.9;
  uint64_t seed = 0;
  std::optional<int64_t> limit;
  std::string metrics;  // --metrics: CSV of the training curves, "" for none
  bool distributed = false;  // --distributed: one rank of an MPI job (DataParallel.h)
};
// Declares --data, --epochs, --batch-size, --lr (described by `lrHelp`), --momentum,
// --seed and --metrics; --limit is declared by addLimitFlag, last, so usage lists it after a
// program's own flags.
void addTrainingFlags(Flags& flags, TrainingOptions& o, const std::string& lrHelp);
void addLimitFlag(Flags& flags, TrainingOptions& o);
// Declares --distributed (data-parallel training over the ranks of an MPI job, batch
// o.batchSize in all).
void addDistributedFlag(Flags& flags, TrainingOptions& o);
// Declares --device: "cpu" (the default) or "cuda" ("cuda:N" for another GPU), read into
// `device` and checked by requireDevice.
void addDeviceFlag(Flags& flags, std::string& device);
// The device `text` names. Exits through `flags` (status 2, with the usage) for a name that
// is not a device, and with status 2 and the one line "<program>: no CUDA device: <why>"
// when it names a CUDA device this machine does not have.
Device requireDevice(Flags& flags, const std::string& text);
// On a CUDA device: "device cuda:0 (NVIDIA H100 80GB HBM3, sm_90)". Nothing on the CPU, whose
// output stays as it was before --device.
void printDevice(Device device);
// On a CUDA device: the caching allocator's statistics (kiln::cuda::memory_stats), as
// "CUDA memory: allocated 1.2 MiB, peak 3.4 MiB, cached 2.0 MiB, 12 device allocations,
// 3400 cache hits of 3412 allocations". Nothing on the CPU.
void printCudaMemoryStats(Device device);

// Exits through `flags` when the directory `path` would be written into does not exist.
void requireParentDirectory(Flags& flags, const std::string& flag, const std::string& path);

// Runs `program`'s body: first moves to BUILD_WORKING_DIRECTORY (`bazel run` starts
// programs in their runfiles tree, and relative paths are the user's), then turns an
// exception into a one-line message and exit status 1.
int runProgram(const char* program, const std::function<int()>& body);

// Exits with status 2 and a message saying where the data is expected and how to get it
// (Debian's dataset-fashion-mnist, or --data DIR) when an idx file is missing from `dir`.
void requireFashionMnist(const std::string& program, const std::string& dir);

struct Accuracy {
  int64_t correct = 0;
  int64_t total = 0;
  double percent() const { return total ? 100.0 * double(correct) / double(total) : 0.0; }
  std::string text() const;  // "87.70%"
};

// The processes a program trains on, as its training loop sees them: which one this is,
// how many there are, and sums over them. This base class is one process; a data-parallel
// job's ranks are DataParallel.h's (MPI), and every rank calls each function in the same
// order.
class Replicas {
 public:
  virtual ~Replicas() = default;
  virtual int rank() const { return 0; }
  virtual int size() const { return 1; }
  // Element by element, `values` summed over the ranks (every rank passes as many).
  virtual std::vector<double> sum(std::vector<double> values) const { return values; }
  // Replaces each floating-point tensor of `tensors` with its mean over the ranks, in
  // place (what BatchNorm's running statistics became on each rank's share).
  virtual void average(const std::vector<Tensor>& /*tensors*/) const {}
  // How many of `tensors` are not bit for bit the same on every rank.
  virtual int64_t countUnequal(const std::vector<Tensor>& /*tensors*/) const { return 0; }

  // Rank 0 prints and writes the files.
  bool root() const { return rank() == 0; }
  // The ranks' mean of `value`.
  double mean(double value) const { return sum({value})[0] / double(size()); }
  // The ranks' scores on their shares of a set, as one score on the whole set.
  Accuracy sumScores(const Accuracy& score) const;
};

// Over several replicas, on rank 0: "data parallel over N ranks: batch B per rank, B·N
// in all". Nothing in one process, whose output stays as it was.
void printDataParallel(const Replicas& replicas, int64_t batchSize);

// Over several replicas, whether `model`'s parameters and buffers are the same on every
// rank, as data-parallel training keeps them; rank 0 prints "replicas: P parameters and B
// buffers the same on all N ranks" or "replicas: K of T tensors differ between the N
// ranks". True and silent in one process.
bool checkReplicasEqual(const Replicas& replicas, const nn::Module& model);

// Images as normalized [N, 784] rows beside their labels, cut to the first `limit`
// examples. Normalized with Fashion-MNIST's mean and std, as torchvision's
// Normalize((0.2860,), (0.3530,)), once and in place: a per-example transform would repeat
// the same arithmetic every epoch, and a normalized copy would hold the 188 MB of training
// images twice.
data::TensorDataset prepareFashionMnist(data::MNIST set, std::optional<int64_t> limit);

// The training loader's options: batches of o.batchSize shuffled per epoch from o.seed,
// the last short batch left out with `dropLast`. Over several replicas, this rank's share
// of each of those batches: DistributedSampler (seed o.seed, so the ranks' shares of an
// epoch are one process's epoch) and batches of o.batchSize / replicas.size() (which
// joinReplicas checked divides).
data::DataLoaderOptions trainLoaderOptions(const TrainingOptions& o, const Replicas& replicas,
                                           bool dropLast = false);
// The test loader's: batches of 1000; over several replicas, this rank's contiguous
// share of the set (shares differ by at most one example, none is repeated).
data::DataLoaderOptions testLoaderOptions(const Replicas& replicas);
// Every example of `loader`'s TensorDataset, in batches of 1000: the checks rank 0 runs
// alone after training read the whole test set, not its share.
data::DataLoader wholeSet(const data::DataLoader& loader);

// The training set and the test set (loaders with the options above), each cut to
// o.limit; prints (on rank 0) where they came from, how many examples and how long
// loading took.
struct FashionMnistLoaders {
  data::DataLoader train;
  data::DataLoader test;
};
FashionMnistLoaders loadFashionMnist(const TrainingOptions& o, bool dropLast = false,
                                     const Replicas& replicas = Replicas());

// 784-256-256-10 with ReLUs.
nn::Sequential makeMlp();

// One pass over `loader`: `step(x, y)` trains on a batch and returns its loss. Shows a
// progress bar labelled `label`; returns the mean loss and the samples per second. Each
// step's loss and samples per second (batch and step, loading included) go to `metrics`.
// Over several replicas each loss is the ranks' mean (the loss of the whole batch), the
// samples are every rank's, and only rank 0 shows the bar.
std::pair<double, double> trainEpoch(const std::function<Tensor(const Tensor&, const Tensor&)>& step,
                                     data::DataLoader& loader, const std::string& label,
                                     MetricsCsv* metrics = nullptr,
                                     const Replicas& replicas = Replicas());

// `epochs` passes of trainEpoch with `step`, each followed by `endEpoch` (a scheduler's
// step) and `score()` (this rank's score on its share, summed over the ranks), printing
// (on rank 0) "epoch e/E: train loss L, R samples/s, test accuracy A (c/n)"; returns the
// last score. `score` must leave the model in training mode. Steps and scores go to
// `metrics`, written after each epoch.
Accuracy trainEpochs(int64_t epochs,
                     const std::function<Tensor(const Tensor&, const Tensor&)>& step,
                     data::DataLoader& loader, const std::function<Accuracy()>& score,
                     const std::function<void()>& endEpoch = {}, MetricsCsv* metrics = nullptr,
                     const Replicas& replicas = Replicas());

// How often argmax(forward(x)) is the label, over `loader`, without gradients. `forward`
// takes the CPU batch and may answer on another device (a model on a GPU).
Accuracy evaluate(const std::function<Tensor(const Tensor&)>& forward, data::DataLoader& loader);

}  // namespace kiln::examples
