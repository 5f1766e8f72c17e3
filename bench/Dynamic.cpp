// bench/dynamic: dynamic shapes (issue 23, docs/ARCHITECTURE.md "Dynamic shapes").
//
//   bazel run -c opt //bench:dynamic -- [--sizes=64] [--timed=8] [--at=N,M,...] [--reps=9]
//                                        [--threads=N]
//
// 1. The MLP training step (784-256-256-10, SGD, symbolic, modules named, the batch dim
//    named dynamic) traced once and called at --sizes different batch sizes (2, 6, 10, ...):
//    how many recordings and how many programs (compiles) that costs, and the time of the
//    first call at each size.
// 2. At --timed of those sizes (or at the sizes --at lists), per-call time of the dynamic trace against a static trace
//    of that size alone (automatic_dynamic off), timed alternately in one run.
// 3. Dispatch: a traced add of two [1]-element tensors, static against dynamic.
// No LibTorch here: the contenders are Kiln's static and dynamic traces of one program.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench/Harness.h"
#include "bench/Mlp.h"
#include "kiln/kiln.h"

namespace {

using kiln::Tensor;
using namespace kiln::bench;

using Mlp = KilnMlp;

using Step = kiln::jit::Traced<std::function<Tensor(Tensor, Tensor)>>;

// dynamic: the batch dim named dynamic (compiled once, from the first call); static: a
// trace that never merges sizes.
Step tracedStep(const std::shared_ptr<Mlp>& mlp, bool dynamic) {
  kiln::jit::TraceOptions options{.symbolic = true, .name = "mlp_step"};
  options.automatic_dynamic = dynamic;
  if (dynamic) options.dynamic_dims = {{.input = -1, .dim = 0}};
  options.max_retraces = 1 << 20;
  Step t = kiln::jit::trace(std::function<Tensor(Tensor, Tensor)>(
                                [mlp](Tensor x, Tensor y) { return mlp->step(x, y); }),
                            options);
  t.name_module("model", mlp->model).name_optimizer("opt", mlp->opt);
  return t;
}

struct Batch {
  Tensor x, y;
};

Batch batch(int64_t n) {
  kiln::manual_seed(uint64_t(n));
  return {kiln::randn({n, 784}), kiln::randint(0, 10, {n})};
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parseOptions(argc, argv, "bench/dynamic", {"--sizes", "--timed", "--at"});
  int numSizes = 64, numTimed = 8;
  std::vector<int64_t> at;  // --at: the sizes to time, instead of --timed of the sizes
  for (const std::string& flag : opt.extra) {
    if (flag.rfind("--at=", 0) == 0)
      for (size_t k = 5; k < flag.size();) {
        size_t end = flag.find(',', k);
        if (end == std::string::npos) end = flag.size();
        at.push_back(std::max<int64_t>(1, std::stoll(flag.substr(k, end - k))));
        k = end + 1;
      }
    if (flag.rfind("--sizes=", 0) == 0) numSizes = std::max(1, std::stoi(flag.substr(8)));
    if (flag.rfind("--timed=", 0) == 0) numTimed = std::max(1, std::stoi(flag.substr(8)));
  }
  const int threads = setUpThreads(opt);
  printMachine(threads);
  std::vector<int64_t> sizes;
  for (int k = 0; k < numSizes; ++k) sizes.push_back(2 + 4 * k);

  // 1. One dynamic trace through every size.
  auto mlp = std::make_shared<Mlp>();
  Step dynamic = tracedStep(mlp, true);
  double firstMs = 0, secondMs = 0;
  for (int64_t n : sizes) {
    Batch b = batch(n);
    auto t0 = Clock::now();
    // Symbolic: the first call at a size records it (placeholders) to check it, then plans
    // the dynamic program's memory for it (the first call of all compiles it) and runs it.
    sink(dynamic(b.x, b.y));
    firstMs += msSince(t0);
    t0 = Clock::now();
    sink(dynamic(b.x, b.y));  // the second only runs it
    secondMs += msSince(t0);
  }
  std::printf("\n## MLP training step through %d batch sizes (2 to %lld), one trace\n\n", numSizes,
              (long long)sizes.back());
  std::printf("| recordings kept | programs compiled | first calls (check, compile, run), total ms | second calls (run), total ms |\n");
  std::printf("|---|---|---|---|\n");
  std::printf("| %zu | %zu | %s | %s |\n", dynamic.num_traces(), dynamic.num_compiles(),
              fmtMs(firstMs).c_str(), fmtMs(secondMs).c_str());

  // 2. Per-call time: the dynamic trace against a static trace of the same size.
  std::printf("\n## Per call: dynamic trace against a static trace of that size (ms, median of %d)\n\n",
              opt.reps);
  std::printf("| batch | dynamic | static | dynamic / static | spread |\n|---|---|---|---|---|\n");
  if (at.empty())
    for (int k = 0; k < numTimed && k < numSizes; ++k)
      at.push_back(sizes[size_t(k) * size_t(numSizes) / size_t(numTimed)]);
  for (int64_t n : at) {
    auto staticMlp = std::make_shared<Mlp>();
    Step fixed = tracedStep(staticMlp, false);
    auto b = std::make_shared<Batch>(batch(n));
    sink(fixed(b->x, b->y));
    sink(fixed(b->x, b->y));
    Timed d([&dynamic, b] { sink(dynamic(b->x, b->y)); }), s([&fixed, b] { sink(fixed(b->x, b->y)); });
    timeAlternating({&d, &s}, opt);
    std::printf("| %lld | %s | %s | %s | %s |\n", (long long)n, fmtMs(d.median()).c_str(),
                fmtMs(s.median()).c_str(), fmtRatio(d.median() / s.median()).c_str(),
                spreadText(d, s).c_str());
  }

  // 3. Dispatch on a tiny graph.
  auto add = [](bool dyn) {
    kiln::jit::TraceOptions options{.symbolic = true, .name = "add"};
    options.automatic_dynamic = dyn;
    return kiln::jit::trace(std::function<Tensor(Tensor, Tensor)>(
                                [](Tensor a, Tensor b) { return kiln::add(a, b); }),
                            options);
  };
  auto staticAdd = add(false), dynamicAdd = add(true);
  dynamicAdd(kiln::ones({2}), kiln::ones({2}));
  dynamicAdd(kiln::ones({3}), kiln::ones({3}));  // now dynamic in dim 0
  auto one = std::make_shared<std::pair<Tensor, Tensor>>(kiln::ones({2}), kiln::ones({2}));
  staticAdd(one->first, one->second);
  dynamicAdd(one->first, one->second);
  Timed sd([&staticAdd, one] { staticAdd(one->first, one->second); }),
      dd([&dynamicAdd, one] { dynamicAdd(one->first, one->second); });
  timeAlternating({&sd, &dd}, opt);
  std::printf("\n## Dispatch: traced add of two [2] tensors, per call\n\n");
  std::printf("| static | dynamic | spread |\n|---|---|---|\n| %.2f us | %.2f us | %s |\n",
              sd.median() * 1000, dd.median() * 1000, spreadText(dd, sd).c_str());
  std::printf("\n(dynamic.num_traces %zu, add traces %zu)\n", dynamic.num_traces(), dynamicAdd.num_traces());
  return 0;
}
