// The runners' verdict logic (bench/Harness): the targets' thresholds and the MLP step's
// GEMM-peak bound, on values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/Harness.h"

namespace kiln::bench {
namespace {

TEST(Targets, TriadShareIs85PercentFrom4MElementsAndNotApplicableBelow) {
  EXPECT_EQ(triadShareTarget(int64_t(1) << 22), 0.85);
  EXPECT_EQ(triadShareTarget(int64_t(1) << 24), 0.85);
  EXPECT_TRUE(std::isnan(triadShareTarget(int64_t(1) << 20)));
}

TEST(Targets, MlpStepCountsEveryGemmOfTheStep) {
  const MlpGeometry mlp{{784, 256, 256, 10}, 128};
  EXPECT_EQ(mlp.parameters(), 784 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10);
  // Forward and weight gradient for every layer, input gradient for all but the first.
  const double first = 2.0 * 128 * 784 * 256, second = 2.0 * 128 * 256 * 256, third = 2.0 * 128 * 256 * 10;
  EXPECT_DOUBLE_EQ(mlp.gemmFlops(), 2 * first + 3 * second + 3 * third);
  EXPECT_DOUBLE_EQ(mlp.elementwiseBytes(), 12.0 * double(mlp.parameters()) + 12.0 * 128 * (256 + 256));
}

TEST(Targets, MlpBoundAddsGemmTimeAtPeakAndBytesAtBandwidth) {
  const MlpGeometry mlp{{4, 2}, 1};  // one layer: 8 FLOPs forward + 8 weight gradient; 10 parameters
  EXPECT_DOUBLE_EQ(mlp.gemmFlops(), 32.0);
  EXPECT_DOUBLE_EQ(mlp.elementwiseBytes(), 120.0);
  // 32 FLOP at 1 GFLOP/s = 32 ns; 120 bytes at 2 GB/s = 60 ns.
  EXPECT_DOUBLE_EQ(mlp.boundMs(1.0, 2.0), 32e-6 + 60e-6);
}

TEST(Targets, CombinedVerdictListsEveryMissAndOkOnlyWhenSomethingWasMeasured) {
  EXPECT_EQ(combineVerdicts({"ok", "ok"}), "ok");
  EXPECT_EQ(combineVerdicts({"ok", "-"}), "ok");
  EXPECT_EQ(combineVerdicts({"-", "-"}), "-");
  EXPECT_EQ(combineVerdicts({"**MISS 2.2x < 2.5x**", "ok", "**MISS 1.7x of bound > 1.5x**"}),
            "**MISS 2.2x < 2.5x**; **MISS 1.7x of bound > 1.5x**");
  EXPECT_EQ(verdict(NAN, false, "x"), "-");
  EXPECT_EQ(combineVerdicts({verdict(2.2, 2.2 >= 2.5, "2.2x < 2.5x"), verdict(1.2, 1.2 <= 1.5, "1.2x")}),
            "**MISS 2.2x < 2.5x**");
}

}  // namespace
}  // namespace kiln::bench
