// bench/traced: traced (compiled) Kiln against eager Kiln, LibTorch eager and
// torch.jit.trace on workloads 1, 2, 4, 5 and 6 of docs/BENCHMARKS.md, one table per
// kind of target (docs/BENCHMARKS.md, "Traced Kiln vs LibTorch (issue 6)").
//
//   KILN_JIT_BACKEND=MLIR bazel run -c opt //bench:traced [-- --reps=9 --threads=N --filter=gelu|mlp]
//
// Speed rows (workloads 1, 2, 4): eager Kiln, traced Kiln, LibTorch eager and the bound
// (bytes moved / the STREAM triad bandwidth, or oneDNN sgemm / a oneDNN convolution called
// directly) are timed in one process, repetitions alternating between them (bench/Harness);
// torch.jit.trace runs in python3 (bench/torch_jit.py, the same shapes and thread count,
// timed the same way) right after, since LibTorch's Python module cannot share this process.
// Compile latency (workload 5) runs this binary again as child processes (--child=compile)
// so that "cold" is a fresh process with a fresh KILN_CACHE_DIR and "warm" a fresh process
// on the same directory; KILN_LOG=compile in the children gives the stage times and the
// program's arena size. Peak memory (workload 6) reads Storage's peak counter around one
// training step, plus the compiled program's arena.
//
// Every row prints the ratio its target is stated in and MISS where the target is not met
// (the targets of docs/BENCHMARKS.md, "Targets"); every table's header names the peer's BLAS
// and oneDNN as mapped. `--child=mlp-step` runs only the traced MLP step and prints its
// wall and CPU time per step, for perf record and A/B runs of two builds.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/Harness.h"
#include "bench/Mlp.h"
#include "kiln/core/Storage.h"
#include "kiln/kiln.h"

#if KILN_HAVE_LIBTORCH
#include <torch/torch.h>
#endif

namespace {

using namespace kiln::bench;
using kiln::Tensor;
using KT = std::vector<Tensor>;
using KFn = std::function<Tensor(const KT&)>;

// ---- traced functions of 1-3 tensors ----------------------------------------------------------

// fn traced with jit::trace (one Traced object, kept by the returned function).
KFn traced(KFn fn, size_t inputs, kiln::jit::TraceOptions options = {}) {
  using kiln::jit::trace;
  switch (inputs) {
    case 1: {
      auto t = trace([fn](Tensor a) { return fn({a}); }, options);
      return [t](const KT& in) { return t(in[0]); };
    }
    case 2: {
      auto t = trace([fn](Tensor a, Tensor b) { return fn({a, b}); }, options);
      return [t](const KT& in) { return t(in[0], in[1]); };
    }
    default: {
      auto t = trace([fn](Tensor a, Tensor b, Tensor c) { return fn({a, b, c}); }, options);
      return [t](const KT& in) { return t(in[0], in[1], in[2]); };
    }
  }
}

// ---- speed rows (workloads 1, 2, 4) ---------------------------------------------------------

enum class Target { Elementwise, Mlp, Library };

struct Row {
  std::string name, shape;
  Target target = Target::Elementwise;
  std::function<void()> eager, traced, halide, torch, bound;  // traced: MLIR; halide: HALIDE
  std::string boundKind;  // for timed bounds
  int64_t bytes = 0;      // elementwise rows: bytes moved (bound = bytes / triad)
  int64_t footprint = 0;  // floats per triad array for this row's bound
  std::optional<MlpGeometry> mlp;  // the MLP row: `bound` times oneDNN sgemm kSgemmPeakN
  double diff = NAN, diffScale = NAN;  // max |traced - eager| and max |eager|
  double eagerMs = NAN, tracedMs = NAN, halideMs = NAN, torchMs = NAN, jitMs = NAN, boundMs = NAN;
  double halideDiff = NAN;  // max |halide - eager|
  std::string spread;
};

#if KILN_HAVE_LIBTORCH
using TT = std::vector<torch::Tensor>;
using TFn = std::function<torch::Tensor(const TT&)>;
#else
using TFn = int;
#endif

// A row from the same host inputs: eager and traced Kiln run kilnFn, LibTorch torchFn.
// Traced and eager outputs are compared once, here (the first traced call records).
Row make(std::string name, Target target, std::vector<Dims> shapes, KFn kilnFn, TFn torchFn,
         kiln::jit::TraceOptions options = {}) {
  Row w;
  w.name = std::move(name);
  w.target = target;
  for (size_t i = 0; i < shapes.size(); ++i) w.shape += (i ? " " : "") + dimsText(shapes[i]);
  std::vector<std::vector<float>> host;
  for (size_t i = 0; i < shapes.size(); ++i) host.push_back(hostValues(shapes[i], uint32_t(i + 1)));
  auto k = std::make_shared<KT>();
  for (size_t i = 0; i < shapes.size(); ++i) k->push_back(kilnTensor(host[i], shapes[i]));
  kiln::jit::TraceOptions halideOptions = options;
  halideOptions.compile.backend = "HALIDE";
  KFn tracedFn = traced(kilnFn, shapes.size(), std::move(options));
  KFn halideFn = traced(kilnFn, shapes.size(), std::move(halideOptions));
  w.eager = [k, kilnFn] { sink(kilnFn(*k)); };
  w.traced = [k, tracedFn] { sink(tracedFn(*k)); };
  w.halide = [k, halideFn] { sink(halideFn(*k)); };
  std::vector<float> ref = kilnValues(kilnFn(*k));
  tracedFn(*k);  // records (and compiles); the next call runs the compiled program
  w.diff = maxAbsDiff(kilnValues(tracedFn(*k)), ref);
  halideFn(*k);
  w.halideDiff = maxAbsDiff(kilnValues(halideFn(*k)), ref);
  w.diffScale = maxAbs(ref);
#if KILN_HAVE_LIBTORCH
  auto t = std::make_shared<TT>();
  for (size_t i = 0; i < shapes.size(); ++i) t->push_back(torchTensor(host[i], shapes[i]));
  w.torch = [t, torchFn] {
    torch::Tensor y = torchFn(*t);
    void* volatile p = y.data_ptr();
    (void)p;
  };
#else
  (void)torchFn;
#endif
  return w;
}

#if KILN_HAVE_LIBTORCH
#define TORCH(body) [](const TT& in) -> torch::Tensor { body }
#else
#define TORCH(body) 0
#endif
#define KILN(body) [](const KT& in) -> Tensor { body }

// ---- the MLP training step (workload 2, bench/Mlp.h) ------------------------------------------

// The sgemm whose speed is the MLP row's peak (FLOPs per ms of oneDNN at n = 1024).
constexpr int64_t kSgemmPeakN = 1024;

Row mlpRow() {
  Row w;
  w.name = "MLP training step";
  w.shape = "784-256-256-10, batch 128, SGD";
  w.target = Target::Mlp;
  auto data = std::make_shared<MlpData>(MlpData::make());
  auto eager = std::make_shared<KilnMlp>();
  auto compiled = std::make_shared<KilnMlp>();
  auto step = tracedStep(compiled);
  auto halide = std::make_shared<KilnMlp>();
  auto halideStep = tracedStep(halide, "HALIDE");
  // The same initial weights: the first step's losses must agree.
  const Tensor eagerLoss = eager->step(data->x, data->y);
  const Tensor tracedLoss = step(data->x, data->y);
  const Tensor halideLoss = halideStep(data->x, data->y);
  w.diff = std::fabs(eagerLoss.item<float>() - tracedLoss.item<float>());
  w.halideDiff = std::fabs(eagerLoss.item<float>() - halideLoss.item<float>());
  w.diffScale = std::fabs(eagerLoss.item<float>());
  w.eager = [eager, data] { sink(eager->step(data->x, data->y)); };
  w.traced = [step, data] { sink(step(data->x, data->y)); };
  w.halide = [halideStep, data] { sink(halideStep(data->x, data->y)); };
  // The bound: the step's GEMM FLOPs at oneDNN sgemm's peak, timed with the row, plus its
  // elementwise bytes at the triad bandwidth of arrays the size of the parameters.
  w.mlp = MlpGeometry{{784, 256, 256, 10}, kBatch};
  w.bound = sgemmBound(kSgemmPeakN);
  w.boundKind = "GEMMs at oneDNN sgemm peak + elementwise at triad";
  w.footprint = w.mlp->parameters();
#if KILN_HAVE_LIBTORCH
  torch::manual_seed(0);
  auto model = std::make_shared<torch::nn::Sequential>(
      torch::nn::Linear(784, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
      torch::nn::ReLU(), torch::nn::Linear(256, 10));
  auto opt = std::make_shared<torch::optim::SGD>((*model)->parameters(), torch::optim::SGDOptions(0.01));
  auto x = torch::randn({kBatch, 784});
  auto y = torch::randint(0, 10, {kBatch}, torch::kLong);
  w.torch = [model, opt, x, y] {
    torch::Tensor loss = torch::nn::functional::cross_entropy((*model)->forward(x), y);
    opt->zero_grad();
    loss.backward();
    opt->step();
    void* volatile p = loss.data_ptr();
    (void)p;
  };
#endif
  return w;
}

// ---- the rows -------------------------------------------------------------------------------

std::vector<Row> speedRows(const Options& opt) {
  std::vector<Row> rows;
  auto want = [&](const std::string& name) { return wanted(opt, name); };

  // Workload 1: bias + scale + GELU (tanh) + scale on [rows, 1024] with a [1024] bias.
  // LibTorch's user code calls its fused torch::gelu(x, "tanh"), as in bench/compare.
  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 22, int64_t(1) << 24}) {
    const std::string name = "gelu chain " + std::to_string(n >> 20) + "M";
    if (!want(name)) continue;
    Row w = make(name, Target::Elementwise, {{n / 1024, 1024}, {1024}},
                 KILN(return kiln::mul(kiln::gelu(kiln::mul(kiln::add(in[0], in[1]), 0.5), "tanh"), 2.0);),
                 TORCH(return torch::gelu((in[0] + in[1]) * 0.5, "tanh") * 2.0;));
    w.bytes = 2 * n * 4;
    w.footprint = n;
    rows.push_back(std::move(w));
  }
  const Dims rowsShape{4096, 1024};
  const int64_t n4 = count(rowsShape);
  if (want("softmax rows [4096,1024]")) {
    Row w = make("softmax rows [4096,1024]", Target::Elementwise, {rowsShape},
                 KILN(return kiln::softmax(in[0], 1);), TORCH(return torch::softmax(in[0], 1);));
    w.bytes = 2 * n4 * 4;
    w.footprint = n4;
    rows.push_back(std::move(w));
  }
  if (want("layer_norm [4096,1024]")) {
    Row w = make("layer_norm [4096,1024]", Target::Elementwise, {rowsShape, {1024}, {1024}},
                 KILN(return kiln::layer_norm(in[0], {1024}, in[1], in[2]);),
                 TORCH(return torch::layer_norm(in[0], {1024}, in[1], in[2]);));
    w.bytes = 2 * n4 * 4;
    w.footprint = n4;
    rows.push_back(std::move(w));
  }
  // Ten ops, one of them a broadcast of a [1024] row (bench/torch_jit.py has the same).
  if (want("mixed chain, 10 ops, 1 broadcast")) {
    Row w = make("mixed chain, 10 ops, 1 broadcast", Target::Elementwise, {rowsShape, {1024}},
                 KILN({
                   Tensor t = kiln::mul(kiln::add(in[0], in[1]), 0.5);
                   t = kiln::mul(kiln::add(kiln::tanh(t), 1.0), in[0]);
                   t = kiln::sub(kiln::sigmoid(t), 0.25);
                   return kiln::mul(kiln::sqrt(kiln::abs(t)), 3.0);
                 }),
                 TORCH({
                   torch::Tensor t = (in[0] + in[1]) * 0.5;
                   t = (torch::tanh(t) + 1.0) * in[0];
                   t = torch::sigmoid(t) - 0.25;
                   return torch::sqrt(torch::abs(t)) * 3.0;
                 }));
    w.bytes = 2 * n4 * 4;
    w.footprint = n4;
    rows.push_back(std::move(w));
  }

  // Workload 2.
  if (want("MLP training step")) rows.push_back(mlpRow());

  // Workload 4: a traced matmul / conv2d against oneDNN called directly.
  for (int64_t n : {256, 1024, 2048}) {
    const std::string name = "sgemm " + std::to_string(n);
    if (!want(name)) continue;
    Row w = make(name, Target::Library, {{n, n}, {n, n}}, KILN(return kiln::matmul(in[0], in[1]);),
                 TORCH(return torch::matmul(in[0], in[1]);));
    w.bound = sgemmBound(n);
    w.boundKind = "oneDNN sgemm";
    rows.push_back(std::move(w));
  }
  struct Conv {
    const char* name;
    Dims x, w;
    int64_t groups;
  };
  for (const Conv& c : {Conv{"conv2d 3x3", {64, 32, 16, 16}, {32, 32, 3, 3}, 1},
                        Conv{"conv2d depthwise 3x3", {64, 96, 16, 16}, {96, 1, 3, 3}, 96}}) {
    if (!want(c.name)) continue;
    const int64_t groups = c.groups, pad = c.w[2] / 2;
    Row w = make(
        c.name, Target::Library, {c.x, c.w},
        [groups, pad](const KT& in) {
          return kiln::conv2d(in[0], in[1], Tensor(), {1}, {pad}, {1}, groups);
        },
#if KILN_HAVE_LIBTORCH
        [groups, pad](const TT& in) { return torch::conv2d(in[0], in[1], {}, 1, pad, 1, groups); }
#else
        0
#endif
    );
    w.bound = convBound(c.x, c.w, c.groups);
    w.boundKind = "oneDNN conv (blocked)";
    rows.push_back(std::move(w));
  }
  return rows;
}

// ---- torch.jit.trace, in python3 ----------------------------------------------------------------

std::string findScript() {
  std::vector<std::string> candidates = {"bench/torch_jit.py"};  // bazel run: the runfiles
  if (const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY"))
    candidates.push_back(std::string(ws) + "/bench/torch_jit.py");
  for (const std::string& c : candidates)
    if (std::filesystem::exists(c)) return c;
  return "";
}

// The python3 that imports torch: $KILN_PYTHON, /usr/bin/python3 (Debian's python3-torch;
// a pyenv python3 first on PATH would not see it) or python3; "" if none does.
std::string findPython() {
  std::vector<std::string> candidates;
  if (const char* p = std::getenv("KILN_PYTHON"); p && *p) candidates.push_back(p);
  candidates.insert(candidates.end(), {"/usr/bin/python3", "python3"});
  for (const std::string& py : candidates)
    if (std::system((shellQuote(py) + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0) return py;
  return "";
}

// Median ms per row name from bench/torch_jit.py ("ROW<TAB>name<TAB>ms" lines); the reason
// in `skipped` when it cannot run.
std::map<std::string, double> runTorchJit(const Options& opt, int threads, std::string& skipped) {
  std::map<std::string, double> out;
  const std::string python = findPython();
  if (python.empty()) {
    skipped = "skipped: python3-torch not installed";
    return out;
  }
  const std::string script = findScript();
  if (script.empty()) {
    skipped = "skipped: bench/torch_jit.py not found";
    return out;
  }
  std::ostringstream cmd;
  cmd << shellQuote(python) << " " << shellQuote(script) << " --reps=" << opt.reps
      << " --target_ms=" << opt.targetMs << " --threads=" << threads
      << " --filter=" << shellQuote(opt.filter);
  std::fprintf(stderr, "running %s\n", cmd.str().c_str());
  std::optional<std::string> text = capture(cmd.str());
  if (!text) {
    skipped = "skipped: could not run " + python;
    return out;
  }
  for (const std::string& line : splitLines(*text)) {
    if (line.rfind("ROW\t", 0) != 0) {
      if (line.rfind("INFO", 0) == 0) std::printf("torch_jit.py: %s\n", line.c_str());
      continue;
    }
    size_t tab = line.find('\t', 4);
    if (tab == std::string::npos) continue;
    out[line.substr(4, tab - 4)] = std::atof(line.c_str() + tab + 1);
  }
  if (out.empty()) skipped = "skipped: torch_jit.py reported no rows";
  return out;
}

// ---- compile latency (workload 5), in child processes -----------------------------------------

// The child: the first traced call of this process (a tiny add: it pays the JIT's one-time
// start-up), its first eager GEMM, then the MLP step's first calls on a new trace object.
int compileChild() {
  using kiln::jit::trace;
  auto t0 = Clock::now();
  auto tiny = trace([](Tensor a, Tensor b) { return kiln::add(a, b); });
  Tensor one = kiln::ones({1});
  tiny(one, one);
  const double initMs = msSince(t0);
  std::fflush(stdout);
  MlpData data = MlpData::make();
  // The process's first GEMM: oneDNN generates its sgemm kernels and OpenMP starts its
  // threads (about 30 ms on an AVX-512 Xeon guest), which an eager step's first call pays
  // too; timed apart, as the JIT's start-up above.
  const Tensor weight = kiln::ones({784, 256});
  t0 = Clock::now();
  sink(kiln::matmul(data.x, weight));
  const double libsMs = msSince(t0);
  auto mlp = std::make_shared<KilnMlp>();
  auto step = tracedStep(mlp);
  std::printf("CALL init %.3f\n", initMs);
  std::printf("CALL libs %.3f\n", libsMs);
  for (int call = 1; call <= 3; ++call) {
    std::fflush(stdout);
    t0 = Clock::now();
    sink(step(data.x, data.y));
    std::printf("CALL %d %.3f\n", call, msSince(t0));
  }
  std::fflush(stdout);
  return 0;
}

double medianOf(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// A profiling child (--child=mlp-step): only the traced MLP step, nothing else in the
// process, so `perf record`, KILN_PROFILE and KILN_PERF_MAP see the compiled step alone.
// Prints the median over `reps` blocks of calls of the wall time per step and of the
// process's CPU time per step: on a loaded machine, with --threads=1, the CPU time is the
// steadier measure of the step's own work.
int mlpStepChild(const Options& opt) {
  defaultToMlirBackend();
  setUpThreads(opt);
  MlpData data = MlpData::make();
  auto step = tracedStep(std::make_shared<KilnMlp>());
  auto cpuMs = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
  };
  for (int i = 0; i < 10; ++i) sink(step(data.x, data.y));  // compiles, warms up
  const int calls = std::max(1, int(opt.targetMs));          // --target_ms: calls per block
  std::vector<double> wall, cpu;
  for (int r = 0; r < opt.reps; ++r) {
    const auto t0 = Clock::now();
    const double c0 = cpuMs();
    for (int i = 0; i < calls; ++i) sink(step(data.x, data.y));
    cpu.push_back((cpuMs() - c0) / calls);
    wall.push_back(msSince(t0) / calls);
  }
  std::printf("traced MLP step: wall %.4f ms, cpu %.4f ms (medians of %d blocks of %d calls)\n",
              medianOf(wall), medianOf(cpu), opt.reps, calls);
  return 0;
}

struct ChildRun {
  double initMs = NAN;
  double libsMs = NAN;        // the process's first eager GEMM (oneDNN's and OpenMP's start-up)
  double firstCallMs = NAN;   // until the compiled (or loaded) step has run once
  int calls = 0;              // calls that took
  bool compiled = false, loaded = false;
  std::string log;            // the "kiln: compiled @mlp_step ..." line
  int64_t arenaBytes = -1;
};

ChildRun runChild(const std::string& cacheDir, int threads, const std::string& backend = "MLIR") {
  std::ostringstream cmd;
  cmd << "KILN_JIT_BACKEND=" << backend << " KILN_LOG=compile KILN_NUM_THREADS=" << threads
      << " KILN_CACHE_DIR=" << shellQuote(cacheDir) << " " << shellQuote(selfPath())
      << " --child=compile 2>&1";
  ChildRun r;
  std::optional<std::string> text = capture(cmd.str());
  if (!text) return r;
  double sum = 0;
  for (const std::string& line : splitLines(*text)) {
    if (line.find("compiled @mlp_step ") != std::string::npos ||
        line.find("loaded @mlp_step ") != std::string::npos) {
      r.compiled = r.compiled || line.find("compiled @mlp_step") != std::string::npos;
      r.loaded = r.loaded || line.find("loaded @mlp_step") != std::string::npos;
      r.log = line;
      size_t at = line.find("arena ");
      if (at != std::string::npos) r.arenaBytes = std::atoll(line.c_str() + at + 6);
    } else if (line.rfind("CALL init ", 0) == 0) {
      r.initMs = std::atof(line.c_str() + 10);
    } else if (line.rfind("CALL libs ", 0) == 0) {
      r.libsMs = std::atof(line.c_str() + 10);
    } else if (line.rfind("CALL ", 0) == 0 && std::isnan(r.firstCallMs)) {
      sum += std::atof(line.c_str() + 7);
      ++r.calls;
      if (r.compiled || r.loaded) r.firstCallMs = sum;  // the call that compiled has ended
    }
  }
  if (std::isnan(r.firstCallMs)) std::fprintf(stderr, "compile child said:\n%s\n", text->c_str());
  return r;
}

std::string freshDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "kiln-bench-cache-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return "";
  return pattern;
}

// ---- verdicts -------------------------------------------------------------------------------

std::string fmtUs(double ms) {
  char buf[32];
  if (std::isnan(ms)) return "-";
  std::snprintf(buf, sizeof buf, "%.2f us", ms * 1000);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parseOptions(argc, argv, "traced", {"--child"});
  for (const std::string& extra : opt.extra)
    if (extra == "--child=compile") return compileChild();
    else if (extra == "--child=mlp-step") return mlpStepChild(opt);

  defaultToMlirBackend();
  const int threads = setUpThreads(opt);
  std::printf("bench/traced: traced Kiln vs eager Kiln, LibTorch eager and torch.jit.trace, "
              "medians of %d repetitions (~%.0f ms each)\n", opt.reps, opt.targetMs);
  printMachine(threads);
  std::printf("load average at start: %s\n\n", loadAverage().c_str());

  // ---- workloads 1, 2, 4 ----
  std::vector<Row> rows = speedRows(opt);
  TriadTable triad;
  for (const Row& w : rows)
    if (w.bytes > 0 || w.mlp) triad.need(w.footprint);
  triad.measure(threads);
  for (Row& w : rows) {
    std::fprintf(stderr, "timing %s\n", w.name.c_str());
    Timed eager(w.eager), tracedT(w.traced), halideT(w.halide), torch(w.torch), bound(w.bound);
    timeAlternating({&eager, &tracedT, &halideT, &torch, &bound}, opt);
    w.eagerMs = eager.median();
    w.tracedMs = tracedT.median();
    w.halideMs = halideT.median();
    if (w.torch) w.torchMs = torch.median();
    if (w.bound) w.boundMs = bound.median();
    w.spread = spreadText(tracedT, torch);
  }
  triad.measure(threads);

  // Dispatch overhead on a tiny graph (workload 5), timed like the rows above.
  struct Dispatch {
    double tracedMs = NAN, eagerMs = NAN, torchMs = NAN;
  };
  std::optional<Dispatch> dispatch;
  if (wanted(opt, "dispatch")) {
    std::fprintf(stderr, "timing dispatch\n");
    auto a = std::make_shared<KT>(KT{kiln::ones({1}), kiln::ones({1})});
    KFn add = traced(KILN(return kiln::add(in[0], in[1]);), 2);
    add(*a);
    Timed t([a, add] { sink(add(*a)); }), e([a] { sink(kiln::add((*a)[0], (*a)[1])); }), p({});
#if KILN_HAVE_LIBTORCH
    auto ta = torch::ones({1}), tb = torch::ones({1});
    p.run = [ta, tb] {
      torch::Tensor y = ta + tb;
      void* volatile q = y.data_ptr();
      (void)q;
    };
#endif
    timeAlternating({&t, &e, &p}, opt);
    dispatch = Dispatch{t.median(), e.median(), p.run ? p.median() : NAN};
  }

  std::string jitSkipped;
  std::map<std::string, double> jit = runTorchJit(opt, threads, jitSkipped);
  for (Row& w : rows)
    if (auto it = jit.find(w.name); it != jit.end()) w.jitMs = it->second;
  std::optional<double> jitDispatch;
  if (auto it = jit.find("dispatch"); it != jit.end()) jitDispatch = it->second;

  // ---- compile latency, cold and warm (workload 5) ----
  std::vector<ChildRun> cold, warm, halideCold, halideWarm;
  // n cold children of `backend`, each in a fresh cache directory, then (withWarm) n warm
  // ones on the first of those directories.
  auto children = [&](const std::string& backend, int n, bool withWarm, std::vector<ChildRun>& c,
                      std::vector<ChildRun>& w) {
    const std::string label = backend == "MLIR" ? "" : backend + " ";
    std::vector<std::string> dirs;
    for (int i = 0; i < n; ++i) {
      std::fprintf(stderr, "compile latency: %scold child %d of %d\n", label.c_str(), i + 1, n);
      dirs.push_back(freshDirectory());
      c.push_back(runChild(dirs.back(), threads, backend));
    }
    for (int i = 0; withWarm && i < n; ++i) {
      std::fprintf(stderr, "compile latency: %swarm child %d of %d\n", label.c_str(), i + 1, n);
      w.push_back(runChild(dirs.front(), threads, backend));
    }
    for (const std::string& d : dirs) std::filesystem::remove_all(d);
  };
  const int childCount = std::max(1, std::min(opt.reps, 7));
  if (wanted(opt, "compile")) children("HALIDE", childCount, true, halideCold, halideWarm);
  if (wanted(opt, "compile") || wanted(opt, "peak memory"))
    children("MLIR", wanted(opt, "compile") ? childCount : 1, wanted(opt, "compile"), cold, warm);

  // ---- peak memory of one MLP step (workload 6) ----
  struct Peak {
    double eagerBytes = NAN, compiledBytes = NAN, arenaBytes = NAN;
    double eagerLive = NAN, compiledLive = NAN;
  };
  std::optional<Peak> peak;
  if (wanted(opt, "peak memory")) {
    std::fprintf(stderr, "measuring peak memory\n");
    MlpData data = MlpData::make();
    Peak p;
    // Bytes above what was alive before the step, at the step's peak.
    auto measure = [&](const std::function<void()>& step, double& above, double& live) {
      for (int i = 0; i < 3; ++i) step();  // steady state: gradients exist, compiled
      const size_t before = kiln::Storage::allocatedBytes();
      kiln::Storage::resetPeakAllocatedBytes();
      step();
      above = double(kiln::Storage::peakAllocatedBytes() - before);
      live = double(before);
    };
    auto eagerMlp = std::make_shared<KilnMlp>();
    measure([&] { eagerMlp->step(data.x, data.y); }, p.eagerBytes, p.eagerLive);
    auto compiledMlp = std::make_shared<KilnMlp>();
    auto step = tracedStep(compiledMlp);
    measure([&] { step(data.x, data.y); }, p.compiledBytes, p.compiledLive);
    for (const ChildRun& c : cold)
      if (c.arenaBytes >= 0) p.arenaBytes = double(c.arenaBytes);
    peak = p;
  }

  // ---- tables ----
  std::printf("triad bandwidth (best of before/after, %d threads):%s\n", threads,
              triad.summary().c_str());
  std::printf("torch.jit.trace: %s\n\n",
              jitSkipped.empty() ? "bench/torch_jit.py in python3, same shapes and threads, run after the in-process rows"
                                 : jitSkipped.c_str());

  std::printf("Speed (workloads 1, 2, 4). speedup = libtorch ms / traced ms; of bound = bound ms / traced ms "
              "(MLP step: traced ms / bound ms).\n%s\n"
              "Targets: memory-bound chains (4M-16M) >= 85%% of triad; 1M chains (compute-bound) >= 70%% of "
              "an arithmetic bound this runner does not compute (bound: n/a); elementwise >= 10x LibTorch; "
              "MLP step >= 2.5x LibTorch and <= 1.5x its bound (GEMM FLOPs at the sgemm %lld peak of the same "
              "run + elementwise bytes at triad; docs/BENCHMARKS.md); sgemm/conv >= 0.95x oneDNN.\n\n",
              peerLibraries().c_str(), static_cast<long long>(kSgemmPeakN));
  Table speed({"workload", "shapes", "eager kiln ms:", "traced kiln ms:", "libtorch ms:",
               "torch.jit ms:", "bound ms:", "bound", "eager/traced:", "speedup vs libtorch:",
               "of bound:", "target", "verdict", "IQR traced / libtorch:",
               "max abs traced-eager (of max abs)"});
  for (const Row& w : rows) {
    double bMs = w.boundMs;
    std::string boundKind = w.boundKind.empty() ? "-" : w.boundKind;
    if (w.bytes > 0) {
      bMs = triad.boundMs(w.bytes, w.footprint);
      boundKind = triad.label(w.footprint);
    }
    if (w.mlp) {
      const double peakGflops = 2.0 * std::pow(double(kSgemmPeakN), 3) / (w.boundMs * 1e6);
      bMs = w.mlp->boundMs(peakGflops, triad.gbps(w.footprint));
      char kind[160];
      std::snprintf(kind, sizeof kind, "%.0f MFLOP at %.0f GFLOP/s + %.1f MB at %.0f GB/s",
                    w.mlp->gemmFlops() / 1e6, peakGflops, w.mlp->elementwiseBytes() / 1e6,
                    triad.gbps(w.footprint));
      boundKind = kind;
    }
    const double speedup = w.torchMs / w.tracedMs, ofBound = bMs / w.tracedMs;
    std::string target, result, ofBoundText = fmtPercent(ofBound);
    switch (w.target) {
      case Target::Elementwise: {
        const double share = triadShareTarget(w.footprint);
        const bool bounded = !std::isnan(share);
        target = bounded ? ">= 10x, >= 85% of triad" : ">= 10x; bound: n/a";
        if (!bounded) ofBoundText += " (bound: n/a)";
        result = combineVerdicts(
            {verdict(speedup, speedup >= 10, fmtRatio(speedup) + " < 10x"),
             bounded ? verdict(ofBound, ofBound >= share, fmtPercent(ofBound) + " < 85%") : "-"});
        break;
      }
      case Target::Mlp: {
        const double ofStep = w.tracedMs / bMs;
        ofBoundText = fmtRatio(ofStep);
        target = ">= 2.5x, <= 1.5x of bound";
        result = combineVerdicts({verdict(speedup, speedup >= 2.5, fmtRatio(speedup) + " < 2.5x"),
                                  verdict(ofStep, ofStep <= 1.5, fmtRatio(ofStep) + " of bound > 1.5x")});
        break;
      }
      case Target::Library:
        target = ">= 0.95x of bound";
        ofBoundText = fmtRatio(ofBound);
        result = verdict(ofBound, ofBound >= 0.95, fmtRatio(ofBound) + " < 0.95x");
        break;
    }
    speed.row({w.name, w.shape, fmtMs(w.eagerMs), fmtMs(w.tracedMs),
               w.torch ? fmtMs(w.torchMs) : "LibTorch not installed: skipped",
               jitSkipped.empty() ? fmtMs(w.jitMs) : jitSkipped, fmtMs(bMs), boundKind,
               fmtRatio(w.eagerMs / w.tracedMs), fmtRatio(speedup), ofBoundText, target,
               result, w.spread, fmtDiff(w.diff, w.diffScale)});
  }
  speed.print();

  std::printf("\nBackends side by side (same run, repetitions rotating with the columns above): "
              "the traced column (MLIR) and the same trace under CompileOptions::backend = HALIDE "
              "(Halide's fused kernels, the rest shared). HALIDE / MLIR > 1: HALIDE is slower. "
              "Target: HALIDE within 1.5x of MLIR on the elementwise and row rows.\n%s\n\n",
              peerLibraries().c_str());
  Table backends({"workload", "MLIR ms:", "HALIDE ms:", "HALIDE / MLIR:", "target", "verdict",
                  "max abs HALIDE-eager (of max abs)"});
  for (const Row& w : rows) {
    const double ratio = w.halideMs / w.tracedMs;
    const bool targeted = w.target == Target::Elementwise;
    backends.row({w.name, fmtMs(w.tracedMs), fmtMs(w.halideMs), fmtRatio(ratio),
                  targeted ? "<= 1.5x" : "-",
                  targeted ? verdict(ratio, ratio <= 1.5, fmtRatio(ratio) + " > 1.5x") : "-",
                  fmtDiff(w.halideDiff, w.diffScale)});
  }
  backends.print();

  if (!cold.empty() || dispatch) {
    std::printf("\nCompile latency (workload 5). Cold: a new process with a fresh KILN_CACHE_DIR, "
                "a new trace object, its first call (symbolic trace + compile + one run), after "
                "the process's first traced call (a tiny add, which pays the JIT's one-time "
                "start-up) and its first eager GEMM (oneDNN's and OpenMP's start-up), each shown "
                "separately. Warm: the same in a new process on the first cold "
                "run's cache directory. Medians of %zu child processes.\n%s\n\n", cold.size(),
                peerLibraries().c_str());
    Table latency({"what", "median:", "target", "verdict", "detail"});
    auto firstCalls = [](const std::vector<ChildRun>& runs, bool wantLoaded) {
      std::vector<double> v;
      for (const ChildRun& r : runs)
        if ((wantLoaded ? r.loaded : r.compiled) && !std::isnan(r.firstCallMs)) v.push_back(r.firstCallMs);
      return v;
    };
    if (wanted(opt, "compile") && !cold.empty()) {
      std::vector<double> init;
      for (const ChildRun& r : cold) init.push_back(r.initMs);
      const std::vector<double> c = firstCalls(cold, false), wv = firstCalls(warm, true);
      const double coldMs = medianOf(c), warmMs = medianOf(wv);
      // The log line of the cold run closest to the median: its stage times.
      std::string coldLog = "-";
      double best = INFINITY;
      for (const ChildRun& r : cold)
        if (r.compiled && std::fabs(r.firstCallMs - coldMs) < best)
          best = std::fabs(r.firstCallMs - coldMs), coldLog = r.log;
      std::string warmLog = "-";
      for (const ChildRun& r : warm)
        if (r.loaded) warmLog = r.log;
      latency.row({"one-time JIT start-up: first traced call of a process (tiny add, cold)",
                   fmtMs(medianOf(init)) + " ms", "-", "-", "-"});
      std::vector<double> libs;
      for (const std::vector<ChildRun>* runs : {&cold, &warm})
        for (const ChildRun& r : *runs)
          if (!std::isnan(r.libsMs)) libs.push_back(r.libsMs);
      latency.row({"one-time library start-up: first eager GEMM of a process (oneDNN's sgemm kernels, "
                   "OpenMP's threads), cold and warm children",
                   fmtMs(medianOf(libs)) + " ms", "-", "-", "-"});
      latency.row({"MLP step, cold: trace + compile + first run", fmtMs(coldMs) + " ms", "<= 150 ms",
                   verdict(coldMs, coldMs <= 150, fmtMs(coldMs) + " ms > 150 ms"),
                   std::to_string(c.size()) + "/" + std::to_string(cold.size()) + " compiled; " + coldLog});
      latency.row({"MLP step, warm from the disk cache: first call", fmtMs(warmMs) + " ms", "<= 10 ms",
                   verdict(warmMs, warmMs <= 10, fmtMs(warmMs) + " ms > 10 ms"),
                   std::to_string(wv.size()) + "/" + std::to_string(warm.size()) + " loaded; " + warmLog});
      const std::vector<double> hc = firstCalls(halideCold, false), hw = firstCalls(halideWarm, true);
      std::string halideLog = "-";
      for (const ChildRun& r : halideCold)
        if (r.compiled) halideLog = r.log;
      latency.row({"MLP step under HALIDE, cold", fmtMs(medianOf(hc)) + " ms", "-", "-",
                   std::to_string(hc.size()) + "/" + std::to_string(halideCold.size()) +
                       " compiled; " + halideLog});
      latency.row({"MLP step under HALIDE, warm from the disk cache (Halide kernels loaded as objects)",
                   fmtMs(medianOf(hw)) + " ms", "-", "-",
                   std::to_string(hw.size()) + "/" + std::to_string(halideWarm.size()) + " loaded"});
    }
    if (dispatch) {
      latency.row({"dispatch: traced add of two [1] tensors, per call", fmtUs(dispatch->tracedMs),
                   "<= 1 us", verdict(dispatch->tracedMs, dispatch->tracedMs <= 0.001, fmtUs(dispatch->tracedMs) + " > 1 us"),
                   "in-process, alternating with the two rows below"});
      latency.row({"(reference) eager Kiln add of two [1] tensors", fmtUs(dispatch->eagerMs), "-", "-", "-"});
      latency.row({"(reference) LibTorch eager add of two [1] tensors", fmtUs(dispatch->torchMs), "-", "-",
                   std::isnan(dispatch->torchMs) ? "LibTorch not installed: skipped" : "-"});
      latency.row({"(reference) torch.jit.trace add of two [1] tensors, from Python",
                   jitDispatch ? fmtUs(*jitDispatch) : "-", "-", "-",
                   jitSkipped.empty() ? "includes the Python call" : jitSkipped});
    }
    latency.print();
  }

  if (peak) {
    std::printf("\nPeak memory of one MLP training step (workload 6): the most bytes of Kiln "
                "tensor storage alive during the step above what was alive before it "
                "(Storage::peakAllocatedBytes; parameters, gradients and inputs of earlier "
                "steps are the baseline), plus for the compiled step its arena "
                "(kiln.arena_bytes from the cold child's KILN_LOG=compile line). oneDNN "
                "scratchpads are not counted on either side.\n%s\n\n", peerLibraries().c_str());
    Table memory({"what", "eager:", "compiled:", "compiled/eager:", "target", "verdict"});
    const double compiledTotal = peak->compiledBytes + (std::isnan(peak->arenaBytes) ? 0 : peak->arenaBytes);
    const double ratio = compiledTotal / peak->eagerBytes;
    memory.row({"storage alive before the step (baseline)", fmtMiB(peak->eagerLive),
                fmtMiB(peak->compiledLive), "-", "-", "-"});
    memory.row({"peak storage above the baseline", fmtMiB(peak->eagerBytes), fmtMiB(peak->compiledBytes),
                "-", "-", "-"});
    memory.row({"compiled arena", "-", fmtMiB(peak->arenaBytes), "-", "-", "-"});
    memory.row({"**peak working memory of the step**", fmtMiB(peak->eagerBytes), fmtMiB(compiledTotal),
                fmtRatio(ratio), "<= 0.5x", verdict(ratio, ratio <= 0.5, fmtRatio(ratio) + " > 0.5x")});
    memory.row({"CNN training step (workload 3)", "bench/cnn_step", "-", "-", "-", "-"});
    memory.print();
  }

  std::printf("\nload average at end: %s\n", loadAverage().c_str());
  return 0;
}
