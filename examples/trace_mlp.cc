// The fashion_mnist_mlp example's MLP (784-256-256-10, SGD with momentum) trained with a
// traced step: jit::trace records forward, backward and the optimizer step once and runs
// the compiled program afterwards. Prints eager and traced training throughput side by
// side, the test accuracy each epoch, and dumps the trained inference graph for kiln-run.
//
//   bazel run -c opt //examples:trace_mlp -- --epochs 2
//   bazel run //tools/kiln-run -- trace_mlp.mlirbc --input x=...   (see docs/USER_GUIDE.md)
//
// The learning rate halves after each epoch (StepLR): name_optimizer puts the rate in the
// trace's key, so each epoch's rate gets its own recording. Exit status: 0 on success, 1
// on a failure while running, 2 for bad flags or missing data.
//
// --distributed trains data-parallel over the ranks of an MPI job, each on its share of
// every batch (DistributedSampler), the traced step averaging the gradients over the
// ranks (nn::DistributedDataParallel inside the trace: one kiln.all_reduce_start per
// bucket); rank 0 prints the job's losses and accuracies and writes the files:
//
//   mpirun -np 2 bazel-bin/examples/trace_mlp --distributed     (docs/DISTRIBUTED.md)

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "examples/common/DataParallel.h"
#include "examples/common/FashionMnist.h"
#include "examples/common/Flags.h"
#include "examples/common/ProgressBar.h"
#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Random.h"
#include "kiln/jit/Trace.h"
#include "kiln/nn/DistributedDataParallel.h"
#include "kiln/optim/LRScheduler.h"
#include "kiln/optim/SGD.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

constexpr const char* kProgram = "trace_mlp";

struct Options : examples::TrainingOptions {
  int64_t compareSteps = 100;
  std::string graph = "trace_mlp.mlirbc";
};

Options parseFlags(int argc, char** argv) {
  Options o;
  examples::Flags flags(kProgram,
                        "Trains a 784-256-256-10 MLP on Fashion-MNIST with a traced training\n"
                        "step, compares eager and traced throughput, prints the test accuracy\n"
                        "after each epoch and dumps the inference graph.");
  examples::addTrainingFlags(flags, o, "initial SGD learning rate, halved after each epoch");
  flags.add("compare-steps", o.compareSteps, "N",
            "training steps timed eagerly and traced before training");
  flags.add("graph", o.graph, "PATH", "where the trained inference graph is dumped");
  examples::addDistributedFlag(flags, o);
  examples::addLimitFlag(flags, o);
  flags.parseOrExit(argc, argv);
  examples::requireParentDirectory(flags, "graph", o.graph);
  return o;
}

// A model with its optimizer, and its training step traced. The trace binds the model's
// parameters and the optimizer's slots by reference, so training it trains `model`. With
// --distributed the step averages the gradients over the ranks (DDP starts from rank 0's
// weights).
struct Trainer {
  explicit Trainer(const Options& o)
      : model(examples::makeMlp()),
        optimizer(model->parameters(), optim::SGDOptions(o.lr).momentum(o.momentum)),
        // The batch dim varies (each epoch ends with a short batch): named, the first
        // compile is already the program for every batch size.
        step(jit::trace(StepFn([this](Tensor x, Tensor y) { return eagerStep(x, y); }),
                        {.dynamic_dims = {{.input = -1, .dim = 0}}})) {
    step.name_module("model", model).name_optimizer("opt", optimizer);
    if (o.distributed) ddp.emplace(model);
  }

  // One training step: what `step` records, and what eager training runs.
  Tensor eagerStep(const Tensor& x, const Tensor& y) {
    optimizer.zero_grad(/*set_to_none=*/true);
    Tensor loss = cross_entropy(model->forward(x), y);
    loss.backward();
    if (ddp) ddp->synchronize_gradients();
    optimizer.step();
    return loss;
  }

  using StepFn = std::function<Tensor(Tensor, Tensor)>;
  nn::Sequential model;
  optim::SGD optimizer;
  jit::Traced<StepFn> step;
  std::optional<nn::DistributedDataParallel> ddp;
};

// Samples per second of `steps` training steps of `run` on the first batch (`batch` samples
// over all ranks), after three steps that warm up (for the traced step: the optimizer's
// state made, the recording by value, then the compile).
template <class Step>
double throughput(Step run, const Tensor& x, const Tensor& y, int64_t batch, int64_t steps) {
  for (int warmUp = 0; warmUp < 3; ++warmUp) run(x, y).template item<float>();
  double start = examples::ProgressBar::steadySeconds();
  for (int64_t i = 0; i < steps; ++i) run(x, y);
  run(x, y).template item<float>();
  return double(batch) * double(steps + 1) / (examples::ProgressBar::steadySeconds() - start);
}

// Eager and traced steps on separate copies of the model, side by side (data-parallel
// both, with --distributed).
void compareThroughput(const Options& o, data::DataLoader& loader,
                       const examples::Replicas& replicas) {
  auto [x, y] = *loader.begin();
  manual_seed(o.seed);
  Trainer eager(o);
  manual_seed(o.seed);
  Trainer traced(o);
  const int64_t batch = x.size(0) * replicas.size();
  double eagerRate = throughput([&](Tensor a, Tensor b) { return eager.eagerStep(a, b); }, x, y,
                                batch, o.compareSteps);
  double tracedRate = throughput([&](Tensor a, Tensor b) { return traced.step(a, b); }, x, y,
                                 batch, o.compareSteps);
  if (!replicas.root()) return;
  std::printf("throughput over %lld steps of batch %lld: eager %.0f samples/s, traced %.0f "
              "samples/s (%.2fx)\n",
              (long long)o.compareSteps, (long long)batch, eagerRate, tracedRate,
              tracedRate / eagerRate);
}

// Rank 0 alone, after training: the trained model traced with its weights as constants,
// dumped, reloaded, and each scored on the whole test set; true when both score `last`.
bool dumpInferenceGraph(const Options& o, Trainer& t, const data::DataLoader& testLoader,
                        const examples::Accuracy& last) {
  data::DataLoader wholeTest = examples::wholeSet(testLoader);
  // The trained model as a graph of its own: weights captured as constants, batches of
  // the test loader's size.
  t.model->eval();
  auto inference = jit::trace([&](Tensor x) { return t.model->forward(x); },
                              {.capture_as_const = true, .name = "mlp"});
  examples::Accuracy traced = examples::evaluate(inference, wholeTest);
  inference.dump(o.graph, {.input_names = {"images"}, .output_names = {"logits"}});
  jit::LoadedGraph graph = jit::load(o.graph);
  examples::Accuracy loaded =
      examples::evaluate([&](const Tensor& x) { return graph({x})[0]; }, wholeTest);
  bool matches = traced.correct == last.correct && loaded.correct == last.correct;
  std::printf("inference graph dumped to %s: accuracy traced %s, reloaded %s (%s)\n",
              fs::absolute(o.graph).c_str(), traced.text().c_str(), loaded.text().c_str(),
              matches ? "matches" : "MISMATCH");
  return matches;
}

int run(const Options& o, const examples::Replicas& replicas) {
  double start = examples::ProgressBar::steadySeconds();
  // The last batch of an epoch is short: the step's recordings at the two sizes merge into
  // one with a dynamic batch (docs/USER_GUIDE.md, "Batch sizes that change"), compiled once
  // per size; the halved learning rate is state, so it records nothing.
  auto [trainLoader, testLoader] = examples::loadFashionMnist(o, /*dropLast=*/false, replicas);
  if (trainLoader.size() == 0) {
    if (replicas.root()) std::cerr << kProgram << ": fewer training examples than --batch-size\n";
    return 2;
  }
  compareThroughput(o, trainLoader, replicas);

  manual_seed(o.seed);
  Trainer t(o);
  optim::StepLR schedule(t.optimizer, /*step_size=*/1, /*gamma=*/0.5);
  if (replicas.root()) {
    std::printf("SGD lr %g (halved each epoch) momentum %g, batch size %lld, seed %llu\n", o.lr,
                o.momentum, (long long)o.batchSize, (unsigned long long)o.seed);
    examples::printDataParallel(replicas, o.batchSize);
  }
  auto forward = [&](const Tensor& x) { return t.model->forward(x); };
  t.model->train();
  examples::MetricsCsv metrics(replicas.root() ? o.metrics : "", "traced MLP");
  examples::Accuracy last = examples::trainEpochs(
      o.epochs, [&](const Tensor& x, const Tensor& y) { return t.step(x, y); }, trainLoader,
      [&] {
        t.model->eval();
        examples::Accuracy acc = examples::evaluate(forward, testLoader);
        t.model->train();
        return acc;
      },
      [&] { schedule.step(); }, &metrics, replicas);
  const bool replicasEqual = examples::checkReplicasEqual(replicas, *t.model);
  if (!replicas.root()) return 0;
  std::printf("training step recorded %zu times, %zu programs compiled\n", t.step.num_traces(),
              t.step.num_compiles());
  bool matches = dumpInferenceGraph(o, t, testLoader, last);
  std::printf("total wall time %.1f s\n", examples::ProgressBar::steadySeconds() - start);
  return matches && replicasEqual ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return examples::runProgram(kProgram, [&] {
    Options options = parseFlags(argc, argv);
    examples::requireFashionMnist(kProgram, options.data);
    std::unique_ptr<examples::Replicas> replicas = examples::joinReplicas(kProgram, options);
    return run(options, *replicas);
  });
}
