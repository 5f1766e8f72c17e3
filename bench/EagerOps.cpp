// Google Benchmark suite for Kiln's eager ops (docs/BENCHMARKS.md): the workloads of
// bench/Compare.cpp, Kiln only, with Google Benchmark's repetitions and medians.
//
//   bazel run -c opt //bench:eager_ops -- --benchmark_filter=Softmax
//
// Threads: Kiln's pool reads KILN_NUM_THREADS (default: every core). Timings are wall
// time (UseRealTime): the work runs on the pool, not only on the calling thread.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "kiln/core/ThreadPool.h"

namespace {

constexpr int kRepetitions = 5;
constexpr int64_t kCols = 1024;  // rows of 1024 floats for the elementwise/row workloads

kiln::Tensor input(kiln::Shape shape) {
  kiln::manual_seed(0);
  return kiln::randn(std::move(shape));
}

// Keeps the result alive until the compiler cannot drop the op.
void keep(const kiln::Tensor& t) {
  void* p = t.rawData();
  benchmark::DoNotOptimize(p);
}

void setBytes(benchmark::State& state, int64_t bytesPerIteration) {
  state.SetBytesProcessed(state.iterations() * bytesPerIteration);
}

// ---- elementwise ------------------------------------------------------------------------

// bias + scale + GELU(tanh) + scale over [rows, 1024] with a broadcast [1024] bias.
void BM_GeluChain(benchmark::State& state) {
  const int64_t n = state.range(0);
  kiln::Tensor x = input({n / kCols, kCols}), bias = input({kCols});
  for (auto _ : state) keep(kiln::mul(kiln::gelu(kiln::mul(kiln::add(x, bias), 0.5), "tanh"), 2.0));
  setBytes(state, 2 * n * 4);
}

void BM_Add(benchmark::State& state) {
  const int64_t n = state.range(0);
  kiln::Tensor a = input({n}), b = input({n});
  for (auto _ : state) keep(kiln::add(a, b));
  setBytes(state, 3 * n * 4);
}

void BM_Mul(benchmark::State& state) {
  const int64_t n = state.range(0);
  kiln::Tensor a = input({n}), b = input({n});
  for (auto _ : state) keep(kiln::mul(a, b));
  setBytes(state, 3 * n * 4);
}

// A tensor times a Python-style scalar: a 0-d operand broadcast by a stride-0 view.
void BM_MulScalar(benchmark::State& state) {
  const int64_t n = state.range(0);
  kiln::Tensor a = input({n});
  for (auto _ : state) keep(kiln::mul(a, 2.0));
  setBytes(state, 2 * n * 4);
}

void BM_Exp(benchmark::State& state) {
  const int64_t n = state.range(0);
  kiln::Tensor a = input({n});
  for (auto _ : state) keep(kiln::exp(a));
  setBytes(state, 2 * n * 4);
}

// ---- rows: softmax, layer_norm, sums ------------------------------------------------------

void BM_Softmax(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  kiln::Tensor x = input({rows, cols});
  for (auto _ : state) keep(kiln::softmax(x, 1));
  setBytes(state, 2 * rows * cols * 4);
}

void BM_LayerNorm(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  kiln::Tensor x = input({rows, cols}), w = input({cols}), b = input({cols});
  for (auto _ : state) keep(kiln::layer_norm(x, {cols}, w, b));
  setBytes(state, 2 * rows * cols * 4);
}

// range(2): the reduced dim (1: each row, 0: each column).
void BM_Sum(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1), dim = state.range(2);
  kiln::Tensor x = input({rows, cols});
  for (auto _ : state) keep(kiln::sum(x, {dim}));
  setBytes(state, rows * cols * 4);
}

// ---- matmul and conv2d (oneDNN) -----------------------------------------------------------

void BM_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  kiln::Tensor a = input({n, n}), b = input({n, n});
  for (auto _ : state) keep(kiln::matmul(a, b));
  state.counters["GFLOP/s"] = benchmark::Counter(double(2 * n * n * n) * double(state.iterations()),
                                                 benchmark::Counter::kIsRate);
}

// mobilenet_v2-sized 3x3 convolutions at batch 64, padding 1: args N, C, H, W, O, groups.
void BM_Conv2d(benchmark::State& state) {
  const int64_t n = state.range(0), c = state.range(1), h = state.range(2), w = state.range(3),
                o = state.range(4), groups = state.range(5), k = state.range(6);
  kiln::Tensor x = input({n, c, h, w}), weight = input({o, c / groups, k, k});
  for (auto _ : state)
    keep(kiln::conv2d(x, weight, kiln::Tensor(), {1}, {k / 2}, {1}, groups));
  const double flops = 2.0 * double(n * o * h * w) * double(c / groups * k * k);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * double(state.iterations()), benchmark::Counter::kIsRate);
}

// A batch-major activation made channel-major, as a convolution's weight gradient reads it
// (x.transpose(0, 1) copied): [64, C, side, side], contiguous runs of side*side floats.
void BM_TransposeCopy(benchmark::State& state) {
  const int64_t c = state.range(0), side = state.range(1);
  kiln::Tensor x = input({64, c, side, side});
  for (auto _ : state) keep(x.transpose(0, 1).contiguous());
  state.counters["GB/s"] = benchmark::Counter(double(2 * 4 * x.numel()) * double(state.iterations()),
                                              benchmark::Counter::kIsRate);
}

// A weight's transpose, as an input gradient's transposed weights: single elements, the
// source read down its columns.
void BM_TransposeCopy2d(benchmark::State& state) {
  kiln::Tensor x = input({state.range(0), state.range(1)});
  for (auto _ : state) keep(x.transpose(0, 1).contiguous());
  state.counters["GB/s"] = benchmark::Counter(double(2 * 4 * x.numel()) * double(state.iterations()),
                                              benchmark::Counter::kIsRate);
}

// ---- dispatch overhead ----------------------------------------------------------------------

// Two [4] tensors: nothing but the dispatcher, shape rule, allocation and a 4-wide loop.
void BM_TinyAdd(benchmark::State& state) {
  kiln::Tensor a = input({4}), b = input({4});
  for (auto _ : state) keep(kiln::add(a, b));
}

// Same with a scalar operand (one more dispatch for the 0-d constant and an expand).
void BM_TinyAddScalar(benchmark::State& state) {
  kiln::Tensor a = input({4});
  for (auto _ : state) keep(kiln::add(a, 1.0));
}

// The pool's fork-join cost: one chunk per thread of range(0) microseconds of busy work
// that touches no memory. Ideal: range(0) us per call; a worker that wakes late leaves its
// chunk to the caller (up to threads x range(0) us). range(0) = 0: the bare overhead.
void BM_ParallelForBusy(benchmark::State& state) {
  const int64_t chunks = kiln::get_num_threads(), us = state.range(0);
  for (auto _ : state)
    kiln::parallelFor(0, chunks, 1, [us](int64_t b, int64_t e) {
      const auto until =
          std::chrono::steady_clock::now() + std::chrono::microseconds((e - b) * us);
      while (std::chrono::steady_clock::now() < until) {
      }
    });
}

#define KILN_BENCH(fn) \
  BENCHMARK(fn)->Repetitions(kRepetitions)->ReportAggregatesOnly(true)->UseRealTime()

KILN_BENCH(BM_GeluChain)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_Add)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_Mul)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_MulScalar)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_Exp)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_Softmax)->Args({4096, 1024})->Args({16384, 64})->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_LayerNorm)->Args({4096, 1024})->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_Sum)->Args({4096, 1024, 1})->Args({4096, 1024, 0})->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_Matmul)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_Conv2d)
    ->ArgNames({"N", "C", "H", "W", "O", "groups", "k"})
    ->Args({64, 32, 16, 16, 32, 1, 3})   // 3x3
    ->Args({64, 96, 16, 16, 96, 96, 3})  // depthwise 3x3
    ->Args({64, 96, 16, 16, 32, 1, 1})   // pointwise 1x1 (projection)
    ->Unit(benchmark::kMillisecond);
KILN_BENCH(BM_TransposeCopy)
    ->ArgNames({"C", "side"})
    ->Args({576, 2})
    ->Args({192, 4})
    ->Args({144, 8})
    ->Args({96, 16})
    ->Unit(benchmark::kMicrosecond);
KILN_BENCH(BM_TransposeCopy2d)->ArgNames({"rows", "cols"})->Args({1280, 320})->Args({160, 960})->Unit(benchmark::kMicrosecond);
KILN_BENCH(BM_ParallelForBusy)->Arg(0)->Arg(10)->Arg(50)->Arg(200)->Unit(benchmark::kMicrosecond);
KILN_BENCH(BM_TinyAdd)->Unit(benchmark::kMicrosecond);
KILN_BENCH(BM_TinyAddScalar)->Unit(benchmark::kMicrosecond);

}  // namespace
