// bench/compare: Kiln eager vs LibTorch eager on the same workloads, in one process, back
// to back (docs/BENCHMARKS.md; protocol in shared/BENCHMARKS.md).
//
//   bazel run -c opt //bench:compare [-- --reps=9 --target_ms=25 --threads=N --filter='softmax|sum']
//
// For every workload both libraries get the same input values (one host buffer cloned
// into each), their outputs are compared (max |kiln - libtorch|), and then timing
// repetitions alternate Kiln and LibTorch (and the bound, where there is one), each
// repetition a batch of calls long enough to be timed reliably; the table reports medians.
// kiln/libtorch > 1 means Kiln is slower.
//
// Bounds, measured in the same run: memory-bound rows use bytes moved / the STREAM triad
// bandwidth at a similar footprint (best of a measurement before and one after the rows);
// matmul rows use oneDNN's dnnl_sgemm called directly; conv rows use a oneDNN convolution
// primitive with its preferred (blocked) layouts, input and weights reordered once outside
// the timing.
//
// Both libraries get the same thread count (--threads, else KILN_NUM_THREADS, else every
// core): KILN_NUM_THREADS for Kiln's pool, torch::set_num_threads for LibTorch, and
// omp_set_num_threads for oneDNN (Debian builds it on libgomp), which runs Kiln's
// matmul/conv and the bounds.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/ThreadPool.h"

#if KILN_HAVE_LIBTORCH
#include <torch/torch.h>
#endif

namespace {

// ---- options --------------------------------------------------------------------------------

struct Options {
  int reps = 9;             // timing repetitions per library (median reported)
  double targetMs = 25;     // length of one repetition's batch of calls
  int threads = 0;          // 0: KILN_NUM_THREADS if set, else every core
  std::string filter;       // substrings of the workload name, separated by |
};

Options parseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      std::string prefix = std::string(flag) + "=";
      if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
      return std::nullopt;
    };
    if (auto v = value("--reps")) o.reps = std::max(1, std::atoi(v->c_str()));
    else if (auto v = value("--target_ms")) o.targetMs = std::max(0.1, std::atof(v->c_str()));
    else if (auto v = value("--threads")) o.threads = std::max(1, std::atoi(v->c_str()));
    else if (auto v = value("--filter")) o.filter = *v;
    else {
      std::fprintf(stderr,
                   "usage: compare [--reps=9] [--target_ms=25] [--threads=N] [--filter=text|text...]\n");
      std::exit(arg == "--help" || arg == "-h" ? 0 : 2);
    }
  }
  return o;
}

// ---- timing ---------------------------------------------------------------------------------

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One contender: a callable timed in batches of `iters` calls.
struct Timed {
  explicit Timed(std::function<void()> f) : run(std::move(f)) {}

  std::function<void()> run;
  int iters = 1;
  std::vector<double> samples;  // ms per call, one per repetition

  void calibrate(double targetMs) {
    run();  // warm-up: first-touch pages, oneDNN primitive creation, thread start-up
    auto t0 = Clock::now();
    run();
    double once = std::max(msSince(t0), 1e-5);
    iters = int(std::clamp(targetMs / once, 1.0, 1e6));
  }
  void sample() {
    auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) run();
    samples.push_back(msSince(t0) / iters);
  }
  double quantile(double q) const {  // linear interpolation between order statistics
    std::vector<double> s = samples;
    std::sort(s.begin(), s.end());
    const double at = q * double(s.size() - 1);
    const size_t lo = size_t(at), hi = std::min(lo + 1, s.size() - 1);
    return s[lo] + (at - double(lo)) * (s[hi] - s[lo]);
  }
  double median() const { return quantile(0.5); }
  // Interquartile range over the median, in percent: how noisy this row was.
  double spreadPercent() const { return 100.0 * (quantile(0.75) - quantile(0.25)) / median(); }
};

// ---- inputs ---------------------------------------------------------------------------------

using Dims = std::vector<int64_t>;

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// Normal(0, 1) values, the same for both libraries.
std::vector<float> hostValues(const Dims& shape, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(size_t(count(shape)));
  for (float& x : v) x = normal(gen);
  return v;
}

kiln::Tensor kilnTensor(std::vector<float>& values, const Dims& shape) {
  return kiln::from_blob(values.data(), kiln::Shape(shape)).clone();
}

#if KILN_HAVE_LIBTORCH
std::vector<float> kilnValues(const kiln::Tensor& t) {
  kiln::Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

torch::Tensor torchTensor(std::vector<float>& values, const Dims& shape) {
  return torch::from_blob(values.data(), shape, torch::kFloat32).clone();
}

std::vector<float> torchValues(const torch::Tensor& t) {
  torch::Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}
#endif

// ---- bounds ---------------------------------------------------------------------------------

// STREAM triad a = b + s*c over `n` floats per array, OpenMP static schedule over the
// benchmark's thread count; best of several passes, in GB/s (3·n·4 bytes per pass, the
// STREAM convention: write-allocate traffic is not counted, here or in the rows).
double measureTriadGBps(int64_t n, int threads) {
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) a[i] = 0.0f, b[i] = 1.0f, c[i] = 2.0f;
  float* __restrict pa = a.get();
  const float* __restrict pb = b.get();
  const float* __restrict pc = c.get();
  const int passes = int(std::clamp<int64_t>((int64_t(1) << 28) / n, 10, 2000));
  double best = 1e30;
  for (int pass = 0; pass < passes; ++pass) {
    auto t0 = Clock::now();
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < n; ++i) pa[i] = pb[i] + 3.0f * pc[i];
    best = std::min(best, msSince(t0));
  }
  return double(3 * n * 4) / (best * 1e6);
}

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// C = A B with dnnl_sgemm (row-major), the FLOP bound of the matmul rows.
std::function<void()> sgemmBound(int64_t n) {
  auto a = std::make_shared<std::vector<float>>(hostValues({n, n}, 11));
  auto b = std::make_shared<std::vector<float>>(hostValues({n, n}, 12));
  auto c = std::make_shared<std::vector<float>>(size_t(n * n));
  return [=] {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a->data(), n, b->data(), n, 0.0f, c->data(), n);
  };
}

// The convolution alone with oneDNN's preferred layouts (format_tag::any), padding k/2.
std::function<void()> convBound(const Dims& xs, const Dims& ws, int64_t groups) {
  using namespace dnnl;
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  const int64_t pad = ws[2] / 2;
  memory::dims wdims = groups == 1 ? memory::dims(ws.begin(), ws.end())
                                   : memory::dims{groups, ws[0] / groups, ws[1], ws[2], ws[3]};
  memory::dims ydims{xs[0], ws[0], xs[2], xs[3]};
  convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                 memory::desc(memory::dims(xs.begin(), xs.end()), f32, tag::any),
                                 memory::desc(wdims, f32, tag::any), memory::desc(ydims, f32, tag::any),
                                 {1, 1}, {0, 0}, {pad, pad}, {pad, pad});
  auto pd = std::make_shared<convolution_forward::primitive_desc>(desc, engine());
  auto x = std::make_shared<memory>(pd->src_desc(), engine());
  auto w = std::make_shared<memory>(pd->weights_desc(), engine());
  auto y = std::make_shared<memory>(pd->dst_desc(), engine());
  // Fill the blocked buffers through reorders from plain random values.
  auto fill = [&](memory& dst, const memory::dims& dims, tag plain, uint32_t seed) {
    std::vector<float> values = hostValues(Dims(dims.begin(), dims.end()), seed);
    memory src(memory::desc(dims, f32, plain), engine(), values.data());
    stream s(engine());
    reorder(src, dst).execute(s, src, dst);
    s.wait();
  };
  fill(*x, memory::dims(xs.begin(), xs.end()), tag::nchw, 21);
  fill(*w, wdims, groups == 1 ? tag::oihw : tag::goihw, 22);
  auto prim = std::make_shared<convolution_forward>(*pd);
  return [=] {
    stream s(engine());
    prim->execute(s, {{DNNL_ARG_SRC, *x}, {DNNL_ARG_WEIGHTS, *w}, {DNNL_ARG_DST, *y}});
    s.wait();
  };
}

// Spins for `chunks` x `us` microseconds (a chunk of work that does not touch memory).
void busyWait(int64_t chunks, int us) {
  const auto until = Clock::now() + std::chrono::microseconds(chunks * us);
  while (Clock::now() < until) {
  }
}

// ---- workloads ------------------------------------------------------------------------------

struct Workload {
  std::string name;
  std::string shape;
  std::function<void()> kiln;
  std::function<void()> torch;  // empty without LibTorch
  std::function<void()> bound;  // timed bound (sgemm, conv), or empty
  int64_t bytes = 0;            // memory-bound rows: bytes moved (bound = bytes / triad)
  int64_t footprint = 0;        // floats per triad array for this row's bound
  double maxAbsDiff = NAN;      // kiln vs libtorch on the same inputs
  double maxAbsRef = NAN;       // max |libtorch| (scale of the diff)
  // Results: medians in ms, and the interquartile ranges as text.
  double kilnMs = NAN, torchMs = NAN, boundMs = NAN;
  std::string spread;
};

#if KILN_HAVE_LIBTORCH
double maxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = std::fabs(double(a[i]) - double(b[i]));
    if (!(d <= m)) m = d;  // NaN propagates
  }
  return m;
}

double maxAbs(const std::vector<float>& a) {
  double m = 0;
  for (float v : a) m = std::max(m, double(std::fabs(v)));
  return m;
}
#endif

std::string dimsText(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// Builds a workload from the same host inputs: kilnFn/torchFn map input tensors to one
// output tensor. Outputs are compared once, here.
template <class KilnFn, class TorchFn>
Workload make(std::string name, std::vector<Dims> shapes, KilnFn kilnFn, TorchFn torchFn) {
  Workload w;
  w.name = std::move(name);
  for (size_t i = 0; i < shapes.size(); ++i) w.shape += (i ? " " : "") + dimsText(shapes[i]);
  std::vector<std::vector<float>> host;
  for (size_t i = 0; i < shapes.size(); ++i) host.push_back(hostValues(shapes[i], uint32_t(i + 1)));
  auto k = std::make_shared<std::vector<kiln::Tensor>>();
  for (size_t i = 0; i < shapes.size(); ++i) k->push_back(kilnTensor(host[i], shapes[i]));
  w.kiln = [k, kilnFn] {
    kiln::Tensor y = kilnFn(*k);
    void* volatile sink = y.rawData();
    (void)sink;
  };
#if KILN_HAVE_LIBTORCH
  auto t = std::make_shared<std::vector<torch::Tensor>>();
  for (size_t i = 0; i < shapes.size(); ++i) t->push_back(torchTensor(host[i], shapes[i]));
  w.torch = [t, torchFn] {
    torch::Tensor y = torchFn(*t);
    void* volatile sink = y.data_ptr();
    (void)sink;
  };
  std::vector<float> ref = torchValues(torchFn(*t));
  w.maxAbsDiff = maxAbsDiff(kilnValues(kilnFn(*k)), ref);
  w.maxAbsRef = maxAbs(ref);
#else
  (void)torchFn;
#endif
  return w;
}

#if KILN_HAVE_LIBTORCH
using TT = std::vector<torch::Tensor>;
#define TORCH(body) [](const TT& in) -> torch::Tensor { body }
#else
#define TORCH(body) 0
#endif
using KT = std::vector<kiln::Tensor>;
#define KILN(body) [](const KT& in) -> kiln::Tensor { body }

// All workloads; `want(name)` filters before any input is built.
std::vector<Workload> workloads(int threads, const std::function<bool(const std::string&)>& want) {
  std::vector<Workload> all;
  auto add = [&](const std::function<Workload()>& build) { all.push_back(build()); };

  // bias + scale + GELU(tanh) + scale on [rows, 1024] with a [1024] bias. LibTorch's user
  // code calls its fused torch::gelu(x, "tanh"); Kiln's gelu(x, "tanh") is composed.
  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 24}) {
    std::string name = std::string("gelu chain ") + (n == (1 << 20) ? "1M" : "16M");
    if (!want(name)) continue;
    add([&] {
      Workload w = make(
          name, {{n / 1024, 1024}, {1024}},
          KILN(return kiln::mul(kiln::gelu(kiln::mul(kiln::add(in[0], in[1]), 0.5), "tanh"), 2.0);),
          TORCH(return torch::gelu((in[0] + in[1]) * 0.5, "tanh") * 2.0;));
      w.bytes = 2 * n * 4;
      w.footprint = n;
      return w;
    });
  }
  // The same chain with GELU composed of the same primitives in both (op-for-op).
  if (want("gelu chain 16M, composed in both")) add([&] {
    const int64_t n = int64_t(1) << 24;
    Workload w = make(
        "gelu chain 16M, composed in both", {{n / 1024, 1024}, {1024}},
        KILN(return kiln::mul(kiln::gelu(kiln::mul(kiln::add(in[0], in[1]), 0.5), "tanh"), 2.0);),
        TORCH({
          const double beta = std::sqrt(2.0 / M_PI);
          torch::Tensor x = (in[0] + in[1]) * 0.5;
          torch::Tensor inner = (x + x * x * x * 0.044715) * beta;
          return (x * 0.5) * (torch::tanh(inner) + 1.0) * 2.0;
        }));
    w.bytes = 2 * n * 4;
    w.footprint = n;
    return w;
  });

  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 24}) {
    const std::string size = n == (1 << 20) ? "1M" : "16M";
    if (want("add " + size)) add([&] {
      Workload w = make("add " + size, {{n}, {n}}, KILN(return kiln::add(in[0], in[1]);),
                        TORCH(return in[0] + in[1];));
      w.bytes = 3 * n * 4;
      w.footprint = n;
      return w;
    });
    if (want("mul " + size)) add([&] {
      Workload w = make("mul " + size, {{n}, {n}}, KILN(return kiln::mul(in[0], in[1]);),
                        TORCH(return in[0] * in[1];));
      w.bytes = 3 * n * 4;
      w.footprint = n;
      return w;
    });
    if (want("mul scalar " + size)) add([&] {
      Workload w = make("mul scalar " + size, {{n}}, KILN(return kiln::mul(in[0], 2.0);),
                        TORCH(return in[0] * 2.0;));
      w.bytes = 2 * n * 4;
      w.footprint = n;
      return w;
    });
    if (want("exp " + size)) add([&] {
      Workload w = make("exp " + size, {{n}}, KILN(return kiln::exp(in[0]);),
                        TORCH(return torch::exp(in[0]);));
      w.bytes = 2 * n * 4;
      w.footprint = n;
      return w;
    });
  }

  for (Dims s : {Dims{4096, 1024}, Dims{16384, 64}}) {
    const std::string name = "softmax rows " + dimsText(s);
    if (want(name)) add([&] {
      Workload w = make(name, {s}, KILN(return kiln::softmax(in[0], 1);),
                        TORCH(return torch::softmax(in[0], 1);));
      w.bytes = 2 * count(s) * 4;
      w.footprint = count(s);
      return w;
    });
  }
  if (want("layer_norm")) add([&] {
    Dims s{4096, 1024};
    Workload w = make("layer_norm", {s, {1024}, {1024}},
                      KILN(return kiln::layer_norm(in[0], {1024}, in[1], in[2]);),
                      TORCH(return torch::layer_norm(in[0], {1024}, in[1], in[2]);));
    w.bytes = 2 * count(s) * 4;
    w.footprint = count(s);
    return w;
  });
  if (want("sum dim=1 (each row)")) add([&] {
    Dims s{4096, 1024};
    Workload w = make("sum dim=1 (each row)", {s}, KILN(return kiln::sum(in[0], {1});),
                      TORCH(return in[0].sum(1);));
    w.bytes = count(s) * 4;
    w.footprint = count(s) / 3;
    return w;
  });
  if (want("sum dim=0 (each column)")) add([&] {
    Dims s{4096, 1024};
    Workload w = make("sum dim=0 (each column)", {s}, KILN(return kiln::sum(in[0], {0});),
                      TORCH(return in[0].sum(0);));
    w.bytes = count(s) * 4;
    w.footprint = count(s) / 3;
    return w;
  });

  for (int64_t n : {256, 1024}) {
    const std::string name = "matmul " + std::to_string(n);
    if (want(name)) add([&] {
      Workload w = make(name, {{n, n}, {n, n}}, KILN(return kiln::matmul(in[0], in[1]);),
                        TORCH(return torch::matmul(in[0], in[1]);));
      w.bound = sgemmBound(n);
      return w;
    });
  }

  struct Conv {
    const char* name;
    Dims x, w;
    int64_t groups;
  };
  for (const Conv& c : {Conv{"conv2d 3x3", {64, 32, 16, 16}, {32, 32, 3, 3}, 1},
                        Conv{"conv2d depthwise 3x3", {64, 96, 16, 16}, {96, 1, 3, 3}, 96},
                        Conv{"conv2d pointwise 1x1", {64, 96, 16, 16}, {32, 96, 1, 1}, 1}}) {
    if (!want(c.name)) continue;
    add([&] {
      const int64_t groups = c.groups, pad = c.w[2] / 2;
      Workload w = make(
          c.name, {c.x, c.w},
          [groups, pad](const KT& in) {
            return kiln::conv2d(in[0], in[1], kiln::Tensor(), {1}, {pad}, {1}, groups);
          },
#if KILN_HAVE_LIBTORCH
          [groups, pad](const TT& in) {
            return torch::conv2d(in[0], in[1], {}, 1, pad, 1, groups);
          }
#else
          0
#endif
      );
      w.bound = convBound(c.x, c.w, c.groups);
      return w;
    });
  }

  // The thread pools' fork-join cost: two chunks of 50 us of busy work each, one per
  // thread (kiln::parallelFor vs at::parallel_for on OpenMP). Ideal: 0.05 ms with two
  // threads; a worker that wakes late leaves its chunk to the caller (up to 0.1 ms).
  if (threads >= 2 && want("fork-join, 2 x 50us")) add([&] {
    Workload w;
    w.name = "fork-join, 2 x 50us";
    w.shape = "2 chunks";
    w.kiln = [] { kiln::parallelFor(0, 2, 1, [](int64_t b, int64_t e) { busyWait(e - b, 50); }); };
#if KILN_HAVE_LIBTORCH
    w.torch = [] { at::parallel_for(0, 2, 1, [](int64_t b, int64_t e) { busyWait(e - b, 50); }); };
#endif
    return w;
  });
  if (want("tiny add [4]")) add([&] {
    return make("tiny add [4]", {{4}, {4}}, KILN(return kiln::add(in[0], in[1]);),
                TORCH(return in[0] + in[1];));
  });
  if (want("tiny add scalar [4]")) add([&] {
    return make("tiny add scalar [4]", {{4}}, KILN(return kiln::add(in[0], 1.0);),
                TORCH(return in[0] + 1.0;));
  });
  return all;
}

std::string fmtMs(double ms) {
  char buf[32];
  if (std::isnan(ms)) return "-";
  if (ms >= 100) std::snprintf(buf, sizeof buf, "%.1f", ms);
  else if (ms >= 1) std::snprintf(buf, sizeof buf, "%.2f", ms);
  else std::snprintf(buf, sizeof buf, "%.3g", ms);
  return buf;
}

std::string fmtRatio(double r) {
  char buf[32];
  if (std::isnan(r)) return "-";
  std::snprintf(buf, sizeof buf, "%.2fx", r);
  return buf;
}

std::string fmtDiff(double d, double scale) {
  char buf[48];
  if (std::isnan(d)) return "-";
  std::snprintf(buf, sizeof buf, "%.1e (of %.3g)", d, scale);
  return buf;
}

// /proc/loadavg's first three fields: other work on the machine skews every timing here.
std::string loadAverage() {
  FILE* f = std::fopen("/proc/loadavg", "r");
  if (!f) return "unknown";
  double a = 0, b = 0, c = 0;
  int n = std::fscanf(f, "%lf %lf %lf", &a, &b, &c);
  std::fclose(f);
  if (n != 3) return "unknown";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %.2f %.2f", a, b, c);
  return buf;
}

std::string cpuModel() {
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  if (!f) return "unknown";
  char line[512];
  std::string model = "unknown";
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "model name", 10) == 0) {
      const char* colon = std::strchr(line, ':');
      if (colon) {
        model = colon + 2;
        if (!model.empty() && model.back() == '\n') model.pop_back();
      }
      break;
    }
  }
  std::fclose(f);
  return model;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parseOptions(argc, argv);

  // Same thread count for everyone, fixed before Kiln's pool starts.
  int threads = opt.threads;
  if (threads == 0) {
    const char* env = std::getenv("KILN_NUM_THREADS");
    threads = env && *env ? std::atoi(env) : int(std::max(1u, std::thread::hardware_concurrency()));
  }
  setenv("KILN_NUM_THREADS", std::to_string(threads).c_str(), 1);
  omp_set_num_threads(threads);  // oneDNN (OpenMP) under Kiln's matmul/conv, and the bounds
#if KILN_HAVE_LIBTORCH
  torch::set_num_threads(threads);
#endif

  std::printf("bench/compare: Kiln eager vs LibTorch eager, medians of %d repetitions "
              "(~%.0f ms each), one process\n", opt.reps, opt.targetMs);
  std::printf("cpu: %s; cores (hardware_concurrency): %u\n", cpuModel().c_str(),
              std::thread::hardware_concurrency());
  std::printf("threads: kiln %d (KILN_NUM_THREADS), oneDNN/OpenMP %d", kiln::get_num_threads(),
              omp_get_max_threads());
#if KILN_HAVE_LIBTORCH
  {
    std::string config = torch::show_config();
    auto field = [&](const char* key) {
      size_t at = config.find(key);
      if (at == std::string::npos) return std::string("?");
      at += std::strlen(key);
      return config.substr(at, config.find_first_of(",\n", at) - at);
    };
    std::printf(", libtorch %d (torch::set_num_threads)\n", torch::get_num_threads());
    std::printf("libtorch: %s, BLAS_INFO=%s, USE_MKLDNN=%s, CPU capability %s\n",
                field("TORCH_VERSION=").c_str(), field("BLAS_INFO=").c_str(),
                field("USE_MKLDNN=").c_str(), field("CPU capability usage: ").c_str());
  }
#else
  std::printf("\nLibTorch not installed: skipped (libtorch-dev absent when @libtorch was configured)\n");
#endif
  std::printf("load average at start: %s\n", loadAverage().c_str());
  std::printf("ratio kiln/libtorch > 1 means Kiln is slower; target <= 1.25x\n\n");

  // --filter=a|b: rows whose name contains a or b.
  auto want = [&](const std::string& name) {
    if (opt.filter.empty()) return true;
    for (size_t at = 0; at <= opt.filter.size();) {
      size_t bar = opt.filter.find('|', at);
      if (bar == std::string::npos) bar = opt.filter.size();
      if (bar > at && name.find(opt.filter.substr(at, bar - at)) != std::string::npos) return true;
      at = bar + 1;
    }
    return false;
  };
  std::vector<Workload> rows = workloads(threads, want);

  // The triad bandwidth of every footprint a row needs, measured before and after the
  // rows (best of both: a bound should not be lowered by a moment of load).
  std::map<int64_t, double> triad;
  auto measureTriads = [&] {
    for (const Workload& w : rows)
      if (w.bytes > 0 && !w.bound)
        triad[w.footprint] = std::max(triad[w.footprint], measureTriadGBps(w.footprint, threads));
  };
  measureTriads();

  for (Workload& w : rows) {
    std::fprintf(stderr, "timing %s\n", w.name.c_str());
    std::vector<Timed*> contenders;
    Timed kiln(w.kiln), torch(w.torch), bound(w.bound);
    contenders.push_back(&kiln);
    if (w.torch) contenders.push_back(&torch);
    if (w.bound) contenders.push_back(&bound);
    for (Timed* t : contenders) t->calibrate(opt.targetMs);
    for (int r = 0; r < opt.reps; ++r) {
      // Rotate the order so no contender always runs first (warm caches, turbo state).
      for (size_t i = 0; i < contenders.size(); ++i)
        contenders[(i + size_t(r)) % contenders.size()]->sample();
    }
    w.kilnMs = kiln.median();
    w.torchMs = w.torch ? torch.median() : NAN;
    w.boundMs = w.bound ? bound.median() : NAN;
    char spread[48];
    if (w.torch)
      std::snprintf(spread, sizeof spread, "%.0f%% / %.0f%%", kiln.spreadPercent(),
                    torch.spreadPercent());
    else
      std::snprintf(spread, sizeof spread, "%.0f%%", kiln.spreadPercent());
    w.spread = spread;
  }
  measureTriads();

  std::printf("triad bandwidth (best of before/after, %d threads):", threads);
  for (auto [n, gbps] : triad) std::printf(" %.1f GB/s at 3 x %.1f MB;", gbps, double(n) * 4 / 1e6);
  std::printf("\n\n");
  std::printf("| workload | shapes | kiln ms | libtorch ms | kiln/libtorch | bound ms | bound "
              "| kiln/bound | IQR kiln / libtorch | max abs diff (of max abs) |\n");
  std::printf("|---|---|---:|---:|---:|---:|---|---:|---:|---|\n");
  for (const Workload& w : rows) {
    double bMs = w.boundMs;
    std::string boundKind = "-";
    if (w.bound) {
      boundKind = w.name.rfind("matmul", 0) == 0 ? "oneDNN sgemm" : "oneDNN conv (blocked)";
    } else if (w.bytes > 0) {
      const double gbps = triad[w.footprint];
      bMs = double(w.bytes) / (gbps * 1e6);
      char buf[64];
      std::snprintf(buf, sizeof buf, "triad %.0f GB/s", gbps);
      boundKind = buf;
    }
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w.name.c_str(),
                w.shape.c_str(), fmtMs(w.kilnMs).c_str(),
                w.torch ? fmtMs(w.torchMs).c_str() : "LibTorch not installed: skipped",
                fmtRatio(w.kilnMs / w.torchMs).c_str(), fmtMs(bMs).c_str(), boundKind.c_str(),
                fmtRatio(w.kilnMs / bMs).c_str(), w.spread.c_str(),
                fmtDiff(w.maxAbsDiff, w.maxAbsRef).c_str());
  }
  std::printf("\nload average at end: %s\n", loadAverage().c_str());
  return 0;
}
