// MetricsCsv: the rows the Fashion-MNIST examples write for scripts/plot_metrics.py, written
// atomically, and the error for a path that cannot be written.
#include "examples/common/Metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kiln/core/Error.h"

namespace kiln::examples {
namespace {

std::string tempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(MetricsTest, StepAndTestRowsUnderTheHeader) {
  const std::string path = tempPath("metrics.csv");
  MetricsCsv metrics(path, "traced");
  EXPECT_EQ(contents(path), "run,epoch,step,loss,accuracy,samples_per_second\n");
  metrics.step(2.25, 1000);
  metrics.step(0.5, 12345.678);
  metrics.endEpoch(87.5);
  EXPECT_EQ(contents(path),
            "run,epoch,step,loss,accuracy,samples_per_second\n"
            "traced,1,1,2.25,,1000\n"
            "traced,1,2,0.5,,12345.7\n"
            "traced,1,2,,87.5,\n");
  // Rewritten whole at the next epoch's end, with no temporary file left beside it.
  metrics.step(0.25, 2000);
  metrics.endEpoch(90);
  EXPECT_THAT(contents(path),
              ::testing::EndsWith("traced,1,2,,87.5,\ntraced,2,3,0.25,,2000\ntraced,2,3,,90,\n"));
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(::testing::HasSubstr(".tmp")));
}

TEST(MetricsTest, WithoutAPathNothingIsWritten) {
  MetricsCsv metrics("", "eager");
  EXPECT_FALSE(metrics.enabled());
  metrics.step(1.0, 1.0);
  metrics.endEpoch(50);  // no file, no error
}

TEST(MetricsTest, AnUnwritablePathIsAnIOErrorNamingTheFlagAndPath) {
  try {
    MetricsCsv metrics("/nonexistent-dir/metrics.csv", "eager");
    ADD_FAILURE() << "expected an IOError";
  } catch (const IOError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("--metrics: /nonexistent-dir/metrics.csv"));
  }
}

}  // namespace
}  // namespace kiln::examples
