// Training curves as CSV (see Metrics.h).
#include "examples/common/Metrics.h"

#include <cstdio>

#include "kiln/core/Error.h"
#include "support/BinaryFile.h"

namespace kiln::examples {

namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

MetricsCsv::MetricsCsv(std::string path, std::string run)
    : path_(std::move(path)), run_(std::move(run)) {
  write();  // the header: a path that cannot be written fails before training starts
}

std::string MetricsCsv::prefix() const {
  return run_ + "," + std::to_string(epoch_) + "," + std::to_string(steps_) + ",";
}

void MetricsCsv::step(double loss, double samplesPerSecond) {
  if (!enabled()) return;
  ++steps_;
  rows_.push_back(prefix() + number(loss) + ",," + number(samplesPerSecond));
}

void MetricsCsv::endEpoch(double accuracyPercent) {
  if (!enabled()) return;
  rows_.push_back(prefix() + "," + number(accuracyPercent) + ",");
  write();
  ++epoch_;
}

void MetricsCsv::write() const {
  if (!enabled()) return;
  support::AtomicFileWriter file(path_, "--metrics", SourceLoc::current());
  file.write(std::string(kHeader) + "\n");
  for (const std::string& row : rows_) file.write(row + "\n");
  file.commit();
}

}  // namespace kiln::examples
