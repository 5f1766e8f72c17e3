// bench/conv_layers: the convolution layers of workload 3 (torchvision's mobilenet_v2 on
// 32x32 inputs, batch 64), forward, each through Kiln's eager conv2d (the kernels the
// compiled step's kiln.conv2d host ops run) beside oneDNN on its own preferred layouts
// (the bound of bench/compare's conv rows: input and weights reordered once, untimed).
// The backward's convolutions have the same shapes (a pointwise layer's input gradient is
// a pointwise convolution of the output gradient) or are handled apart (weight gradients).
//
//   bazel run -c opt //bench:conv_layers [-- --reps=9 --threads=N --filter=2x2]
//
// --cpu_time=1: each contender's process CPU time per call instead of wall time, with one
// thread (--threads=1), for a machine that other work keeps busy: time slices lost to other
// processes then do not count.
//
// "count" is how often the geometry occurs in one forward pass; the last line sums
// count x ms for both columns. A second table does the same for the depthwise and pointwise
// layers' weight gradients (--filter=wgrad for it alone).
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench/Harness.h"
#include "kiln/kiln.h"

namespace {

using namespace kiln::bench;

struct Layer {
  Dims x, w;
  int64_t stride, groups, count;
};

std::vector<Layer> mobileNetV2Layers() {
  auto pw = [](int64_t c, int64_t o, int64_t side, int64_t count) {
    return Layer{{64, c, side, side}, {o, c, 1, 1}, 1, 1, count};
  };
  auto dw = [](int64_t c, int64_t side, int64_t stride, int64_t count) {
    return Layer{{64, c, side, side}, {c, 1, 3, 3}, stride, c, count};
  };
  return {Layer{{64, 3, 32, 32}, {32, 3, 3, 3}, 2, 1, 1},
          dw(32, 16, 1, 1),   pw(32, 16, 16, 1),  pw(16, 96, 16, 1),  dw(96, 16, 2, 1),
          pw(96, 24, 8, 1),   pw(24, 144, 8, 2),  dw(144, 8, 1, 1),   pw(144, 24, 8, 1),
          dw(144, 8, 2, 1),   pw(144, 32, 4, 1),  pw(32, 192, 4, 3),  dw(192, 4, 1, 2),
          pw(192, 32, 4, 2),  dw(192, 4, 2, 1),   pw(192, 64, 2, 1),  pw(64, 384, 2, 4),
          dw(384, 2, 1, 4),   pw(384, 64, 2, 3),  pw(384, 96, 2, 1),  pw(96, 576, 2, 3),
          dw(576, 2, 1, 2),   pw(576, 96, 2, 2),  dw(576, 2, 2, 1),   pw(576, 160, 1, 1),
          pw(160, 960, 1, 3), dw(960, 1, 1, 3),   pw(960, 160, 1, 2), pw(960, 320, 1, 1),
          pw(320, 1280, 1, 1)};
}

std::string name(const Layer& l) {
  const bool depthwise = l.groups > 1;
  return std::string(depthwise ? "depthwise 3x3" : l.w[2] == 1 ? "pointwise" : "conv 3x3") +
         (l.stride > 1 ? " s2 " : " ") + std::to_string(l.x[2]) + "x" + std::to_string(l.x[3]) + " " +
         std::to_string(l.x[1]) + "->" + std::to_string(l.w[0]);
}

double cpuMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// Median CPU ms per call of f, alternating between the contenders as timeAlternating does.
std::vector<double> cpuTimes(const std::vector<std::function<void()>>& fs, const Options& options) {
  std::vector<std::vector<double>> samples(fs.size());
  std::vector<int> iters(fs.size(), 1);
  for (size_t i = 0; i < fs.size(); ++i) {  // warm up, then calls for ~target_ms
    double t0 = cpuMs();
    fs[i]();
    iters[i] = std::max(1, int(options.targetMs / std::max(cpuMs() - t0, 1e-3)));
  }
  for (int r = 0; r < options.reps; ++r)
    for (size_t k = 0; k < fs.size(); ++k) {
      const size_t i = (k + r) % fs.size();
      const double t0 = cpuMs();
      for (int n = 0; n < iters[i]; ++n) fs[i]();
      samples[i].push_back((cpuMs() - t0) / iters[i]);
    }
  std::vector<double> medians;
  for (auto& s : samples) {
    std::sort(s.begin(), s.end());
    medians.push_back(s[s.size() / 2]);
  }
  return medians;
}

// Kiln's and the bound's median ms per call, alternating: process CPU time (--cpu_time=1)
// or wall time.
std::pair<double, double> timePair(const std::function<void()>& ours, const std::function<void()>& peer,
                                   const Options& options, bool cpuTime) {
  if (cpuTime) {
    const std::vector<double> ms = cpuTimes({ours, peer}, options);
    return {ms[0], ms[1]};
  }
  Timed kiln(ours), bound(peer);
  timeAlternating({&kiln, &bound}, options);
  return {kiln.median(), bound.median()};
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parseOptions(argc, argv, "conv_layers", {"--cpu_time"});
  const bool cpuTime = std::find(options.extra.begin(), options.extra.end(), "--cpu_time=1") != options.extra.end();
  const int threads = setUpThreads(options);
  printMachine(threads);
  std::printf("\n| layer | count | kiln ms | oneDNN blocked ms | of bound |\n|---|---:|---:|---:|---:|\n");
  double kilnTotal = 0, boundTotal = 0;
  for (const Layer& l : mobileNetV2Layers()) {
    const std::string row = name(l);
    if (!wanted(options, row)) continue;
    std::vector<float> xv = hostValues(l.x, 1), wv = hostValues(l.w, 2);
    const kiln::Tensor x = kilnTensor(xv, l.x), w = kilnTensor(wv, l.w);
    const int64_t pad = l.w[2] / 2;
    const std::function<void()> ours = [&] {
      sink(kiln::conv2d(x, w, kiln::Tensor(), {l.stride}, {pad}, {1}, l.groups));
    };
    const std::function<void()> peer = convBound(l.x, l.w, l.groups, l.stride);
    const auto [kilnMs, boundMs] = timePair(ours, peer, options, cpuTime);
    kilnTotal += l.count * kilnMs;
    boundTotal += l.count * boundMs;
    std::printf("| %s | %lld | %s | %s | %s |\n", row.c_str(), (long long)l.count, fmtMs(kilnMs).c_str(),
                fmtMs(boundMs).c_str(), fmtRatio(boundMs / kilnMs).c_str());
  }
  std::printf("| forward pass, count x ms | | %s | %s | %s |\n", fmtMs(kilnTotal).c_str(), fmtMs(boundTotal).c_str(),
              fmtRatio(boundTotal / kilnTotal).c_str());

  // The layers' weight gradients as the compiled step's kiln.conv2d host ops get them
  // (convWeightGrad), beside oneDNN's
  // backward-weights primitive on its layouts. Depthwise: the input's planes grouped by
  // channel, [1, C * N, H, W], the output gradient's planes as filters, [C, N, H', W'] (both
  // materialized by host transposes), the layer's stride as dilation. Pointwise: the output
  // gradient's planes [O, N, H, W] as the input, the input's [C, N, H, W] as filters, the
  // whole plane the window.
  std::printf("\n| weight gradient | count | kiln ms | oneDNN blocked ms | of bound |\n"
              "|---|---:|---:|---:|---:|\n");
  kilnTotal = boundTotal = 0;
  for (const Layer& l : mobileNetV2Layers()) {
    const std::string row = name(l) + " wgrad";
    const bool depthwise = l.groups > 1, pointwise = l.w[2] == 1;
    if (!(depthwise || pointwise) || !wanted(options, row)) continue;
    const int64_t n = l.x[0], c = l.x[1], pad = l.w[2] / 2;
    const int64_t oh = (l.x[2] + 2 * pad - l.w[2]) / l.stride + 1, ow = (l.x[3] + 2 * pad - l.w[3]) / l.stride + 1;
    // Pointwise operands are the transpose(0, 1) views the host op is handed (a transpose
    // whose users are all library calls is not materialized).
    const Dims xd = depthwise ? Dims{1, c * n, l.x[2], l.x[3]} : Dims{n, l.w[0], oh, ow};
    const Dims gd = depthwise ? Dims{c, n, oh, ow} : Dims{n, c, l.x[2], l.x[3]};
    std::vector<float> xv = hostValues(xd, 3), gv = hostValues(gd, 4);
    kiln::Tensor x = kilnTensor(xv, xd), g = kilnTensor(gv, gd);
    if (!depthwise) x = x.transpose(0, 1), g = g.transpose(0, 1);
    const std::function<void()> ours = [&] {
      if (depthwise) sink(kiln::conv2d(x, g, kiln::Tensor(), {1}, {pad}, {l.stride}, c));
      else sink(kiln::conv2d(x, g, kiln::Tensor(), {1}, {0}, {1}, 1));
    };
    const std::function<void()> peer = convWeightGradBound(l.x, l.w, l.groups, l.stride);
    const auto [kilnMs, boundMs] = timePair(ours, peer, options, cpuTime);
    kilnTotal += l.count * kilnMs;
    boundTotal += l.count * boundMs;
    std::printf("| %s | %lld | %s | %s | %s |\n", row.c_str(), (long long)l.count, fmtMs(kilnMs).c_str(),
                fmtMs(boundMs).c_str(), fmtRatio(boundMs / kilnMs).c_str());
  }
  std::printf("| weight gradients, count x ms | | %s | %s | %s |\n", fmtMs(kilnTotal).c_str(),
              fmtMs(boundTotal).c_str(), fmtRatio(boundTotal / kilnTotal).c_str());
}
