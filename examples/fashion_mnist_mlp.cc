// Trains the DESIGN.md §1 MLP (784-256-256-10) eagerly on Fashion-MNIST with SGD, momentum
// and a cosine learning-rate schedule, reports test accuracy each epoch, saves the weights
// as safetensors and checks that reloading them gives the same accuracy.
//
//   bazel run -c opt //examples:fashion_mnist_mlp -- --epochs 2
//
// The data is Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist); --data
// points elsewhere. Exit status: 0 on success, 1 on a failure while running, 2 for bad
// flags or missing data.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "examples/common/Flags.h"
#include "examples/common/ProgressBar.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Error.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/data/DataLoader.h"
#include "kiln/data/MNIST.h"
#include "kiln/io/Safetensors.h"
#include "kiln/nn/Modules.h"
#include "kiln/optim/LRScheduler.h"
#include "kiln/optim/SGD.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

constexpr const char* kProgram = "fashion_mnist_mlp";

struct Options {
  std::string data = "/usr/share/datasets/fashion-mnist";
  int64_t epochs = 2;
  int64_t batchSize = 64;
  double lr = 0.05;
  double momentum = 0.9;
  uint64_t seed = 0;
  std::string checkpoint = "fashion_mnist_mlp.safetensors";
  std::optional<int64_t> limit;
};

Options parseFlags(int argc, char** argv) {
  Options o;
  examples::Flags flags(kProgram,
                        "Trains a 784-256-256-10 MLP on Fashion-MNIST with SGD, momentum and a\n"
                        "cosine learning-rate schedule, prints the test accuracy after each epoch\n"
                        "and saves a checkpoint.");
  flags.add("data", o.data, "DIR", "directory of the Fashion-MNIST idx files (.gz or plain)");
  flags.add("epochs", o.epochs, "N", "passes over the training set");
  flags.add("batch-size", o.batchSize, "N", "training examples per step");
  flags.add("lr", o.lr, "X", "initial SGD learning rate, annealed to 0 (cosine)", 0.0, 10.0);
  flags.add("momentum", o.momentum, "X", "SGD momentum", 0.0, 0.999);
  flags.add("seed", o.seed, "N", "seeds the initial weights and the shuffling");
  flags.add("checkpoint", o.checkpoint, "PATH", "where the trained weights are saved");
  flags.add("limit", o.limit, "N", "use only the first N training and N test examples", "all");
  flags.parseOrExit(argc, argv);
  // Saving comes after training: a checkpoint that cannot be written should fail first.
  if (fs::path dir = fs::absolute(o.checkpoint).parent_path(); !fs::is_directory(dir))
    flags.fail("--checkpoint: " + dir.string() + " is not a directory");
  return o;
}

// The idx file `stem` under `dir`, plain or gzipped, as the MNIST reader looks for it.
bool hasIdxFile(const fs::path& dir, const std::string& stem) {
  return fs::is_regular_file(dir / stem) || fs::is_regular_file(dir / (stem + ".gz"));
}

// Where the data is expected and how to get it, before anything is loaded.
void requireDataset(const std::string& dir) {
  for (const char* stem : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    if (hasIdxFile(dir, stem)) continue;
    std::cerr << kProgram << ": no Fashion-MNIST in " << fs::absolute(dir).string() << " (" << stem
              << "[.gz] not found); Debian's dataset-fashion-mnist package installs it in "
                 "/usr/share/datasets/fashion-mnist, or pass --data DIR\n";
    std::exit(2);
  }
}

// Images as normalized [N, 784] rows beside their labels, cut to the first `limit`
// examples. Normalized with Fashion-MNIST's mean and std, as torchvision's
// Normalize((0.2860,), (0.3530,)), once and in place: a per-example transform would repeat
// the same arithmetic every epoch (10% of the throughput here), and a normalized copy would
// hold the 188 MB of training images twice, with Normalize's temporary three times.
data::TensorDataset prepare(data::MNIST set, std::optional<int64_t> limit) {
  Tensor images = set.images();  // shares the storage of `set`, which is ours to change
  Tensor labels = set.targets();
  if (limit && *limit < images.size(0)) {
    images = images.narrow(0, 0, *limit);
    labels = labels.narrow(0, 0, *limit);
  }
  images.sub_(scalar_tensor(0.2860)).div_(scalar_tensor(0.3530));
  return data::TensorDataset(images.flatten(1), labels);
}

nn::Sequential makeModel() {
  return nn::Sequential(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 256), nn::ReLU(),
                        nn::Linear(256, 10));
}

struct Accuracy {
  int64_t correct = 0;
  int64_t total = 0;
  double percent() const { return total ? 100.0 * double(correct) / double(total) : 0.0; }
};

Accuracy evaluate(nn::Sequential& model, data::DataLoader& loader) {
  model->eval();
  NoGradGuard noGrad;
  Accuracy acc;
  for (auto& [x, y] : loader) {
    Tensor predicted = argmax(model->forward(x), 1);
    acc.correct += sum(eq(predicted, y)).item<int64_t>();
    acc.total += y.size(0);
  }
  return acc;
}

std::string percent(const Accuracy& acc) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", acc.percent());
  return text;
}

std::string lossText(double meanLoss) {
  char text[32];
  std::snprintf(text, sizeof text, "loss %.4f", meanLoss);
  return text;
}

// One pass over the training set, stepping the schedule after every batch; returns the
// mean loss and the samples per second.
std::pair<double, double> trainEpoch(nn::Sequential& model, optim::SGD& optimizer,
                                     optim::LRScheduler& schedule, data::DataLoader& loader,
                                     const std::string& label) {
  model->train();
  examples::ProgressBar bar(label, int64_t(loader.size()));
  double lossSum = 0;
  int64_t steps = 0;
  for (auto& [x, y] : loader) {
    optimizer.zero_grad();
    Tensor loss = cross_entropy(model->forward(x), y);
    loss.backward();
    optimizer.step();
    schedule.step();
    lossSum += loss.item<double>();
    ++steps;
    bar.step(x.size(0), lossText(lossSum / double(steps)));
  }
  bar.finish();
  return {lossSum / double(std::max<int64_t>(steps, 1)), bar.samplesPerSecond()};
}

int run(const Options& o) {
  double start = examples::ProgressBar::steadySeconds();
  data::DataLoader trainLoader(prepare(data::MNIST(o.data, /*train=*/true), o.limit),
                               {.batch_size = size_t(o.batchSize), .shuffle = true,
                                .seed = o.seed});
  data::DataLoader testLoader(prepare(data::MNIST(o.data, /*train=*/false), o.limit),
                              {.batch_size = 1000});
  std::printf("Fashion-MNIST from %s: %zu training, %zu test examples (loaded in %.1f s)\n",
              o.data.c_str(), trainLoader.dataset().size(), testLoader.dataset().size(),
              examples::ProgressBar::steadySeconds() - start);

  manual_seed(o.seed);
  nn::Sequential model = makeModel();
  optim::SGD optimizer(model->parameters(), optim::SGDOptions(o.lr).momentum(o.momentum));
  // Annealing to 0 over the whole run, per batch, makes the last epoch's accuracy both
  // higher and steadier across seeds than a constant rate (examples/README.md).
  optim::CosineAnnealingLR schedule(optimizer, o.epochs * int64_t(trainLoader.size()));
  std::printf("SGD lr %g (cosine to 0) momentum %g, batch size %lld, seed %llu\n", o.lr,
              o.momentum, (long long)o.batchSize, (unsigned long long)o.seed);

  Accuracy last;
  for (int64_t epoch = 1; epoch <= o.epochs; ++epoch) {
    std::string label = "epoch " + std::to_string(epoch) + "/" + std::to_string(o.epochs);
    auto [meanLoss, rate] = trainEpoch(model, optimizer, schedule, trainLoader, label);
    last = evaluate(model, testLoader);
    std::printf("%s: train loss %.4f, %.0f samples/s, test accuracy %s (%lld/%lld)\n",
                label.c_str(), meanLoss, rate, percent(last).c_str(), (long long)last.correct,
                (long long)last.total);
    std::fflush(stdout);
  }

  io::save(model->state_dict(), o.checkpoint, {{"format", "pt"}});
  std::printf("total wall time %.1f s\ncheckpoint saved to %s\n",
              examples::ProgressBar::steadySeconds() - start,
              fs::absolute(o.checkpoint).c_str());
  std::fflush(stdout);

  // A fresh model (different initial weights) must score exactly the same from the file.
  nn::Sequential reloaded = makeModel();
  reloaded->load_state_dict(io::load(o.checkpoint));
  Accuracy again = evaluate(reloaded, testLoader);
  bool matches = again.correct == last.correct && again.total == last.total;
  std::printf("checkpoint reloaded: accuracy %s (%s%s)\n", percent(again).c_str(),
              matches ? "matches" : "MISMATCH: expected ", matches ? "" : percent(last).c_str());
  return matches ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // `bazel run` starts the program in its runfiles tree; resolve relative paths (--data,
  // --checkpoint) from the directory bazel was run in, as kiln-opt does.
  if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY"); dir && chdir(dir) != 0) {
    std::perror(dir);
    return 1;
  }
  Options options = parseFlags(argc, argv);
  requireDataset(options.data);
  try {
    return run(options);
  } catch (const std::exception& e) {  // kiln::Error, and the file system's errors
    std::cerr << kProgram << ": " << e.what() << "\n";
    return 1;
  }
}
