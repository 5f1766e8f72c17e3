#include "examples/common/ProgressBar.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <utility>

namespace kiln::examples {

namespace {

constexpr int kBarWidth = 20;
constexpr double kRedrawSeconds = 0.1;

}  // namespace

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  long long total = std::llround(seconds);
  long long h = total / 3600, m = total / 60 % 60, s = total % 60;
  char text[48];
  if (h > 0)
    std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", h, m, s);
  else
    std::snprintf(text, sizeof text, "%lld:%02lld", m, s);
  return text;
}

double ProgressBar::steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool ProgressBar::stdoutIsTerminal() { return isatty(STDOUT_FILENO) == 1; }

ProgressBar::ProgressBar(std::string label, int64_t total, std::ostream& out, bool interactive,
                         Clock clock)
    : label_(std::move(label)),
      total_(std::max<int64_t>(total, 1)),
      out_(out),
      interactive_(interactive),
      clock_(std::move(clock)),
      start_(clock_()) {}

ProgressBar::ProgressBar(std::string label, int64_t total)
    : ProgressBar(std::move(label), total, std::cout, stdoutIsTerminal()) {}

ProgressBar::~ProgressBar() { finish(); }

double ProgressBar::elapsed() const { return clock_() - start_; }

double ProgressBar::samplesPerSecond() const {
  double seconds = elapsed();
  return seconds > 0 ? double(samples_) / seconds : 0.0;
}

void ProgressBar::step(int64_t samples, std::string_view metrics) {
  ++done_;
  samples_ += samples;
  metrics_ = metrics;
  if (interactive_) {
    if (done_ >= total_ || clock_() - lastDraw_ >= kRedrawSeconds) draw();
    return;
  }
  // The line for the last step is finish()'s, which reports the total time.
  int64_t tenths = done_ * 10 / total_;
  if (tenths > printedTenths_ && done_ < total_) {
    printedTenths_ = tenths;
    draw();
  }
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  draw();
  if (interactive_) out_ << "\n";
  out_.flush();
}

std::string ProgressBar::line() const {
  double seconds = elapsed();
  int64_t shown = std::min(done_, total_);
  std::string text = label_;
  if (interactive_) {
    int64_t filled = shown * kBarWidth / total_;
    text += " [" + std::string(size_t(filled), '#') + std::string(size_t(kBarWidth - filled), ' ') +
            "] " + std::to_string(shown) + "/" + std::to_string(total_);
  } else {
    text += "  " + std::to_string(shown) + "/" + std::to_string(total_) + " (" +
            std::to_string(shown * 100 / total_) + "%)";
  }
  if (!metrics_.empty()) text += "  " + metrics_;
  char rate[48];
  std::snprintf(rate, sizeof rate, "  %.0f samples/s", samplesPerSecond());
  text += rate;
  if (finished_)
    text += "  in " + formatDuration(seconds);
  else
    text += "  ETA " + formatDuration(done_ > 0 ? seconds * double(total_ - shown) / double(done_)
                                                : -1.0);
  return text;
}

void ProgressBar::draw() {
  std::string text = line();
  if (!interactive_) {
    out_ << text << "\n";
    return;
  }
  size_t width = text.size();
  // Blank the tail of a longer previous line.
  if (width < lastWidth_) text += std::string(lastWidth_ - width, ' ');
  lastWidth_ = width;
  lastDraw_ = clock_();
  out_ << "\r" << text << std::flush;
}

}  // namespace kiln::examples
