// Harness: what the comparison runners (bench/compare, bench/traced) share: options, thread
// setup, alternating timed repetitions with medians, inputs, bounds and table printing.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/Tensor.h"

#if KILN_HAVE_LIBTORCH
#include <torch/torch.h>
#endif

namespace kiln::bench {

// ---- options --------------------------------------------------------------------------------

struct Options {
  int reps = 9;             // timing repetitions per contender (median reported)
  double targetMs = 25;     // length of one repetition's batch of calls
  int threads = 0;          // 0: KILN_NUM_THREADS if set, else every core
  std::string filter;       // substrings of the workload name, separated by |
  std::vector<std::string> extra;  // --name=value flags the runner handles itself
};

// Parses --reps --target_ms --threads --filter; flags named in `extraFlags` (without the
// "=value") are kept in Options::extra; anything else prints the usage of `program`.
Options parseOptions(int argc, char** argv, const char* program,
                     const std::vector<std::string>& extraFlags = {});

// --filter=a|b: whether `name` contains a or b (everything passes an empty filter).
bool wanted(const Options& options, const std::string& name);

// The thread count for everyone (--threads, else KILN_NUM_THREADS, else every core), fixed
// before Kiln's pool starts: KILN_NUM_THREADS for Kiln, omp_set_num_threads for oneDNN
// (Debian builds it on libgomp) and the bounds, torch::set_num_threads for LibTorch.
int setUpThreads(const Options& options);

// Prints the CPU, the thread counts and LibTorch's build (or that it is not installed).
void printMachine(int threads);

// One line naming the peer's libraries as this process mapped them, for every table's
// header: "peer: LibTorch 1.13.0 on BLAS /usr/lib/.../libopenblasp-r0.3.21.so; oneDNN
// 2.6.3 (/usr/lib/.../libdnnl.so.2.6)".
std::string peerLibraries();

// ---- timing ---------------------------------------------------------------------------------

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t0);

// One contender: a callable timed in batches of `iters` calls.
struct Timed {
  explicit Timed(std::function<void()> f) : run(std::move(f)) {}

  std::function<void()> run;
  int iters = 1;
  std::vector<double> samples;  // ms per call, one per repetition

  void calibrate(double targetMs);  // a warm-up call, then iters for ~targetMs
  void sample();
  double quantile(double q) const;  // linear interpolation between order statistics
  double median() const { return quantile(0.5); }
  // Interquartile range over the median, in percent: how noisy this row was.
  double spreadPercent() const;
};

// Calibrates each contender, then runs `reps` rounds of one sample each, rotating the order
// so no contender always runs first (warm caches, turbo state). Empty functions are skipped.
void timeAlternating(const std::vector<Timed*>& contenders, const Options& options);

// "12% / 3%": the IQR of `ours` and, when it ran, of `peer` ("12%" alone otherwise).
std::string spreadText(const Timed& ours, const Timed& peer);

// ---- inputs ---------------------------------------------------------------------------------

using Dims = std::vector<int64_t>;

int64_t count(const Dims& d);
std::string dimsText(const Dims& d);

// Normal(0, 1) values, the same for every library.
std::vector<float> hostValues(const Dims& shape, uint32_t seed);

kiln::Tensor kilnTensor(std::vector<float>& values, const Dims& shape);
// Reads `t`'s data pointer through a volatile, so a timed call's result is not optimized away.
void sink(const kiln::Tensor& t);
std::vector<float> kilnValues(const kiln::Tensor& t);

#if KILN_HAVE_LIBTORCH
torch::Tensor torchTensor(std::vector<float>& values, const Dims& shape);
std::vector<float> torchValues(const torch::Tensor& t);
#endif

double maxAbsDiff(const std::vector<float>& a, const std::vector<float>& b);  // NaN propagates
double maxAbs(const std::vector<float>& a);

// ---- bounds ---------------------------------------------------------------------------------

// STREAM triad a = b + s*c over `n` floats per array, OpenMP static schedule over `threads`;
// best of several passes, in GB/s (3·n·4 bytes per pass, the STREAM convention:
// write-allocate traffic is not counted, here or in the rows).
double measureTriadGBps(int64_t n, int threads);

// The triad bandwidth at each footprint the rows need, measured before and after the rows
// (best of both: a bound should not be lowered by a moment of load).
class TriadTable {
 public:
  void need(int64_t footprint) { gbps_.emplace(footprint, 0.0); }
  void measure(int threads);  // every footprint needed, keeping the best so far
  double gbps(int64_t footprint) const { return gbps_.at(footprint); }
  // A row's bound: `bytes` moved at the bandwidth of its footprint, and "triad 59 GB/s".
  double boundMs(int64_t bytes, int64_t footprint) const;
  std::string label(int64_t footprint) const;
  // "58.8 GB/s at 3 x 4.2 MB; ..." for the footprints measured.
  std::string summary() const;

 private:
  std::map<int64_t, double> gbps_;
};

// C = A B with dnnl_sgemm (row-major), the FLOP bound of the matmul rows.
std::function<void()> sgemmBound(int64_t n);

// The convolution alone with oneDNN's preferred layouts (format_tag::any), padding k/2,
// input and weights reordered once outside the timing.
std::function<void()> convBound(const Dims& xs, const Dims& ws, int64_t groups, int64_t stride = 1);

// oneDNN's weight gradient of the same convolution (convolution_backward_weights, direct),
// source and output gradient already on its preferred layouts (reordered once, untimed):
// the bound of a layer's weight gradient.
std::function<void()> convWeightGradBound(const Dims& x, const Dims& w, int64_t groups, int64_t stride);

// ---- targets (docs/BENCHMARKS.md, "Where Kiln must stand") -----------------------------------

// The share of triad bandwidth a memory-bound chain over `elements` floats must reach:
// 0.85 at 4M elements and more. Below (the 1M rows) the chains are compute-bound and the
// target is 70% of an arithmetic bound (llvm-mca's) that the runners do not compute: NaN,
// which the tables print as "bound: n/a".
double triadShareTarget(int64_t elements);

// An MLP of `layers` widths (784, 256, 256, 10) trained with SGD on batches of `batch`:
// what one training step's GEMMs must compute and its elementwise work must move.
struct MlpGeometry {
  std::vector<int64_t> layers;
  int64_t batch = 0;

  int64_t parameters() const;  // weights and biases
  // 2·batch·in·out per product: every layer's forward product and weight gradient, and
  // the input gradient of every layer but the first (the input needs none).
  double gemmFlops() const;
  // The elementwise traffic no schedule avoids: the SGD update reads each parameter and
  // its gradient and writes the parameter (12 bytes per parameter), and each hidden
  // layer's relu backward reads the output gradient and the activation and writes the
  // input gradient (12 bytes per activation; the bias gradient's column sums read the same
  // values once more in cache). Forward bias and relu ride on the GEMMs' epilogues.
  double elementwiseBytes() const;
  // The step's bound: gemmFlops at `gflops` (oneDNN sgemm's measured peak) plus
  // elementwiseBytes at `gbps` (the measured triad bandwidth), in ms.
  double boundMs(double gflops, double gbps) const;
};

// "ok" when every verdict is "ok" or "-" and one was "ok"; "-" when all are "-"; else the
// misses, joined by "; ".
std::string combineVerdicts(const std::vector<std::string>& verdicts);

// ---- child processes ------------------------------------------------------------------------

// `s` in single quotes for /bin/sh.
std::string shellQuote(const std::string& s);
// Runs `command` with popen and returns its stdout (nullopt if it could not start).
std::optional<std::string> capture(const std::string& command);
// `text` as lines, without their newlines.
std::vector<std::string> splitLines(const std::string& text);
// This executable's path (/proc/self/exe), to run it again as a child.
std::string selfPath();
// Sets KILN_JIT_BACKEND=MLIR when unset, so traced programs are compiled; says so, or says
// that another backend was asked for.
void defaultToMlirBackend();

// ---- printing -------------------------------------------------------------------------------

std::string fmtMs(double ms);                   // "-" for NaN
std::string fmtRatio(double r);                 // "1.23x", "-" for NaN
std::string fmtDiff(double d, double scale);    // "1.0e-06 (of 4.2)"
// "ok", or "**MISS <measured>**" where the target does not hold; "-" without a measurement.
std::string verdict(double value, bool good, const std::string& measured);
std::string fmtPercent(double r);               // 0.42 -> "42%", "-" for NaN
std::string fmtMiB(double bytes);               // "1.50 MiB", "-" for NaN
std::string loadAverage();                      // /proc/loadavg's first three fields
std::string cpuModel();                         // /proc/cpuinfo's model name

// A Markdown table printed to stdout: columns "name" (left) or "name:" (right-aligned).
class Table {
 public:
  explicit Table(std::vector<std::string> columns);
  void row(std::vector<std::string> cells);
  void print() const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace kiln::bench
