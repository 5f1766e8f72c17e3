// A progress bar for training loops: steps done of the total, the caller's metrics,
// samples per second and the time left, redrawn in place on a terminal.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <string>
#include <string_view>

namespace kiln::examples {

// On a terminal the bar is one line rewritten with '\r' (at most every 0.1 s, and at the
// end):
//   epoch 1/2 [########            ] 190/469  loss 0.5123  9120 samples/s  ETA 0:14
// Elsewhere (a log file, a pipe, a test) it prints a line each time another tenth of the
// steps is done, so logs stay readable:
//   epoch 1/2  47/469 (10%)  loss 0.8123  9120 samples/s  ETA 0:21
// The last line says "in M:SS" instead of the ETA.
class ProgressBar {
 public:
  // Seconds on a monotonic clock; tests pass a fake one.
  using Clock = std::function<double()>;
  static double steadySeconds();
  // Whether standard output is a terminal (the default for `interactive`).
  static bool stdoutIsTerminal();

  // `total` steps (at least 1) labelled `label` ("epoch 1/2"), written to `out`. The clock
  // starts now.
  ProgressBar(std::string label, int64_t total, std::ostream& out, bool interactive,
              Clock clock = steadySeconds);
  // To standard output, in place when it is a terminal.
  ProgressBar(std::string label, int64_t total);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // One more step done, which handled `samples` samples; `metrics` ("loss 0.5123") is shown
  // after the counts. Steps past the total are counted but the bar stays full.
  void step(int64_t samples, std::string_view metrics = {});
  // Ends the bar's line, showing the last step's state; later calls do nothing. The
  // destructor calls it.
  void finish();

  int64_t done() const { return done_; }
  int64_t samples() const { return samples_; }
  double elapsed() const;
  // Samples per second since construction (0 before any time has passed).
  double samplesPerSecond() const;

 private:
  std::string line() const;
  void draw();

  std::string label_;
  int64_t total_;
  std::ostream& out_;
  bool interactive_;
  Clock clock_;
  double start_;
  int64_t done_ = 0;
  int64_t samples_ = 0;
  std::string metrics_;
  // On a terminal: when the line was last drawn, and its length, to blank what a shorter
  // line would leave of it.
  double lastDraw_ = -std::numeric_limits<double>::infinity();
  size_t lastWidth_ = 0;
  // In a log: tenths of the total already printed.
  int64_t printedTenths_ = 0;
  bool finished_ = false;
};

// "M:SS", or "H:MM:SS" from an hour up; negative or non-finite seconds print "?".
std::string formatDuration(double seconds);

}  // namespace kiln::examples
