// bench/opt_levels: what each LLVM optimization level costs in compile time and gains in
// speed, on the traced MLP training step (workload 2) and the MobileNetV2 training step
// (workload 3), side by side in one process (docs/BENCHMARKS.md, "Compile latency").
//
//   bazel run -c opt //bench:opt_levels -- --reps=7 [--filter=MLP|CNN] [--levels=321]
//       [--o0-elements=0,4096] [--compiles=N]
//
// KILN_LLVM_OPT, which the runtime reads at each compile and keys the cache by, picks the
// level and KILN_O0_ELEMENTS (--o0-elements, each value a row at each level) which small
// kernels skip LLVM's optimizations; run with KILN_LOG=compile for each compile's stage times on stderr. The disk cache is off, so each first call traces and compiles; compiles of the
// levels alternate (cold: a new model and trace each time, the previous one released so
// nothing is shared), then the compiled steps are timed in rotation like bench/traced's
// rows.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sys/resource.h>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/Cnn.h"
#include "bench/Harness.h"
#include "bench/Mlp.h"
#include "kiln/kiln.h"

namespace {

using namespace kiln::bench;
using kiln::Tensor;
using Step = std::function<Tensor()>;

// A new traced step of `workload` ("MLP" or "CNN"), not yet compiled.
Step newStep(const std::string& workload) {
  if (workload == "MLP") {
    auto mlp = std::make_shared<KilnMlp>();
    auto data = std::make_shared<MlpData>(MlpData::make());
    auto step = tracedStep(mlp);
    return [mlp, data, step] { return step(data->x, data->y); };
  }
  auto cnn = std::make_shared<KilnCnn>();
  auto data = std::make_shared<CnnData>();
  auto step = tracedCnnStep(cnn);
  return [cnn, data, step] { return step(data->x, data->y); };
}

struct Level {
  char level;
  std::string o0Elements;  // KILN_O0_ELEMENTS: kernels up to this many elements at O0
  std::vector<double> compileMs, compileCpuMs;  // trace, compile and the first run, per compile
  Step step;                      // the last one compiled
};

void setLevel(const Level& row) {
  const char value[2] = {row.level, 0};
  setenv("KILN_LLVM_OPT", value, 1);
  setenv("KILN_O0_ELEMENTS", row.o0Elements.c_str(), 1);
}

// CPU time of this process (all its threads) so far, in ms: on a shared machine it moves
// less with other processes' load than the wall time does.
double cpuMs() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto ms = [](const timeval& t) { return double(t.tv_sec) * 1e3 + double(t.tv_usec) / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

struct Cost {
  double wallMs, cpuMs;
};

// The call that records the trace and compiles it, then runs the program once: the first,
// or with momentum (the CNN) the second, since SGD makes its momentum buffers on its first
// step and the tracer records the step again after that warm-up.
Cost compileCost(const std::string& workload, const Step& step) {
  if (workload == "CNN") step();
  const double cpu0 = cpuMs();
  auto t0 = Clock::now();
  sink(step());
  return {msSince(t0), cpuMs() - cpu0};
}

// "0,4096" -> {"0", "4096"}.
std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  return items;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? NAN : v[v.size() / 2];
}

// `quick`: the KILN_O0_ELEMENTS values to compare at each level; `compiles`: cold
// compiles per row (default: --reps for the MLP, 1 for the CNN).
void run(const std::string& workload, const std::string& levels,
         const std::vector<std::string>& quick, int compiles, const Options& opt) {
  if (compiles <= 0) compiles = workload == "MLP" ? opt.reps : 1;
  std::vector<Level> rows;
  for (char level : levels)
    for (const std::string& elements : quick) rows.push_back({level, elements, {}, {}, nullptr});
  for (int i = 0; i < compiles; ++i)
    for (Level& row : rows) {
      std::fprintf(stderr, "%s: compile %d of %d at O%c, O0 up to %s elements\n", workload.c_str(),
                   i + 1, compiles, row.level, row.o0Elements.c_str());
      row.step = nullptr;  // releases the last program, so this compile shares nothing
      setLevel(row);
      row.step = newStep(workload);
      const Cost cost = compileCost(workload, row.step);
      row.compileMs.push_back(cost.wallMs);
      row.compileCpuMs.push_back(cost.cpuMs);
    }
  std::vector<Timed> timed;
  for (Level& row : rows) timed.emplace_back([step = row.step] { sink(step()); });
  std::vector<Timed*> contenders;
  for (Timed& t : timed) contenders.push_back(&t);
  std::fprintf(stderr, "%s: timing the compiled steps\n", workload.c_str());
  timeAlternating(contenders, opt);
  for (size_t k = 0; k < rows.size(); ++k)
    std::printf("| %s step | O%c, O0 <= %s | %.1f / %.1f (%zu) | %.3f | %.0f%% | %.3fx |\n",
                workload.c_str(), rows[k].level, rows[k].o0Elements.c_str(), median(rows[k].compileMs), median(rows[k].compileCpuMs),
                rows[k].compileMs.size(),
                timed[k].median(), timed[k].spreadPercent(), timed[k].median() / timed[0].median());
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parseOptions(argc, argv, "opt_levels", {"--levels", "--o0-elements", "--compiles"});
  std::string levels = "321";
  std::vector<std::string> quick = {"0"};
  int compiles = 0;
  for (const std::string& flag : opt.extra) {
    if (flag.rfind("--levels=", 0) == 0) levels = flag.substr(9);
    if (flag.rfind("--o0-elements=", 0) == 0) quick = splitList(flag.substr(14));
    if (flag.rfind("--compiles=", 0) == 0) compiles = std::atoi(flag.c_str() + 11);
  }
  setenv("KILN_CACHE_DIR", "off", 1);
  setenv("KILN_JIT_BACKEND", "MLIR", 1);
  const int threads = setUpThreads(opt);
  std::printf("bench/opt_levels: LLVM's optimization level (KILN_LLVM_OPT) on traced training "
              "steps, medians of %d repetitions (~%.0f ms each)\n", opt.reps, opt.targetMs);
  printMachine(threads);
  std::printf("load average at start: %s\n\n", loadAverage().c_str());
  std::printf("| workload | LLVM level, kernels at O0 | trace + compile + first run: wall / CPU ms (compiles) | step ms | "
              "IQR | step / first level's |\n|---|---|---|---|---|---|\n");
  for (const std::string workload : {"MLP", "CNN"})
    if (wanted(opt, workload)) run(workload, levels, quick, compiles, opt);
  std::printf("\nload average at the end: %s\n", loadAverage().c_str());
  return 0;
}
