#include "examples/common/FashionMnist.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include <unistd.h>

#include "examples/common/ProgressBar.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Cuda.h"
#include "kiln/core/Ops.h"
#include "kiln/data/Sampler.h"

namespace kiln::examples {

namespace fs = std::filesystem;

void addTrainingFlags(Flags& flags, TrainingOptions& o, const std::string& lrHelp) {
  flags.add("data", o.data, "DIR", "directory of the Fashion-MNIST idx files (.gz or plain)");
  flags.add("epochs", o.epochs, "N", "passes over the training set");
  flags.add("batch-size", o.batchSize, "N", "training examples per step");
  flags.add("lr", o.lr, "X", lrHelp, 0.0, 10.0);
  flags.add("momentum", o.momentum, "X", "SGD momentum", 0.0, 0.999);
  flags.add("seed", o.seed, "N", "seeds the initial weights and the shuffling");
  flags.add("metrics", o.metrics, "PATH",
            "write each step's loss and samples/s and each epoch's test accuracy as CSV\n"
            "(scripts/plot_metrics.py plots it)");
}

void addLimitFlag(Flags& flags, TrainingOptions& o) {
  flags.add("limit", o.limit, "N", "use only the first N training and N test examples", "all");
}

void addDistributedFlag(Flags& flags, TrainingOptions& o) {
  flags.add("distributed", o.distributed,
            "train data-parallel as one rank of an MPI job (mpirun -np N ...): each rank\n"
            "takes --batch-size / N examples of every batch, rank 0 prints");
}

void addDeviceFlag(Flags& flags, std::string& device) {
  flags.add("device", device, "DEVICE", "where the model trains: cpu, or cuda (cuda:N for another GPU)");
}

Device requireDevice(Flags& flags, const std::string& text) {
  Device device;
  try {
    device = Device::parse(text);
  } catch (const Error&) {
    flags.fail("--device: '" + text + "' is not cpu or cuda");
  }
  if (device.isCUDA()) {
    std::string why;
    if (!cuda::is_available()) why = cuda::unavailable_reason();
    else if (device.index >= cuda::device_count())
      why = device.str() + " does not exist (this machine has " + std::to_string(cuda::device_count()) +
            (cuda::device_count() == 1 ? " device)" : " devices)");
    if (!why.empty()) {
      std::cerr << flags.program() << ": no CUDA device: " << why << "\n";
      std::exit(2);
    }
  }
  return device;
}

void printDevice(Device device) {
  if (!device.isCUDA()) return;
  std::printf("device %s (%s, %s)\n", device.str().c_str(), cuda::device_name(device.index).c_str(),
              cuda::device_arch(device.index).c_str());
  std::fflush(stdout);
}

void printCudaMemoryStats(Device device) {
  if (!device.isCUDA()) return;
  cuda::synchronize(device.index);
  const cuda::MemoryStats s = cuda::memory_stats(device.index);
  const auto mib = [](size_t bytes) { return double(bytes) / (1024.0 * 1024.0); };
  std::printf("CUDA memory on %s: allocated %.1f MiB, peak %.1f MiB, cached %.1f MiB, "
              "%llu device allocations, %llu cache hits of %llu allocations\n",
              device.str().c_str(), mib(s.allocated_bytes), mib(s.peak_allocated_bytes),
              mib(s.cached_bytes), (unsigned long long)s.device_allocations,
              (unsigned long long)s.cache_hits, (unsigned long long)s.allocations);
  std::fflush(stdout);
}

void requireParentDirectory(Flags& flags, const std::string& flag, const std::string& path) {
  // What is written comes after training: a path that cannot be written should fail first.
  if (fs::path dir = fs::absolute(path).parent_path(); !fs::is_directory(dir))
    flags.fail("--" + flag + ": " + dir.string() + " is not a directory");
}

int runProgram(const char* program, const std::function<int()>& body) {
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir && chdir(dir) != 0) {
    std::perror(dir);
    return 1;
  }
  try {
    return body();
  } catch (const std::exception& e) {  // kiln::Error, and the file system's errors
    std::cerr << program << ": " << e.what() << "\n";
    return 1;
  }
}

void requireFashionMnist(const std::string& program, const std::string& dir) {
  for (const char* stem : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    if (fs::is_regular_file(fs::path(dir) / stem) ||
        fs::is_regular_file(fs::path(dir) / (std::string(stem) + ".gz")))
      continue;
    std::cerr << program << ": no Fashion-MNIST in " << fs::absolute(dir).string() << " ("
              << stem
              << "[.gz] not found); Debian's dataset-fashion-mnist package installs it in "
                 "/usr/share/datasets/fashion-mnist, or pass --data DIR\n";
    std::exit(2);
  }
}

data::TensorDataset prepareFashionMnist(data::MNIST set, std::optional<int64_t> limit) {
  Tensor images = set.images();  // shares the storage of `set`, which is ours to change
  Tensor labels = set.targets();
  if (limit && *limit < images.size(0)) {
    images = images.narrow(0, 0, *limit);
    labels = labels.narrow(0, 0, *limit);
  }
  images.sub_(scalar_tensor(0.2860)).div_(scalar_tensor(0.3530));
  return data::TensorDataset(images.flatten(1), labels);
}

Accuracy Replicas::sumScores(const Accuracy& score) const {
  std::vector<double> both = sum({double(score.correct), double(score.total)});
  return {int64_t(both[0]), int64_t(both[1])};
}

void printDataParallel(const Replicas& replicas, int64_t batchSize) {
  if (replicas.size() == 1 || !replicas.root()) return;
  std::printf("data parallel over %d ranks: batch %lld per rank, %lld in all\n", replicas.size(),
              (long long)(batchSize / replicas.size()), (long long)batchSize);
}

bool checkReplicasEqual(const Replicas& replicas, const nn::Module& model) {
  if (replicas.size() == 1) return true;
  std::vector<Tensor> tensors = model.parameters();
  const size_t parameters = tensors.size();
  for (const Tensor& b : model.buffers()) tensors.push_back(b);
  const int64_t unequal = replicas.countUnequal(tensors);
  if (!replicas.root()) return unequal == 0;
  if (unequal == 0)
    std::printf("replicas: %zu parameters and %zu buffers the same on all %d ranks\n", parameters,
                tensors.size() - parameters, replicas.size());
  else
    std::printf("replicas: %lld of %zu tensors differ between the %d ranks\n", (long long)unequal,
                tensors.size(), replicas.size());
  return unequal == 0;
}

namespace {

// Rank r of n visits examples [r·size/n, (r+1)·size/n) in order.
class ContiguousShare : public data::Sampler {
 public:
  ContiguousShare(size_t rank, size_t ranks) : rank_(rank), ranks_(ranks) {}
  std::vector<size_t> indices(size_t datasetSize, uint64_t /*epoch*/) const override {
    std::vector<size_t> share(size(datasetSize));
    for (size_t i = 0; i < share.size(); ++i) share[i] = begin(datasetSize) + i;
    return share;
  }
  size_t size(size_t datasetSize) const override {
    return datasetSize * (rank_ + 1) / ranks_ - begin(datasetSize);
  }

 private:
  size_t begin(size_t datasetSize) const { return datasetSize * rank_ / ranks_; }
  size_t rank_, ranks_;
};

}  // namespace

data::DataLoaderOptions trainLoaderOptions(const TrainingOptions& o, const Replicas& replicas,
                                           bool dropLast) {
  if (replicas.size() == 1)
    return data::DataLoaderOptions(size_t(o.batchSize)).shuffle(true).seed(o.seed).drop_last(dropLast);
  auto sampler = std::make_shared<data::DistributedSampler>(data::DistributedSamplerOptions{
      .num_replicas = size_t(replicas.size()), .rank = size_t(replicas.rank()), .seed = o.seed});
  return data::DataLoaderOptions(size_t(o.batchSize / replicas.size()))
      .sampler(sampler)
      .drop_last(dropLast);
}

data::DataLoaderOptions testLoaderOptions(const Replicas& replicas) {
  data::DataLoaderOptions options(1000);
  if (replicas.size() > 1)
    options.sampler(std::make_shared<ContiguousShare>(size_t(replicas.rank()), size_t(replicas.size())));
  return options;
}

data::DataLoader wholeSet(const data::DataLoader& loader) {
  return data::DataLoader(dynamic_cast<const data::TensorDataset&>(loader.dataset()),
                          data::DataLoaderOptions(1000));
}

FashionMnistLoaders loadFashionMnist(const TrainingOptions& o, bool dropLast,
                                     const Replicas& replicas) {
  double start = ProgressBar::steadySeconds();
  FashionMnistLoaders loaders{
      data::DataLoader(prepareFashionMnist(data::MNIST(o.data, /*train=*/true), o.limit),
                       trainLoaderOptions(o, replicas, dropLast)),
      data::DataLoader(prepareFashionMnist(data::MNIST(o.data, /*train=*/false), o.limit),
                       testLoaderOptions(replicas))};
  if (replicas.root())
    std::printf("Fashion-MNIST from %s: %zu training, %zu test examples (loaded in %.1f s)\n",
              o.data.c_str(), loaders.train.dataset().size(), loaders.test.dataset().size(),
              ProgressBar::steadySeconds() - start);
  return loaders;
}

nn::Sequential makeMlp() {
  return nn::Sequential(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 256), nn::ReLU(),
                        nn::Linear(256, 10));
}

std::string Accuracy::text() const {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", percent());
  return text;
}

std::pair<double, double> trainEpoch(const std::function<Tensor(const Tensor&, const Tensor&)>& step,
                                     data::DataLoader& loader, const std::string& label,
                                     MetricsCsv* metrics, const Replicas& replicas) {
  std::ostream nowhere(nullptr);  // the other ranks' bars
  ProgressBar bar(label, int64_t(loader.size()), replicas.root() ? std::cout : nowhere,
                  replicas.root() && ProgressBar::stdoutIsTerminal());
  double lossSum = 0;
  int64_t steps = 0;
  double last = ProgressBar::steadySeconds();
  for (auto& [x, y] : loader) {
    const double loss = replicas.mean(step(x, y).item<double>());
    // DistributedSampler gives every rank a batch of the same size.
    const int64_t samples = x.size(0) * replicas.size();
    lossSum += loss;
    ++steps;
    const double now = ProgressBar::steadySeconds();
    if (metrics) metrics->step(loss, double(samples) / std::max(now - last, 1e-9));
    last = now;
    char text[32];
    std::snprintf(text, sizeof text, "loss %.4f", lossSum / double(steps));
    bar.step(samples, text);
  }
  bar.finish();
  return {lossSum / double(std::max<int64_t>(steps, 1)), bar.samplesPerSecond()};
}

Accuracy trainEpochs(int64_t epochs,
                     const std::function<Tensor(const Tensor&, const Tensor&)>& step,
                     data::DataLoader& loader, const std::function<Accuracy()>& score,
                     const std::function<void()>& endEpoch, MetricsCsv* metrics,
                     const Replicas& replicas) {
  Accuracy last;
  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    std::string label = "epoch " + std::to_string(epoch) + "/" + std::to_string(epochs);
    auto [meanLoss, rate] = trainEpoch(step, loader, label, metrics, replicas);
    if (endEpoch) endEpoch();
    last = replicas.sumScores(score());
    if (metrics) metrics->endEpoch(last.percent());
    if (!replicas.root()) continue;
    std::printf("%s: train loss %.4f, %.0f samples/s, test accuracy %s (%lld/%lld)\n",
                label.c_str(), meanLoss, rate, last.text().c_str(), (long long)last.correct,
                (long long)last.total);
    std::fflush(stdout);
  }
  return last;
}

Accuracy evaluate(const std::function<Tensor(const Tensor&)>& forward, data::DataLoader& loader) {
  NoGradGuard noGrad;
  Accuracy acc;
  for (auto& [x, y] : loader) {
    Tensor predicted = argmax(forward(x), 1);
    // The labels join the predictions on their device (a model on a GPU).
    acc.correct += sum(eq(predicted, y.to(predicted.device()))).item<int64_t>();
    acc.total += y.size(0);
  }
  return acc;
}

}  // namespace kiln::examples
