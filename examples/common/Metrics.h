// Training curves as CSV for scripts/plot_metrics.py (--metrics PATH in the Fashion-MNIST
// examples): one row per training step (loss, samples per second) and one per epoch's test
// accuracy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::examples {

// Rows of "run,epoch,step,loss,accuracy,samples_per_second". A training step's row leaves
// accuracy empty; an epoch's test row leaves loss and samples_per_second empty and repeats
// the epoch's last step. `run` names the curve ("eager MLP", "traced MLP"; no commas). The
// file is rewritten atomically (a temporary name, then a rename) at the end of every
// epoch, so a plot can follow a run and a killed run leaves whole rows.
class MetricsCsv {
 public:
  // Writes the header to `path` (IOError naming it if it cannot). With an empty path
  // nothing is recorded or written.
  MetricsCsv(std::string path, std::string run);

  bool enabled() const { return !path_.empty(); }
  // The next training step of this epoch (steps count on across epochs, from 1).
  void step(double loss, double samplesPerSecond);
  // The epoch's test accuracy; writes the file (IOError naming the path if it cannot) and
  // starts the next epoch.
  void endEpoch(double accuracyPercent);

  static constexpr const char* kHeader = "run,epoch,step,loss,accuracy,samples_per_second";

 private:
  std::string prefix() const;  // "run,epoch,step,"
  void write() const;

  std::string path_;
  std::string run_;
  int64_t epoch_ = 1;
  int64_t steps_ = 0;
  std::vector<std::string> rows_;
};

}  // namespace kiln::examples
