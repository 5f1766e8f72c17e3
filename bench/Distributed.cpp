// Data-parallel training under mpirun (issue 24): the MLP step (bench/Mlp.h's shape) and
// the MobileNetV2 step (32x32, as examples/graph_mobilenet), averaged over the ranks by
// nn::DistributedDataParallel's buckets, traced (inside the program) and eager (started by
// the gradient hooks inside backward, or all after backward). Per step: the step time with
// N ranks against one process (batch B and N·B), the all-reduce time of its buckets alone,
// and how much of it the backward hid, with the async progress thread off and on, all
// variants alternating in one run (docs/BENCHMARKS.md, "Data parallel";
// docs/DISTRIBUTED.md, "Measured overlap", has the method).
//
//   bazel build -c opt //bench:distributed
//   mpirun -np 2 --bind-to core bazel-bin/bench/distributed --threads=1 [--reps=5]
//       [--filter=MLP|CNN] [--mlp_batch=64] [--cnn_batch=16] [--mlp_bucket_mb=0.25]
//       [--cnn_bucket_mb=1]
//
// --threads sets Kiln's pool (KILN_NUM_THREADS) and OpenMP's (oneDNN's) alike; the header
// prints the cores each rank may run on (mpirun's --bind-to core gives one each). The
// one-process columns are rank 0 alone (the others idle in a barrier) with the ranks'
// thread count, traced or eager as the row.
//
// Columns (ms per step unless a share): "step" the data-parallel step; "no all-reduce" the
// same step without DDP, every rank running it at once (the same competition for cores,
// no communication); "1 proc" rank 0 alone; "all-reduce alone" the step's buckets reduced
// one after another, blocking, right after a barrier; "start-to-wait" the time from each
// bucket's start to its wait, summed over buckets (the compute it could hide behind);
// "blocked" the time inside the waits; "done at wait" the buckets complete at their
// wait's first test; "exposed" step - no all-reduce. Two hidden shares, both clamped to
// [0, 100%]: by waits, 1 - blocked / alone; by step, 1 - exposed / alone. Blocked and
// exposed also hold the wait for a slower rank (load imbalance), which lowers both.
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/Harness.h"
#include "bench/Mlp.h"
#include "kiln/distributed/Distributed.h"
#include "kiln/kiln.h"
#include "kiln/nn/DistributedDataParallel.h"
#include "kiln/vision/MobileNetV2.h"

namespace {

using namespace kiln::bench;
using kiln::Tensor;
namespace dist = kiln::distributed;

// A workload's model, optimizer and one batch, built alike on every rank.
struct Replica {
  std::shared_ptr<kiln::nn::Module> model;
  std::function<Tensor(const Tensor&)> forward;
  std::shared_ptr<kiln::optim::SGD> opt;
  Tensor x, y;
};

Replica makeReplica(const std::string& workload, int64_t batch) {
  kiln::manual_seed(0);
  Replica r;
  if (workload == "MLP") {
    kiln::nn::Sequential mlp = KilnMlp::build();
    r.model = mlp.ptr();
    r.forward = [mlp](const Tensor& x) { return mlp->forward(x); };
    r.opt = std::make_shared<kiln::optim::SGD>(mlp->parameters(), kiln::optim::SGDOptions(0.01));
    std::vector<float> host = hostValues({batch, 784}, 5);
    r.x = kilnTensor(host, {batch, 784});
    r.y = kiln::randint(0, 10, {batch});
  } else {
    kiln::vision::MobileNetV2 cnn = kiln::vision::mobilenet_v2(/*num_classes=*/10, /*width=*/1.0);
    r.model = cnn.ptr();
    r.forward = [cnn](const Tensor& x) { return cnn->forward(x); };
    r.opt = std::make_shared<kiln::optim::SGD>(cnn->parameters(),
                                               kiln::optim::SGDOptions(0.01).momentum(0.9));
    r.x = kiln::randn({batch, 3, 32, 32});
    r.y = kiln::randint(0, 10, {batch});
  }
  return r;
}

// The traced training step; with `ddp`, its gradients averaged over the ranks between the
// backward and the optimizer (recorded as one kiln.all_reduce_start/kiln.wait per bucket).
std::function<Tensor()> tracedStep(const std::string& workload, Replica& r,
                                   kiln::nn::DistributedDataParallel* ddp) {
  kiln::jit::TraceOptions options{.symbolic = true, .name = workload + "_step"};
  Replica* rp = &r;
  auto t = kiln::jit::trace(
      [rp, ddp](Tensor x, Tensor y) {
        Tensor loss = kiln::cross_entropy(rp->forward(x), y);
        rp->opt->zero_grad(/*set_to_none=*/true);
        loss.backward();
        if (ddp) ddp->synchronize_gradients();
        rp->opt->step();
        return loss;
      },
      options);
  t.name_module("model", r.model).name_optimizer("opt", *r.opt);
  return [t, rp] { return t(rp->x, rp->y); };
}

// How DDP's eager step averages: all buckets after backward (backward under no_sync(),
// so the hooks start nothing: DDP before its gradient hooks), or each bucket started by
// the hooks when its gradients are complete.
enum class EagerSync { AfterBackward, Hooks };

// The eager training step; with `ddp`, averaged as `sync` says.
std::function<Tensor()> eagerStep(Replica& r, kiln::nn::DistributedDataParallel* ddp,
                                  EagerSync sync) {
  Replica* rp = &r;
  return [rp, ddp, sync] {
    rp->opt->zero_grad(/*set_to_none=*/true);
    Tensor loss = kiln::cross_entropy(rp->forward(rp->x), rp->y);
    if (ddp && sync == EagerSync::AfterBackward) {
      auto noSync = ddp->no_sync();
      loss.backward();
    } else {
      loss.backward();
    }
    if (ddp) ddp->synchronize_gradients();
    rp->opt->step();
    return loss;
  };
}

// Mean over the ranks of `value`.
double rankMean(double value) {
  Tensor t = kiln::full({1}, value, kiln::TensorOptions(kiln::kFloat64));
  dist::all_reduce(t, dist::ReduceOp::Mean);
  return t.item<double>();
}

// Median ms of `samples` calls of `steps` steps each, every rank starting together.
double timeSteps(const std::function<Tensor()>& step, int steps) {
  dist::barrier();
  auto t0 = Clock::now();
  for (int s = 0; s < steps; ++s) sink(step());
  return msSince(t0) / steps;
}

// "rank 0: cpus 0; rank 1: cpus 1": where mpirun let each rank run.
std::string rankCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  int64_t mask = 0;
  for (int cpu = 0; cpu < 63; ++cpu)
    if (CPU_ISSET(cpu, &set)) mask |= int64_t(1) << cpu;
  Tensor masks = kiln::zeros({dist::world_size()}, kiln::TensorOptions(kiln::kInt64));
  masks.data_ptr<int64_t>()[dist::rank()] = mask;
  dist::all_reduce(masks, dist::ReduceOp::Sum);
  std::string text;
  for (int r = 0; r < dist::world_size(); ++r) {
    text += (r ? "; rank " : "rank ") + std::to_string(r) + ": cpus";
    for (int cpu = 0; cpu < 63; ++cpu)
      if (masks.data_ptr<int64_t>()[r] >> cpu & 1) text += " " + std::to_string(cpu);
  }
  return text;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The step time of one process (rank 0 alone while the others wait in a barrier, with
// progress off so their waiting costs nothing) with batch `batch`, traced or eager.
double oneProcessMs(const std::string& workload, int64_t batch, bool eager, int steps, int reps) {
  double ms = NAN;
  dist::set_async_progress(false);
  if (dist::rank() == 0) {
    Replica r = makeReplica(workload, batch);
    auto step = eager ? eagerStep(r, nullptr, EagerSync::Hooks) : tracedStep(workload, r, nullptr);
    for (int w = 0; w < 3; ++w) sink(step());
    std::vector<double> samples;
    for (int rep = 0; rep < reps; ++rep) {
      auto t0 = Clock::now();
      for (int s = 0; s < steps; ++s) sink(step());
      samples.push_back(msSince(t0) / steps);
    }
    ms = median(samples);
  }
  dist::barrier();
  dist::set_async_progress(true);
  return ms;
}

// The buckets' all-reduces run alone, blocking, one after another: ms per step.
double allReduceAloneMs(const kiln::nn::DistributedDataParallel& ddp, int reps) {
  std::vector<Tensor> flats;
  for (const auto& bucket : ddp.buckets()) {
    int64_t n = 0;
    for (const Tensor& p : bucket) n += p.numel();
    flats.push_back(kiln::ones({n}));
  }
  dist::set_async_progress(false);
  std::vector<double> samples;
  for (int rep = 0; rep < reps + 2; ++rep) {
    dist::barrier();
    auto t0 = Clock::now();
    for (const Tensor& f : flats) dist::all_reduce(f, dist::ReduceOp::Mean);
    if (rep >= 2) samples.push_back(msSince(t0));  // two warm-ups
  }
  dist::set_async_progress(true);
  return rankMean(median(samples));
}

struct ModeFigures {
  std::vector<double> stepMs, blockedMs, windowMs, doneAtWait;
};

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", std::clamp(share, 0.0, 1.0) * 100);
  return text;
}

// One way of running the step: which step, and the progress thread on or off.
struct Variant {
  std::string name;
  const std::function<Tensor()>* step;
  bool progress;
  int baseline;  // the variant without communication this one is compared with
};

void runWorkload(const std::string& workload, int64_t batch, double bucketMb, int steps,
                 const Options& options, Table& table) {
  const int n = dist::world_size();
  std::fprintf(stderr, "%s: one process, batch %lld and %lld\n", workload.c_str(),
               (long long)batch, (long long)(n * batch));
  double oneMs[2], oneWholeMs[2];  // traced, eager
  for (int eager = 0; eager < 2; ++eager) {
    oneMs[eager] = oneProcessMs(workload, batch, eager, steps, options.reps);
    oneWholeMs[eager] = oneProcessMs(workload, n * batch, eager, steps, options.reps);
  }

  std::fprintf(stderr, "%s: %d ranks, batch %lld each\n", workload.c_str(), n, (long long)batch);
  // Traced and eager on replicas of their own, so neither invalidates the other's
  // recording; the same steps without the all-reduces run on every rank at once: what a
  // step costs when the ranks compete for the cores alike but do not communicate.
  Replica r = makeReplica(workload, batch), local = makeReplica(workload, batch);
  Replica er = makeReplica(workload, batch), elocal = makeReplica(workload, batch);
  kiln::nn::DistributedDataParallel ddp(r.model, {.bucket_cap_mb = bucketMb});
  kiln::nn::DistributedDataParallel eddp(er.model, {.bucket_cap_mb = bucketMb});
  const std::function<Tensor()> traced = tracedStep(workload, r, &ddp),
                                tracedLocal = tracedStep(workload, local, nullptr),
                                eagerLocal = eagerStep(elocal, nullptr, EagerSync::Hooks),
                                eagerAfter = eagerStep(er, &eddp, EagerSync::AfterBackward),
                                eagerHooks = eagerStep(er, &eddp, EagerSync::Hooks);
  const std::vector<Variant> variants = {
      {"traced, no all-reduce", &tracedLocal, false, 0},
      {"traced, progress off", &traced, false, 0},
      {"traced, progress on", &traced, true, 0},
      {"eager, no all-reduce", &eagerLocal, false, 3},
      {"eager, after backward", &eagerAfter, true, 3},
      {"eager, hooks, progress off", &eagerHooks, false, 3},
      {"eager, hooks, progress on", &eagerHooks, true, 3},
  };
  for (const Variant& v : variants)  // records, compiles (again after momentum)
    for (int w = 0; w < 3; ++w) sink((*v.step)());
  const double aloneMs = allReduceAloneMs(ddp, options.reps);
  int64_t elements = 0;
  for (const auto& bucket : ddp.buckets())
    for (const Tensor& p : bucket) elements += p.numel();

  std::vector<ModeFigures> figures(variants.size());
  for (int rep = 0; rep < options.reps; ++rep)
    for (size_t i = 0; i < variants.size(); ++i) {
      const Variant& v = variants[(size_t(rep) + i) % variants.size()];  // rotate the order
      ModeFigures& m = figures[size_t(&v - variants.data())];
      dist::set_async_progress(v.progress);
      sink((*v.step)());
      dist::reset_comm_stats();
      const double ms = timeSteps(*v.step, steps);
      const dist::CommStats stats = dist::comm_stats();
      m.stepMs.push_back(rankMean(ms));
      m.blockedMs.push_back(rankMean(stats.blocked_seconds * 1e3 / steps));
      m.windowMs.push_back(rankMean(stats.issue_to_wait_seconds * 1e3 / steps));
      m.doneAtWait.push_back(
          rankMean(stats.waits ? double(stats.completed_before_wait) / double(stats.waits) : 0));
    }
  dist::set_async_progress(true);

  char buckets[64];
  std::snprintf(buckets, sizeof buckets, "%zu (%.2f MB)", ddp.buckets().size(),
                double(elements) * 4 / 1e6);
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    const ModeFigures& m = figures[i];
    const bool eager = v.baseline != 0;
    const double stepMs = median(m.stepMs), blocked = median(m.blockedMs);
    const double localMs = median(figures[size_t(v.baseline)].stepMs);
    if (size_t(v.baseline) == i) {
      table.row({workload, std::to_string(batch), buckets, v.name, fmtMs(stepMs), fmtMs(localMs),
                 fmtMs(oneMs[eager]), fmtMs(oneWholeMs[eager]), fmtMs(aloneMs), "-", "-", "-",
                 "-", "-", "-"});
      continue;
    }
    table.row({workload, std::to_string(batch), buckets, v.name, fmtMs(stepMs), fmtMs(localMs),
               fmtMs(oneMs[eager]), fmtMs(oneWholeMs[eager]), fmtMs(aloneMs),
               fmtMs(median(m.windowMs)), fmtMs(blocked), percent(median(m.doneAtWait)),
               fmtMs(stepMs - localMs), percent(1 - blocked / aloneMs),
               percent(1 - (stepMs - localMs) / aloneMs)});
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parseOptions(argc, argv, "distributed",
                                 {"--mlp_batch", "--cnn_batch", "--mlp_bucket_mb", "--cnn_bucket_mb"});
  int64_t mlpBatch = kBatch / 2, cnnBatch = 16;
  double mlpBucketMb = 0.25, cnnBucketMb = 1;
  for (const std::string& arg : options.extra) {
    const std::string value = arg.substr(arg.find('=') + 1);
    if (arg.rfind("--mlp_batch=", 0) == 0) mlpBatch = std::max(1, std::atoi(value.c_str()));
    if (arg.rfind("--cnn_batch=", 0) == 0) cnnBatch = std::max(1, std::atoi(value.c_str()));
    if (arg.rfind("--mlp_bucket_mb=", 0) == 0) mlpBucketMb = std::atof(value.c_str());
    if (arg.rfind("--cnn_bucket_mb=", 0) == 0) cnnBucketMb = std::atof(value.c_str());
  }
  if (options.reps == 9) options.reps = 5;  // the harness's default is for single steps
  const int threads = setUpThreads(options);  // before anything starts Kiln's pool
  dist::init();
  const int n = dist::world_size();
  const std::string cpus = rankCpus();
  if (dist::rank() == 0) {
    printMachine(threads);
    std::printf("ranks: %d (per rank: %d threads; %s), load before: %s\n", n, threads,
                cpus.c_str(), loadAverage().c_str());
  }
  Table table({"step", "batch/rank:", "buckets:", "variant", "step:", "no all-reduce:",
               "1 proc, batch:", "1 proc, N x batch:", "all-reduce alone:", "start-to-wait:",
               "blocked:", "done at wait:", "exposed:", "hidden (waits):", "hidden (step):"});
  if (wanted(options, "MLP")) runWorkload("MLP", mlpBatch, mlpBucketMb, 40, options, table);
  if (wanted(options, "CNN")) runWorkload("CNN", cnnBatch, cnnBucketMb, 3, options, table);
  if (dist::rank() == 0) {
    std::printf("\nms per step, median of %d samples; each sample's figures are means over the "
                "ranks\n\n", options.reps);
    table.print();
    std::printf("\nload after: %s\n", loadAverage().c_str());
  }
  dist::finalize();
  return 0;
}
