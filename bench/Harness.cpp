// Harness (see Harness.h): the parts bench/compare and bench/traced share.
#include "bench/Harness.h"

#include <omp.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

#include "kiln/core/Ops.h"
#include "kiln/core/ThreadPool.h"

namespace kiln::bench {

// ---- options --------------------------------------------------------------------------------

Options parseOptions(int argc, char** argv, const char* program,
                     const std::vector<std::string>& extraFlags) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const std::string& flag) -> std::optional<std::string> {
      std::string prefix = flag + "=";
      if (arg.rfind(prefix, 0) == 0) return arg.substr(prefix.size());
      return std::nullopt;
    };
    bool extra = false;
    for (const std::string& flag : extraFlags) extra = extra || value(flag).has_value();
    if (auto v = value("--reps")) o.reps = std::max(1, std::atoi(v->c_str()));
    else if (auto v = value("--target_ms")) o.targetMs = std::max(0.1, std::atof(v->c_str()));
    else if (auto v = value("--threads")) o.threads = std::max(1, std::atoi(v->c_str()));
    else if (auto v = value("--filter")) o.filter = *v;
    else if (extra) o.extra.push_back(arg);
    else {
      std::fprintf(stderr,
                   "usage: %s [--reps=9] [--target_ms=25] [--threads=N] [--filter=text|text...]\n",
                   program);
      std::exit(arg == "--help" || arg == "-h" ? 0 : 2);
    }
  }
  return o;
}

bool wanted(const Options& options, const std::string& name) {
  const std::string& filter = options.filter;
  if (filter.empty()) return true;
  for (size_t at = 0; at <= filter.size();) {
    size_t bar = filter.find('|', at);
    if (bar == std::string::npos) bar = filter.size();
    if (bar > at && name.find(filter.substr(at, bar - at)) != std::string::npos) return true;
    at = bar + 1;
  }
  return false;
}

int setUpThreads(const Options& options) {
  int threads = options.threads;
  if (threads == 0) {
    const char* env = std::getenv("KILN_NUM_THREADS");
    threads = env && *env ? std::atoi(env) : int(std::max(1u, std::thread::hardware_concurrency()));
  }
  setenv("KILN_NUM_THREADS", std::to_string(threads).c_str(), 1);
  omp_set_num_threads(threads);  // oneDNN (OpenMP) under Kiln's matmul/conv, and the bounds
#if KILN_HAVE_LIBTORCH
  torch::set_num_threads(threads);
#endif
  return threads;
}

// The BLAS and oneDNN libraries this process actually mapped, read from /proc/self/maps:
// LibTorch's BLAS_INFO is what it was built against ("generic" on Debian), not what
// libblas.so.3 resolves to on this machine (reference BLAS or OpenBLAS, by alternatives).
static std::string mappedLibraries(const char* needle) {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> found;
  for (std::string line; std::getline(maps, line);) {
    size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    std::string base = path.substr(path.rfind('/') + 1);
    if (base.find(needle) == std::string::npos) continue;
    char resolved[4096];
    found.insert(realpath(path.c_str(), resolved) ? resolved : path);
  }
  std::string out;
  for (const std::string& path : found) out += (out.empty() ? "" : ", ") + path;
  return out.empty() ? "none mapped" : out;
}

std::string peerLibraries() {
  const dnnl_version_t* dnnl = dnnl_version();
  std::string onednn = "oneDNN " + std::to_string(dnnl->major) + "." + std::to_string(dnnl->minor) + "." +
                       std::to_string(dnnl->patch) + " (" + mappedLibraries("libdnnl") + ")";
#if KILN_HAVE_LIBTORCH
  return "peer: LibTorch " + std::string(TORCH_VERSION) + " on BLAS " + mappedLibraries("blas") + "; " + onednn;
#else
  return "peer: LibTorch not installed (skipped); " + onednn;
#endif
}

// Microseconds per first touch of a 4 KiB page of a fresh anonymous mapping (median of five
// 16 MiB mappings; NaN if mmap fails). Every fresh allocation the libraries make pays it:
// about 0.1-0.3 us on bare metal, but a VM guest can pay an exit to its host per fault:
// 13-17 us on the guest of docs/BENCHMARKS.md's 2026-11-27 20:51 runs (as much for memory
// just freed and mapped again), and a library that maps fresh memory per op (LibTorch's
// CPU allocator) slows by far more there than one that reuses it.
static double pageFaultMicros() {
  constexpr size_t kBytes = size_t(16) << 20, kPage = 4096;
  std::vector<double> us;
  for (int r = 0; r < 5; ++r) {
    void* m = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NAN;
    madvise(m, kBytes, MADV_NOHUGEPAGE);  // 4 KiB faults, whatever the THP setting
    volatile char* p = static_cast<char*>(m);
    const auto t0 = Clock::now();
    for (size_t i = 0; i < kBytes; i += kPage) p[i] = 1;
    us.push_back(msSince(t0) * 1e3 / double(kBytes / kPage));
    munmap(m, kBytes);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

void printMachine(int threads) {
  std::printf("cpu: %s; cores (hardware_concurrency): %u\n", cpuModel().c_str(),
              std::thread::hardware_concurrency());
  const dnnl_version_t* dnnl = dnnl_version();
  std::printf("oneDNN %d.%d.%d (mapped: %s)\n", dnnl->major, dnnl->minor, dnnl->patch,
              mappedLibraries("libdnnl").c_str());
  std::printf("page faults: %.2f us per first touch of a 4 KiB page (fresh 16 MiB mapping)\n",
              pageFaultMicros());
  std::printf("threads: kiln %d (KILN_NUM_THREADS), oneDNN/OpenMP %d", kiln::get_num_threads(),
              omp_get_max_threads());
  (void)threads;
#if KILN_HAVE_LIBTORCH
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
  std::printf("peer BLAS (mapped): %s\n", mappedLibraries("blas").c_str());
#else
  std::printf("\nLibTorch not installed: skipped (libtorch-dev absent when @libtorch was configured)\n");
#endif
}

// ---- timing ---------------------------------------------------------------------------------

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void Timed::calibrate(double targetMs) {
  run();  // warm-up: first-touch pages, oneDNN primitive creation, thread start-up
  auto t0 = Clock::now();
  run();
  double once = std::max(msSince(t0), 1e-5);
  iters = int(std::clamp(targetMs / once, 1.0, 1e6));
}

void Timed::sample() {
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) run();
  samples.push_back(msSince(t0) / iters);
}

double Timed::quantile(double q) const {
  std::vector<double> s = samples;
  std::sort(s.begin(), s.end());
  const double at = q * double(s.size() - 1);
  const size_t lo = size_t(at), hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (at - double(lo)) * (s[hi] - s[lo]);
}

double Timed::spreadPercent() const {
  return 100.0 * (quantile(0.75) - quantile(0.25)) / median();
}

void timeAlternating(const std::vector<Timed*>& all, const Options& options) {
  std::vector<Timed*> contenders;
  for (Timed* t : all)
    if (t->run) contenders.push_back(t);
  for (Timed* t : contenders) t->calibrate(options.targetMs);
  for (int r = 0; r < options.reps; ++r) {
    for (size_t i = 0; i < contenders.size(); ++i)
      contenders[(i + size_t(r)) % contenders.size()]->sample();
  }
}

std::string spreadText(const Timed& ours, const Timed& peer) {
  char buf[48];
  if (peer.run && !peer.samples.empty())
    std::snprintf(buf, sizeof buf, "%.0f%% / %.0f%%", ours.spreadPercent(), peer.spreadPercent());
  else
    std::snprintf(buf, sizeof buf, "%.0f%%", ours.spreadPercent());
  return buf;
}

// ---- inputs ---------------------------------------------------------------------------------

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

std::string dimsText(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

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

void sink(const kiln::Tensor& t) {
  void* volatile p = t.rawData();
  (void)p;
}

std::vector<float> kilnValues(const kiln::Tensor& t) {
  kiln::Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

#if KILN_HAVE_LIBTORCH
torch::Tensor torchTensor(std::vector<float>& values, const Dims& shape) {
  return torch::from_blob(values.data(), shape, torch::kFloat32).clone();
}

std::vector<float> torchValues(const torch::Tensor& t) {
  torch::Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}
#endif

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

// ---- bounds ---------------------------------------------------------------------------------

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

void TriadTable::measure(int threads) {
  for (auto& [n, gbps] : gbps_) gbps = std::max(gbps, measureTriadGBps(n, threads));
}

double TriadTable::boundMs(int64_t bytes, int64_t footprint) const {
  return double(bytes) / (gbps(footprint) * 1e6);
}

std::string TriadTable::label(int64_t footprint) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "triad %.0f GB/s", gbps(footprint));
  return buf;
}

std::string TriadTable::summary() const {
  std::string s;
  char buf[64];
  for (auto [n, gbps] : gbps_) {
    std::snprintf(buf, sizeof buf, " %.1f GB/s at 3 x %.1f MB;", gbps, double(n) * 4 / 1e6);
    s += buf;
  }
  return s;
}

namespace {
dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
}  // namespace

std::function<void()> sgemmBound(int64_t n) {
  auto a = std::make_shared<std::vector<float>>(hostValues({n, n}, 11));
  auto b = std::make_shared<std::vector<float>>(hostValues({n, n}, 12));
  auto c = std::make_shared<std::vector<float>>(size_t(n * n));
  return [=] {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, a->data(), n, b->data(), n, 0.0f, c->data(), n);
  };
}

namespace {

// A convolution's padding (half the window), oneDNN's weight dims (goihw where grouped)
// and its output's.
struct ConvDims {
  int64_t pad;
  dnnl::memory::dims weights, output;
};

ConvDims convDims(const Dims& xs, const Dims& ws, int64_t groups, int64_t stride) {
  const int64_t pad = ws[2] / 2;
  return {pad,
          groups == 1 ? dnnl::memory::dims(ws.begin(), ws.end())
                      : dnnl::memory::dims{groups, ws[0] / groups, ws[1], ws[2], ws[3]},
          {xs[0], ws[0], (xs[2] + 2 * pad - ws[2]) / stride + 1, (xs[3] + 2 * pad - ws[3]) / stride + 1}};
}

// Fills `dst` (a blocked buffer) through a reorder from random values in the plain layout.
void fillFromPlain(dnnl::memory& dst, const dnnl::memory::dims& dims, dnnl::memory::format_tag plain, uint32_t seed) {
  std::vector<float> values = hostValues(Dims(dims.begin(), dims.end()), seed);
  dnnl::memory src(dnnl::memory::desc(dims, dnnl::memory::data_type::f32, plain), engine(), values.data());
  dnnl::stream s(engine());
  dnnl::reorder(src, dst).execute(s, src, dst);
  s.wait();
}

}  // namespace

std::function<void()> convBound(const Dims& xs, const Dims& ws, int64_t groups, int64_t stride) {
  using namespace dnnl;
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  const auto [pad, wdims, ydims] = convDims(xs, ws, groups, stride);
  convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                 memory::desc(memory::dims(xs.begin(), xs.end()), f32, tag::any),
                                 memory::desc(wdims, f32, tag::any), memory::desc(ydims, f32, tag::any),
                                 {stride, stride}, {0, 0}, {pad, pad}, {pad, pad});
  auto pd = std::make_shared<convolution_forward::primitive_desc>(desc, engine());
  auto x = std::make_shared<memory>(pd->src_desc(), engine());
  auto w = std::make_shared<memory>(pd->weights_desc(), engine());
  auto y = std::make_shared<memory>(pd->dst_desc(), engine());
  fillFromPlain(*x, memory::dims(xs.begin(), xs.end()), tag::nchw, 21);
  fillFromPlain(*w, wdims, groups == 1 ? tag::oihw : tag::goihw, 22);
  auto prim = std::make_shared<convolution_forward>(*pd);
  return [=] {
    stream s(engine());
    prim->execute(s, {{DNNL_ARG_SRC, *x}, {DNNL_ARG_WEIGHTS, *w}, {DNNL_ARG_DST, *y}});
    s.wait();
  };
}

std::function<void()> convWeightGradBound(const Dims& xs, const Dims& ws, int64_t groups, int64_t stride) {
  using namespace dnnl;
  using tag = memory::format_tag;
  const auto f32 = memory::data_type::f32;
  const auto [pad, wdims, ydims] = convDims(xs, ws, groups, stride);
  const memory::desc x(memory::dims(xs.begin(), xs.end()), f32, tag::any), w(wdims, f32, tag::any),
      y(ydims, f32, tag::any);
  convolution_forward::primitive_desc forward(
      convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct, x, w, y,
                                {stride, stride}, {pad, pad}, {pad, pad}),
      engine());
  auto pd = std::make_shared<convolution_backward_weights::primitive_desc>(
      convolution_backward_weights::desc(algorithm::convolution_direct, x, w, y, {stride, stride}, {pad, pad},
                                         {pad, pad}),
      engine(), forward);
  auto src = std::make_shared<memory>(pd->src_desc(), engine());
  auto dy = std::make_shared<memory>(pd->diff_dst_desc(), engine());
  auto dw = std::make_shared<memory>(pd->diff_weights_desc(), engine());
  fillFromPlain(*src, memory::dims(xs.begin(), xs.end()), tag::nchw, 23);
  fillFromPlain(*dy, ydims, tag::nchw, 24);
  auto prim = std::make_shared<convolution_backward_weights>(*pd);
  return [=] {
    stream s(engine());
    prim->execute(s, {{DNNL_ARG_SRC, *src}, {DNNL_ARG_DIFF_DST, *dy}, {DNNL_ARG_DIFF_WEIGHTS, *dw}});
    s.wait();
  };
}

// ---- targets -----------------------------------------------------------------------------------

double triadShareTarget(int64_t elements) { return elements >= (int64_t(1) << 22) ? 0.85 : NAN; }

int64_t MlpGeometry::parameters() const {
  int64_t n = 0;
  for (size_t i = 0; i + 1 < layers.size(); ++i) n += layers[i] * layers[i + 1] + layers[i + 1];
  return n;
}

double MlpGeometry::gemmFlops() const {
  double flops = 0;
  for (size_t i = 0; i + 1 < layers.size(); ++i) {
    const double product = 2.0 * double(batch) * double(layers[i]) * double(layers[i + 1]);
    flops += (i == 0 ? 2 : 3) * product;  // forward, weight gradient, input gradient (not the first)
  }
  return flops;
}

double MlpGeometry::elementwiseBytes() const {
  double hidden = 0;
  for (size_t i = 1; i + 1 < layers.size(); ++i) hidden += double(layers[i]);
  return 12.0 * double(parameters()) + 12.0 * double(batch) * hidden;
}

double MlpGeometry::boundMs(double gflops, double gbps) const {
  return gemmFlops() / (gflops * 1e6) + elementwiseBytes() / (gbps * 1e6);
}

std::string combineVerdicts(const std::vector<std::string>& verdicts) {
  std::string misses;
  bool ok = false;
  for (const std::string& v : verdicts) {
    if (v == "ok") ok = true;
    else if (v != "-") misses += (misses.empty() ? "" : "; ") + v;
  }
  return !misses.empty() ? misses : ok ? "ok" : "-";
}

// ---- child processes ------------------------------------------------------------------------

std::string shellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::optional<std::string> capture(const std::string& command) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) return std::nullopt;
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  return out;
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
  return lines;
}

std::string selfPath() {
  std::array<char, 4096> buf{};
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), size_t(n)) : "";
}

void defaultToMlirBackend() {
  if (const char* backend = std::getenv("KILN_JIT_BACKEND"); !backend || !*backend) {
    setenv("KILN_JIT_BACKEND", "MLIR", 1);
    std::printf("KILN_JIT_BACKEND was unset: set to MLIR (traced programs are compiled)\n");
  } else if (std::string(backend) != "MLIR") {
    std::printf("KILN_JIT_BACKEND=%s: the traced column is NOT the compiler\n", backend);
  }
}

// ---- printing -------------------------------------------------------------------------------

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

std::string verdict(double value, bool good, const std::string& measured) {
  if (std::isnan(value)) return "-";
  return good ? "ok" : "**MISS " + measured + "**";
}

std::string fmtPercent(double r) {
  char buf[32];
  if (std::isnan(r)) return "-";
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * r);
  return buf;
}

std::string fmtMiB(double bytes) {
  char buf[32];
  if (std::isnan(bytes)) return "-";
  std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1 << 20));
  return buf;
}

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

Table::Table(std::vector<std::string> columns) : columns_(std::move(columns)) {}

void Table::row(std::vector<std::string> cells) {
  cells.resize(columns_.size(), "-");
  rows_.push_back(std::move(cells));
}

void Table::print() const {
  std::string header = "|", rule = "|";
  for (const std::string& c : columns_) {
    const bool right = !c.empty() && c.back() == ':';
    header += " " + (right ? c.substr(0, c.size() - 1) : c) + " |";
    rule += right ? "---:|" : "---|";
  }
  std::printf("%s\n%s\n", header.c_str(), rule.c_str());
  for (const auto& cells : rows_) {
    std::string line = "|";
    for (const std::string& cell : cells) line += " " + cell + " |";
    std::printf("%s\n", line.c_str());
  }
}

}  // namespace kiln::bench
