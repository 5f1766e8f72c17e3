// bench/compare: Kiln eager vs LibTorch eager on the same workloads, in one process, back
// to back (docs/BENCHMARKS.md, "How Kiln is measured").
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
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/Harness.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/ThreadPool.h"

#if KILN_HAVE_LIBTORCH
#include <torch/torch.h>
#endif

namespace {

using namespace kiln::bench;

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
    bool bias;  // nn.Conv2d's default: both libraries hand the bias to oneDNN as the epilogue
  };
  for (const Conv& c : {Conv{"conv2d 3x3", {64, 32, 16, 16}, {32, 32, 3, 3}, 1, false},
                        Conv{"conv2d depthwise 3x3", {64, 96, 16, 16}, {96, 1, 3, 3}, 96, false},
                        Conv{"conv2d pointwise 1x1", {64, 96, 16, 16}, {32, 96, 1, 1}, 1, false},
                        Conv{"conv2d 3x3 + bias", {64, 32, 16, 16}, {32, 32, 3, 3}, 1, true}}) {
    if (!want(c.name)) continue;
    add([&] {
      const int64_t groups = c.groups, pad = c.w[2] / 2;
      const bool bias = c.bias;
      std::vector<Dims> shapes{c.x, c.w};
      if (bias) shapes.push_back(Dims{c.w[0]});
      Workload w = make(
          c.name, shapes,
          [groups, pad, bias](const KT& in) {
            return kiln::conv2d(in[0], in[1], bias ? in[2] : kiln::Tensor(), {1}, {pad}, {1}, groups);
          },
#if KILN_HAVE_LIBTORCH
          [groups, pad, bias](const TT& in) {
            return torch::conv2d(in[0], in[1], bias ? in[2] : torch::Tensor(), 1, pad, 1, groups);
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

}  // namespace

int main(int argc, char** argv) {
  Options opt = parseOptions(argc, argv, "compare");
  const int threads = setUpThreads(opt);  // same thread count for everyone

  std::printf("bench/compare: Kiln eager vs LibTorch eager, medians of %d repetitions "
              "(~%.0f ms each), one process\n", opt.reps, opt.targetMs);
  printMachine(threads);
  std::printf("load average at start: %s\n", loadAverage().c_str());
  std::printf("ratio kiln/libtorch > 1 means Kiln is slower; target <= 1.25x\n\n");

  std::vector<Workload> rows =
      workloads(threads, [&](const std::string& name) { return wanted(opt, name); });

  TriadTable triad;
  for (const Workload& w : rows)
    if (w.bytes > 0 && !w.bound) triad.need(w.footprint);
  triad.measure(threads);

  for (Workload& w : rows) {
    std::fprintf(stderr, "timing %s\n", w.name.c_str());
    Timed kiln(w.kiln), torch(w.torch), bound(w.bound);
    timeAlternating({&kiln, &torch, &bound}, opt);
    w.kilnMs = kiln.median();
    w.torchMs = w.torch ? torch.median() : NAN;
    w.boundMs = w.bound ? bound.median() : NAN;
    w.spread = spreadText(kiln, torch);
  }
  triad.measure(threads);

  std::printf("triad bandwidth (best of before/after, %d threads):%s\n\n", threads,
              triad.summary().c_str());
  Table table({"workload", "shapes", "kiln ms:", "libtorch ms:", "kiln/libtorch:", "bound ms:",
               "bound", "kiln/bound:", "IQR kiln / libtorch:", "max abs diff (of max abs)"});
  for (const Workload& w : rows) {
    double bMs = w.boundMs;
    std::string boundKind = "-";
    if (w.bound) {
      boundKind = w.name.rfind("matmul", 0) == 0 ? "oneDNN sgemm" : "oneDNN conv (blocked)";
    } else if (w.bytes > 0) {
      bMs = triad.boundMs(w.bytes, w.footprint);
      boundKind = triad.label(w.footprint);
    }
    table.row({w.name, w.shape, fmtMs(w.kilnMs),
               w.torch ? fmtMs(w.torchMs) : "LibTorch not installed: skipped",
               fmtRatio(w.kilnMs / w.torchMs), fmtMs(bMs), boundKind, fmtRatio(w.kilnMs / bMs),
               w.spread, fmtDiff(w.maxAbsDiff, w.maxAbsRef)});
  }
  table.print();
  std::printf("\nload average at end: %s\n", loadAverage().c_str());
  return 0;
}
