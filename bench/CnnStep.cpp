// bench/cnn_step: workload 3 of docs/BENCHMARKS.md, the CNN training step (torchvision's
// mobilenet_v2, width 1.0, 10 classes, 32x32 inputs, batch 64, cross-entropy, SGD with
// momentum 0.9): eager Kiln, traced Kiln (jit::trace), Kiln's nn::Graph and LibTorch eager,
// for speed (workload 3) and peak memory (workload 6).
//
//   bazel run -c opt //bench:cnn_step [-- --reps=15 --threads=N]
//
// Speed: the four steps run in one process on the same batch, each on its own copy of the
// model (same initial weights; LibTorch's are Kiln's, copied by parameter name), warmed up
// (the traced and graph steps compile), then timed one step per sample, the samples rotating
// between the four (bench/Harness's timeAlternating); the median of --reps samples.
//
// Memory: each variant again in a child process of its own (this binary, --child=memory:V),
// so that no variant's heap, compile or library state is in another's figures. The child
// reads its resident set (VmRSS) before building anything, builds the model, runs three
// warm-up steps, hands freed memory back to the system (Kiln's cache of freed blocks, then
// malloc_trim), resets the kernel's high-water mark (writing 5 to /proc/self/clear_refs)
// and runs three more steps; VmHWM then is the peak resident set of those steps (and three
// more count the page faults of a step, the caches refilled). Kiln's children
// also read Storage's peak allocator counter over the same steps and the compiled program's arena
// (KILN_LOG=compile; the children compile, with the disk cache off).
#include <malloc.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/Cnn.h"
#include "bench/Harness.h"
#include "bench/TorchMobileNetV2.h"
#include "kiln/core/Storage.h"
#include "kiln/kiln.h"

namespace {

using namespace kiln::bench;
using kiln::Tensor;
using Step = std::function<Tensor()>;  // one training step; returns the loss

const char* const kVariants[] = {"eager", "traced", "graph", "libtorch"};

// ---- the four steps -------------------------------------------------------------------------

#if KILN_HAVE_LIBTORCH
struct TorchCnn {
  TorchMobileNetV2 model{kCnnClasses};
  torch::optim::SGD opt{model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9)};
  torch::Tensor x, y;

  // Kiln's initial weights, so that both train the same network from the same point.
  explicit TorchCnn(const KilnCnn& from, const CnnData& data) {
    copyKilnWeights(*from.model, *model);
    std::vector<float> pixels = data.host;
    x = torchTensor(pixels, {kCnnBatch, 3, kCnnSide, kCnnSide});
    y = torch::from_blob(data.y.data_ptr<int64_t>(), {kCnnBatch}, torch::kInt64).clone();
  }

  torch::Tensor step() {
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    return loss;
  }
};
#endif

// The training step of `variant` on a model of its own, or an empty function for LibTorch
// when it is not installed. Every Kiln model starts from manual_seed(0); LibTorch's gets the
// same weights, copied from a fresh Kiln model.
Step makeStep(const std::string& variant, std::shared_ptr<CnnData> data) {
  auto cnn = std::make_shared<KilnCnn>();
  if (variant == "eager") return [cnn, data] { return cnn->step(data->x, data->y); };
  if (variant == "traced") {
    auto step = tracedCnnStep(cnn);
    return [cnn, data, step] { return step(data->x, data->y); };
  }
  if (variant == "graph") {
    auto graph = std::make_shared<CnnGraph>(*cnn);
    return [cnn, data, graph] { return (*graph)(data->x, data->y); };
  }
#if KILN_HAVE_LIBTORCH
  auto peer = std::make_shared<TorchCnn>(*cnn, *data);
  return [peer] {
    torch::Tensor loss = peer->step();
    return kiln::tensor({loss.item<float>()});
  };
#else
  return {};
#endif
}

// ---- memory, in a child process per variant ---------------------------------------------------

// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"; the kernel writes kB).
double statusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return 1024.0 * std::atof(line.c_str() + field.size() + 1);
  return NAN;
}

constexpr int kMemorySteps = 3;

// Prints "MEM key bytes" lines for the parent: the resident set at start, after the warm-up
// (whole-process peak so far), before and at the peak of the measured steps, and for Kiln
// Storage's peak above what was alive before them.
int memoryChild(const std::string& variant) {
  // Pages mapped from files (the libraries' code and data) and shared memory: the resident
  // set less these is the process's private memory.
  auto fileBacked = [] { return statusBytes("RssFile") + statusBytes("RssShmem"); };
  const double start = statusBytes("VmRSS");
  const double fileStart = fileBacked();
  auto data = std::make_shared<CnnData>();
  Step step = makeStep(variant, data);
  if (!step) return 3;
  for (int i = 0; i < kMemorySteps; ++i) sink(step());
  const double warmupPeak = statusBytes("VmHWM");
  kiln::Storage::emptyCache();  // Kiln's cache of freed blocks: the steps below refill it
  malloc_trim(0);
  const double before = statusBytes("VmRSS");
  const double fileBefore = fileBacked();
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
  const double storageBefore = double(kiln::Storage::allocatedBytes());
  kiln::Storage::resetPeakAllocatedBytes();
  for (int i = 0; i < kMemorySteps; ++i) sink(step());
  const double peak = statusBytes("VmHWM");
  // Page faults of steps after these (the caches refilled): what a step costs a guest whose
  // faults are slow (the header's "page faults" line).
  rusage usageBefore{}, usageAfter{};
  getrusage(RUSAGE_SELF, &usageBefore);
  for (int i = 0; i < kMemorySteps; ++i) sink(step());
  getrusage(RUSAGE_SELF, &usageAfter);
  std::printf("MEM faults_per_step %.0f\n", double(usageAfter.ru_minflt - usageBefore.ru_minflt) / kMemorySteps);
  std::printf("MEM start %.0f\nMEM warmup_peak %.0f\nMEM before %.0f\nMEM peak %.0f\n", start,
              warmupPeak, before, peak);
  std::printf("MEM file_start %.0f\nMEM file_before %.0f\nMEM file_after %.0f\n", fileStart,
              fileBefore, fileBacked());
  if (variant != "libtorch")
    std::printf("MEM storage_peak %.0f\n",
                double(kiln::Storage::peakAllocatedBytes()) - storageBefore);
  std::fflush(stdout);
  return 0;
}

struct Memory {
  std::map<std::string, double> bytes;  // the MEM lines
  double arenaBytes = NAN;              // the last compiled (or loaded) program's arena
  bool ok() const { return bytes.count("peak") != 0; }
  double at(const std::string& key) const {
    auto it = bytes.find(key);
    return it == bytes.end() ? NAN : it->second;
  }
};

Memory runMemoryChild(const std::string& variant, int threads) {
  std::ostringstream cmd;
  // KILN_CACHE_DIR=off: the child compiles, so KILN_LOG=compile reports the arena (a program
  // loaded from the disk cache is logged without it).
  cmd << "KILN_CACHE_DIR=off KILN_LOG=compile KILN_NUM_THREADS=" << threads << " "
      << shellQuote(selfPath()) << " --threads=" << threads << " --child=memory:" << variant
      << " 2>&1";
  Memory m;
  std::optional<std::string> text = capture(cmd.str());
  if (!text) return m;
  for (const std::string& line : splitLines(*text)) {
    if (line.rfind("MEM ", 0) == 0) {
      std::istringstream fields(line.substr(4));
      std::string key;
      double value;
      if (fields >> key >> value) m.bytes[key] = value;
    } else if (size_t at = line.find(" bytes"), arena = line.rfind("arena ", at);
               line.find("kiln: ") != std::string::npos && at != std::string::npos &&
               arena != std::string::npos) {
      m.arenaBytes = std::atof(line.c_str() + arena + 6);
    }
  }
  if (!m.ok()) std::fprintf(stderr, "memory child %s said:\n%s\n", variant.c_str(), text->c_str());
  return m;
}

// ---- printing -------------------------------------------------------------------------------

int64_t parameterCount(const kiln::vision::MobileNetV2& model) {
  int64_t n = 0;
  for (const Tensor& p : model->parameters()) n += p.numel();
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parseOptions(argc, argv, "cnn_step", {"--child"});
  for (const std::string& extra : opt.extra)
    if (extra.rfind("--child=memory:", 0) == 0) {
      setUpThreads(opt);
      return memoryChild(extra.substr(15));
    }
  defaultToMlirBackend();
  const int threads = setUpThreads(opt);
  std::printf(
      "bench/cnn_step: the CNN training step (workload 3), medians of %d steps per "
      "variant, alternating\n",
      opt.reps);
  printMachine(threads);
  std::printf("load average at start: %s\n", loadAverage().c_str());

  auto data = std::make_shared<CnnData>();
  std::map<std::string, Step> steps;
  for (const char* v : kVariants) steps[v] = makeStep(v, data);
  const int64_t kilnParams = parameterCount(KilnCnn().model);
#if KILN_HAVE_LIBTORCH
  int64_t torchParams = 0;
  for (const torch::Tensor& p : TorchMobileNetV2(kCnnClasses)->parameters())
    torchParams += p.numel();
  std::printf("parameters: kiln %lld, libtorch %lld (%s; every name and shape matched)\n",
              (long long)kilnParams, (long long)torchParams,
              kilnParams == torchParams ? "equal" : "DIFFERENT");
  if (kilnParams != torchParams) return 1;
#else
  std::printf("parameters: kiln %lld; LibTorch not installed: skipped\n", (long long)kilnParams);
#endif

  // Warm-up: the traced step records twice (SGD makes its momentum buffers on the first
  // step) and compiles, as does the graph. The first losses are printed as a sanity check:
  // all near ln(10) at these initial weights, not equal (each variant draws its own dropout
  // masks); //bench:cnn_peer_test checks that the networks are the same.
  std::printf("warm-up (first 3 steps, ms; loss of the first):\n");
  for (const char* v : kVariants) {
    if (!steps[v]) continue;
    std::string times;
    float loss = NAN;
    for (int i = 0; i < 3; ++i) {
      auto t0 = Clock::now();
      Tensor l = steps[v]();
      if (i == 0) loss = l.item<float>();
      times += (i ? ", " : "") + fmtMs(msSince(t0));
    }
    std::printf("  %-8s %s; loss %.4f\n", v, times.c_str(), loss);
  }
  std::fflush(stdout);

  std::map<std::string, Timed> timed;
  std::vector<Timed*> contenders;
  for (const char* v : kVariants) {
    Step step = steps[v];
    timed.emplace(v, Timed(step ? std::function<void()>([step] { sink(step()); }) : nullptr));
  }
  for (const char* v : kVariants) contenders.push_back(&timed.at(v));
  std::fprintf(stderr, "timing %d steps of each variant\n", opt.reps);
  timeAlternating(contenders, opt);
  const std::string loadAfterTiming = loadAverage();

  std::map<std::string, Memory> memory;
  for (const char* v : kVariants) {
    if (!steps[v]) continue;
    std::fprintf(stderr, "memory: child process for %s\n", v);
    memory[v] = runMemoryChild(v, threads);
  }

  auto ms = [&](const char* v) { return steps[v] ? timed.at(v).median() : NAN; };
  std::printf("\nload average after the timed steps: %s\n\n", loadAfterTiming.c_str());
  std::printf(
      "Speed: median ms per step (IQR/median); \"x eager\" and \"x LibTorch\" are that "
      "variant's speedup (their ms / its ms).\n\n");
  Table speed({"variant", "ms per step:", "IQR:", "samples/s:", "x eager:", "x LibTorch:"});
  for (const char* v : kVariants) {
    if (!steps[v]) {
      speed.row({v, "LibTorch not installed: skipped", "-", "-", "-", "-"});
      continue;
    }
    char rate[16];
    std::snprintf(rate, sizeof rate, "%.0f", 1000.0 * double(kCnnBatch) / ms(v));
    speed.row({v, fmtMs(ms(v)), fmtPercent(timed.at(v).spreadPercent() / 100), rate,
               fmtRatio(ms("eager") / ms(v)), fmtRatio(ms("libtorch") / ms(v))});
  }
  speed.print();

  const double overTorch = ms("libtorch") / ms("traced"),
               graphOverEager = ms("eager") / ms("graph");
  std::printf("\n");
  Table targets({"target", "measured", "verdict"});
  targets.row({"CNN step, traced Kiln >= 1.5x LibTorch eager", fmtRatio(overTorch),
               verdict(overTorch, overTorch >= 1.5, fmtRatio(overTorch) + " < 1.5x")});
  targets.row(
      {"nn::Graph MobileNetV2 training >= 1.5x eager Kiln", fmtRatio(graphOverEager),
       verdict(graphOverEager, graphOverEager >= 1.5, fmtRatio(graphOverEager) + " < 1.5x")});
  targets.print();

  std::printf(
      "\nPeak memory (workload 6), each variant in its own child process. RSS: the "
      "resident set from /proc/self/status, above the child's at its start (before the "
      "model); \"step peak\" is VmHWM over %d steps after warm-up, Storage::emptyCache, "
      "malloc_trim and a reset of the high-water mark, \"held before\" the resident set just "
      "before them, "
      "\"whole process\" VmHWM through building, compiling and warm-up. Kiln storage: "
      "Storage's peak over the same steps above what was alive before them, plus the "
      "compiled program's arena (oneDNN scratchpads not counted). \"private\": the step peak "
      "less the pages mapped from files (RssFile + RssShmem just before the steps: code and "
      "data of the libraries, which the compiler touches and any process using them shares; "
      "an upper bound, as those pages only grow), above the same at start; \"files grew\": "
      "file-backed pages from start to before the steps; \"page faults per step\": minor faults "
      "over %d more steps after those.\n\n",
      kMemorySteps, kMemorySteps);
  Table mem({"variant", "RSS at start:", "whole process:", "held before:", "step peak:",
             "step peak - held:", "step peak, private:", "files grew:",
             "Kiln storage peak + arena:", "arena:", "page faults per step:"});
  auto above = [&](const Memory& m, const char* key) { return m.at(key) - m.at("start"); };
  auto privatePeak = [&](const Memory& m) {
    return (m.at("peak") - m.at("file_before")) - (m.at("start") - m.at("file_start"));
  };
  auto kilnWorking = [&](const Memory& m) {
    return m.at("storage_peak") + (std::isnan(m.arenaBytes) ? 0 : m.arenaBytes);
  };
  for (const char* v : kVariants) {
    if (!memory.count(v) || !memory[v].ok()) continue;
    const Memory& m = memory[v];
    mem.row({v, fmtMiB(m.at("start")), fmtMiB(above(m, "warmup_peak")), fmtMiB(above(m, "before")),
             fmtMiB(above(m, "peak")), fmtMiB(m.at("peak") - m.at("before")),
             fmtMiB(privatePeak(m)), fmtMiB(m.at("file_before") - m.at("file_start")),
             std::string(v) == "libtorch" ? "-" : fmtMiB(kilnWorking(m)), fmtMiB(m.arenaBytes),
             std::to_string(int64_t(m.at("faults_per_step")))});
  }
  mem.print();
  std::printf("\n");
  Table memTargets(
      {"target (compiled <= 0.5x eager)", "traced / eager", "verdict", "graph / eager", "verdict"});
  auto ratioRow = [&](const std::string& what, const std::function<double(const Memory&)>& f) {
    const double t = f(memory["traced"]) / f(memory["eager"]);
    const double g = f(memory["graph"]) / f(memory["eager"]);
    memTargets.row({what, fmtRatio(t), verdict(t, t <= 0.5, fmtRatio(t) + " > 0.5x"), fmtRatio(g),
                    verdict(g, g <= 0.5, fmtRatio(g) + " > 0.5x")});
  };
  ratioRow("step peak RSS above start", [&](const Memory& m) { return above(m, "peak"); });
  ratioRow("step peak private RSS above start", privatePeak);
  ratioRow("Kiln storage peak + arena", kilnWorking);
  memTargets.print();

  std::printf("\nload average at end: %s\n", loadAverage().c_str());
  return 0;
}
