// MobileNetV2 trained on Fashion-MNIST (padded to 32x32, the gray channel repeated three
// times), or on CIFAR-10's binary batches with --cifar10 DIR, with an nn::Graph and SGD with
// momentum, its rate (0.02) annealed to 0 by a cosine schedule stepped after every update:
// the graph traces its build() on the first call and runs the compiled step after that (the
// rate is state the program reads, so the schedule never records the step again). At a
// constant rate of 0.05 the test accuracy after one epoch depended on the seed and on
// float rounding, from 16.7% to 83.6% (docs/BENCHMARKS.md, issue 19). Prints eager and graph training throughput
// side by side, the test accuracy each epoch, and saves the weights and reloads them.
//
//   bazel run -c opt //examples:graph_mobilenet -- --epochs 1
//   bazel run -c opt //examples:graph_mobilenet -- --device cuda
//
// --device cuda trains eagerly on the GPU: nn::Graph traces CPU tensors only for now (a
// trace that meets a CUDA tensor raises TraceError), so there the program times, trains and
// evaluates with the eager step, says so, and prints the CUDA allocator's statistics at the
// end.
//
// --distributed trains data-parallel over the ranks of an MPI job: each rank takes its
// share of every batch (DistributedSampler), the graph's step averages the gradients over
// the ranks (config().enable_data_parallel(): its step program holds the all-reduces), and
// rank 0 prints the job's losses and accuracies and writes the files. BatchNorm normalizes
// by each rank's share of the batch (there is no synchronized BatchNorm), so the job's
// steps are not one process's; the running statistics are averaged over the ranks after
// every epoch, and after training the program checks that every rank holds the same
// parameters and buffers:
//
//   mpirun -np 2 bazel-bin/examples/graph_mobilenet --distributed     (docs/DISTRIBUTED.md)
//
// Exit status: 0 on success, 1 on a failure while running, 2 for bad flags, missing data or
// a missing CUDA device ("no CUDA device: <why>").
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "examples/common/DataParallel.h"
#include "examples/common/FashionMnist.h"
#include "examples/common/Flags.h"
#include "examples/common/ProgressBar.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/io/Safetensors.h"
#include "kiln/nn/DistributedDataParallel.h"
#include "kiln/nn/Graph.h"
#include "kiln/optim/LRScheduler.h"
#include "kiln/optim/SGD.h"
#include "kiln/vision/MobileNetV2.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

constexpr const char* kProgram = "graph_mobilenet";

struct Options : examples::TrainingOptions {
  Options() {
    epochs = 1;
    lr = 0.02;
  }
  double width = 1.0;
  int64_t compareSteps = 10;
  std::string checkpoint = "graph_mobilenet.safetensors";
  std::string cifar10;  // CIFAR-10 binary batches instead of Fashion-MNIST
  std::string deviceName = "cpu";
  Device device = kCPU;  // anything but the CPU: the eager step (see the top of this file)
};

Options parseFlags(int argc, char** argv) {
  Options o;
  examples::Flags flags(kProgram,
                        "Trains MobileNetV2 on Fashion-MNIST padded to 32x32 with an nn::Graph\n"
                        "and SGD, compares eager and graph throughput, prints the test accuracy\n"
                        "after each epoch, and saves and reloads a checkpoint.");
  examples::addTrainingFlags(flags, o, "SGD learning rate");
  flags.add("width", o.width, "X", "MobileNetV2's width multiplier", 0.1, 2.0);
  flags.add("compare-steps", o.compareSteps, "N",
            "training steps timed eagerly and with the graph before training");
  flags.add("checkpoint", o.checkpoint, "PATH", "where the trained weights are saved");
  flags.add("cifar10", o.cifar10, "DIR",
            "train on CIFAR-10's binary batches in DIR (data_batch_1..5.bin, test_batch.bin)");
  examples::addDeviceFlag(flags, o.deviceName);
  examples::addDistributedFlag(flags, o);
  examples::addLimitFlag(flags, o);
  flags.parseOrExit(argc, argv);
  o.device = examples::requireDevice(flags, o.deviceName);
  examples::requireParentDirectory(flags, "checkpoint", o.checkpoint);
  return o;
}

// CIFAR-10's binary format: records of a label byte and 3x32x32 pixel bytes (R, G, B
// planes). Exits with status 2 naming a missing file.
constexpr int64_t kCifarPixels = 3 * 32 * 32;

data::TensorDataset loadCifar10(const std::string& dir, const std::vector<std::string>& files,
                                std::optional<int64_t> limit) {
  std::vector<uint8_t> bytes;
  for (const std::string& name : files) {
    std::ifstream in(fs::path(dir) / name, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: no CIFAR-10 batch %s in %s (the binary version's "
                   "data_batch_1..5.bin and test_batch.bin)\n", kProgram, name.c_str(),
                   fs::absolute(dir).c_str());
      std::exit(2);
    }
    bytes.insert(bytes.end(), std::istreambuf_iterator<char>(in), {});
  }
  int64_t n = int64_t(bytes.size()) / (1 + kCifarPixels);
  if (limit) n = std::min(n, *limit);
  std::vector<float> pixels(static_cast<size_t>(n * kCifarPixels));
  std::vector<int64_t> labels(static_cast<size_t>(n));
  // torchvision's usual CIFAR-10 normalization, per channel.
  const float mean[3] = {0.4914f, 0.4822f, 0.4465f}, std[3] = {0.2470f, 0.2435f, 0.2616f};
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* record = bytes.data() + i * (1 + kCifarPixels);
    labels[size_t(i)] = record[0];
    for (int64_t j = 0; j < kCifarPixels; ++j) {
      const int64_t c = j / 1024;
      pixels[size_t(i * kCifarPixels + j)] = (float(record[1 + j]) / 255.0f - mean[c]) / std[c];
    }
  }
  return data::TensorDataset(tensor(pixels, Shape{n, kCifarPixels}), tensor(labels));
}

std::pair<data::DataLoader, data::DataLoader> loadData(const Options& o,
                                                       const examples::Replicas& replicas) {
  if (o.cifar10.empty()) {
    auto [train, test] = examples::loadFashionMnist(o, /*dropLast=*/false, replicas);
    return {std::move(train), std::move(test)};
  }
  std::vector<std::string> trainFiles;
  for (int b = 1; b <= 5; ++b) trainFiles.push_back("data_batch_" + std::to_string(b) + ".bin");
  data::DataLoader train(loadCifar10(o.cifar10, trainFiles, o.limit),
                         examples::trainLoaderOptions(o, replicas));
  data::DataLoader test(loadCifar10(o.cifar10, {"test_batch.bin"}, o.limit),
                        examples::testLoaderOptions(replicas));
  if (replicas.root())
    std::printf("CIFAR-10 from %s: %zu training, %zu test examples\n", o.cifar10.c_str(),
              train.dataset().size(), test.dataset().size());
  return {std::move(train), std::move(test)};
}

// Normalized rows as [N, 3, 32, 32] images. CIFAR-10's rows are that already; Fashion-
// MNIST's [N, 784] are 28x28, padded by 2 with the value a black pixel normalizes to, and
// the gray channel repeated for MobileNetV2's RGB stem.
Tensor asImages(const Tensor& rows) {
  const int64_t n = rows.size(0);
  if (rows.size(1) == kCifarPixels) return rows.reshape({n, 3, 32, 32});
  const double black = -0.2860 / 0.3530;  // what a 0 pixel normalizes to
  const TensorOptions like = TensorOptions(rows.dtype()).device(rows.device());
  Tensor sides = full({n, 1, 28, 2}, black, like), ends = full({n, 1, 2, 32}, black, like);
  Tensor padded = cat({ends, cat({sides, rows.reshape({n, 1, 28, 28}), sides}, 3), ends}, 2);
  return padded.expand({n, 3, 32, 32});
}

vision::MobileNetV2 makeModel(const Options& o) {
  manual_seed(o.seed);
  return vision::mobilenet_v2(/*num_classes=*/10, o.width);
}

// One training step per call: the graph steps its optimizer after build (data-parallel:
// after averaging the gradients over the ranks).
struct TrainGraph : nn::Graph<TrainGraph> {
  TrainGraph(vision::MobileNetV2 model, std::shared_ptr<optim::SGD> opt, bool dataParallel,
             std::shared_ptr<optim::LRScheduler> schedule = nullptr)
      : model(model) {
    register_module("model", model);
    add_optimizer(opt, schedule);
    config().enable_dynamic_batch();  // an epoch ends with a short batch: compile once for both
    config().enable_data_parallel(dataParallel);
  }
  Tensor build(Tensor x, Tensor y) {
    Tensor loss = cross_entropy(model->forward(asImages(x)), y);
    loss.backward();
    return loss;
  }
  vision::MobileNetV2 model;
};

// Inference in eval mode (BatchNorm's running statistics).
struct EvalGraph : nn::Graph<EvalGraph> {
  explicit EvalGraph(vision::MobileNetV2 model) : model(model) {
    register_module("model", model);
    config().enable_dynamic_batch();
  }
  Tensor build(Tensor x) { return model->forward(asImages(x)); }
  vision::MobileNetV2 model;
};

// The eager training step on `device`: the batch is padded on the host, where the loader made
// it, and moved to the device. With `ddp`, the gradients are averaged over the ranks.
struct EagerStep {
  vision::MobileNetV2 model;
  std::shared_ptr<optim::SGD> opt;
  std::shared_ptr<optim::LRScheduler> schedule;
  Device device;
  std::shared_ptr<nn::DistributedDataParallel> ddp;
  Tensor operator()(const Tensor& x, const Tensor& y) {
    opt->zero_grad();
    Tensor loss = cross_entropy(model->forward(asImages(x).to(device)), y.to(device));
    loss.backward();
    if (ddp) ddp->synchronize_gradients();
    opt->step();
    if (schedule) schedule->step();
    return loss;
  }
};

std::shared_ptr<optim::SGD> makeOptimizer(vision::MobileNetV2& model, const Options& o) {
  return std::make_shared<optim::SGD>(model->parameters(),
                                      optim::SGDOptions(o.lr).momentum(o.momentum));
}

// The eager step on `model`, data-parallel with --distributed.
EagerStep makeEagerStep(vision::MobileNetV2& model, const Options& o,
                        std::shared_ptr<optim::SGD> opt,
                        std::shared_ptr<optim::LRScheduler> schedule = nullptr) {
  auto ddp = o.distributed ? std::make_shared<nn::DistributedDataParallel>(model) : nullptr;
  return EagerStep{model, std::move(opt), std::move(schedule), o.device, std::move(ddp)};
}

// Samples per second of `steps` calls of `step` on one batch (`batch` samples over all
// ranks), after two warm-up calls (which, for the graph, trace and compile).
template <class Step>
double throughput(Step step, const Tensor& x, const Tensor& y, int64_t batch, int64_t steps) {
  step(x, y).template item<float>();
  step(x, y).template item<float>();
  double start = examples::ProgressBar::steadySeconds();
  for (int64_t i = 0; i < steps; ++i) step(x, y).template item<float>();
  return double(batch * steps) / (examples::ProgressBar::steadySeconds() - start);
}

void compareThroughput(const Options& o, data::DataLoader& loader,
                       const examples::Replicas& replicas) {
  auto [x, y] = *loader.begin();
  const int64_t batch = x.size(0) * replicas.size();
  vision::MobileNetV2 eagerModel = makeModel(o);
  eagerModel->to(o.device);
  double eager = throughput(makeEagerStep(eagerModel, o, makeOptimizer(eagerModel, o)), x, y,
                            batch, o.compareSteps);
  if (!o.device.isCPU()) {
    if (!replicas.root()) return;
    std::printf("throughput over %lld steps of batch %lld on %s: eager %.0f samples/s (no graph: "
                "nn::Graph traces CPU tensors only, so --device %s trains with the eager step)\n",
                (long long)o.compareSteps, (long long)batch, o.device.str().c_str(), eager,
                o.deviceName.c_str());
    std::fflush(stdout);
    return;
  }
  vision::MobileNetV2 graphModel = makeModel(o);
  TrainGraph graph(graphModel, makeOptimizer(graphModel, o), o.distributed);
  double compiled = throughput([&](const Tensor& a, const Tensor& b) { return graph(a, b); }, x,
                               y, batch, o.compareSteps);
  if (!replicas.root()) return;
  std::printf("throughput over %lld steps of batch %lld: eager %.0f samples/s, graph %.0f "
              "samples/s (%.2fx)\n",
              (long long)o.compareSteps, (long long)batch, eager, compiled,
              compiled / eager);
  std::fflush(stdout);
}

examples::Accuracy evaluate(vision::MobileNetV2& model, data::DataLoader& loader, Device device) {
  model->eval();
  examples::Accuracy acc;
  if (device.isCPU()) {
    EvalGraph graph(model);
    acc = examples::evaluate([&](const Tensor& x) { return graph(x); }, loader);
  } else {
    acc = examples::evaluate(
        [&](const Tensor& x) { return model->forward(asImages(x).to(device)); }, loader);
  }
  model->train();
  return acc;
}

// Rank 0 alone, after training: the weights saved, loaded into a fresh model and scored on
// the whole test set; true when that is `last`, the trained model's score.
bool saveAndReload(const Options& o, vision::MobileNetV2& model, const data::DataLoader& testLoader,
                   const examples::Accuracy& last) {
  io::save(model->state_dict(), o.checkpoint, {{"format", "pt"}});
  std::printf("checkpoint saved to %s\n", fs::absolute(o.checkpoint).c_str());
  vision::MobileNetV2 reloaded = vision::mobilenet_v2(10, o.width);
  reloaded->to(o.device);
  reloaded->load_state_dict(io::load(o.checkpoint));
  data::DataLoader wholeTest = examples::wholeSet(testLoader);
  examples::Accuracy again = evaluate(reloaded, wholeTest, o.device);
  bool matches = again.correct == last.correct;
  std::printf("checkpoint reloaded: accuracy %s (%s)\n", again.text().c_str(),
              matches ? "matches" : "MISMATCH");
  return matches;
}

int run(const Options& o, const examples::Replicas& replicas) {
  double start = examples::ProgressBar::steadySeconds();
  // The last batch of an epoch is short: it gets a recording of its own (training-mode
  // batch norm bakes in constants computed from the batch size, so the two recordings do
  // not merge into a dynamic one, as trace_mlp's do), compiled once.
  auto [trainLoader, testLoader] = loadData(o, replicas);
  if (trainLoader.size() == 0) {
    if (replicas.root())
      std::fprintf(stderr, "%s: fewer training examples than --batch-size\n", kProgram);
    return 2;
  }
  if (replicas.root()) examples::printDevice(o.device);
  compareThroughput(o, trainLoader, replicas);

  vision::MobileNetV2 model = makeModel(o);
  model->to(o.device);
  auto opt = makeOptimizer(model, o);
  const int64_t steps = o.epochs * int64_t(trainLoader.size());
  auto schedule = std::make_shared<optim::CosineAnnealingLR>(*opt, steps);
  // The graph is made on the CPU only: it would trace its step on the first call.
  std::unique_ptr<TrainGraph> graph;
  std::optional<EagerStep> eagerStep;
  if (o.device.isCPU()) graph = std::make_unique<TrainGraph>(model, opt, o.distributed, schedule);
  else eagerStep = makeEagerStep(model, o, opt, schedule);
  if (replicas.root()) {
    std::printf("MobileNetV2 width %g, SGD lr %g (cosine to 0 over %lld steps) momentum %g, "
                "batch size %lld, seed %llu\n",
                o.width, o.lr, (long long)steps, o.momentum, (long long)o.batchSize,
                (unsigned long long)o.seed);
    examples::printDataParallel(replicas, o.batchSize);
  }
  examples::MetricsCsv metrics(replicas.root() ? o.metrics : "",
                               graph ? "nn::Graph MobileNetV2" : "eager MobileNetV2");
  examples::Accuracy last = examples::trainEpochs(
      o.epochs,
      [&](const Tensor& x, const Tensor& y) { return graph ? (*graph)(x, y) : (*eagerStep)(x, y); },
      trainLoader, [&] { return evaluate(model, testLoader, o.device); },
      [&] { replicas.average(model->buffers()); }, &metrics, replicas);
  const bool replicasEqual = examples::checkReplicasEqual(replicas, *model);
  if (!replicas.root()) return 0;
  if (graph)
    std::printf("training step recorded %zu times, %zu programs compiled\n", graph->num_traces(),
                graph->num_compiles());
  else std::printf("training step ran eagerly on %s (nn::Graph traces CPU tensors only)\n",
                   o.device.str().c_str());

  bool matches = saveAndReload(o, model, testLoader, last);
  std::printf("total wall time %.1f s\n", examples::ProgressBar::steadySeconds() - start);
  examples::printCudaMemoryStats(o.device);
  return matches && replicasEqual ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return examples::runProgram(kProgram, [&] {
    Options options = parseFlags(argc, argv);
    if (options.cifar10.empty()) examples::requireFashionMnist(kProgram, options.data);
    std::unique_ptr<examples::Replicas> replicas = examples::joinReplicas(kProgram, options);
    return run(options, *replicas);
  });
}
