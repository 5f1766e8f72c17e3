#include "examples/common/ProgressBar.h"

#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>

namespace kiln::examples {
namespace {

// A clock the test moves by hand.
struct FakeClock {
  double now = 100.0;
  ProgressBar::Clock clock() {
    return [this] { return now; };
  }
};

TEST(FormatDuration, MinutesSecondsAndHours) {
  EXPECT_EQ(formatDuration(0), "0:00");
  EXPECT_EQ(formatDuration(9.6), "0:10");
  EXPECT_EQ(formatDuration(75), "1:15");
  EXPECT_EQ(formatDuration(3599.4), "59:59");
  EXPECT_EQ(formatDuration(3600), "1:00:00");
  EXPECT_EQ(formatDuration(37 * 3600 + 62), "37:01:02");
  EXPECT_EQ(formatDuration(-1), "?");
  EXPECT_EQ(formatDuration(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(formatDuration(std::numeric_limits<double>::quiet_NaN()), "?");
}

TEST(ProgressBar, LogPrintsALinePerTenthAndTheTotalTimeAtTheEnd) {
  FakeClock fake;
  std::ostringstream out;
  {
    ProgressBar bar("epoch 1/2", 20, out, /*interactive=*/false, fake.clock());
    for (int i = 1; i <= 20; ++i) {
      fake.now += 0.5;  // 64 samples per half second: 128 samples/s
      bar.step(64, "loss " + std::to_string(i));
    }
    EXPECT_EQ(bar.done(), 20);
    EXPECT_EQ(bar.samples(), 1280);
    EXPECT_DOUBLE_EQ(bar.elapsed(), 10.0);
    EXPECT_DOUBLE_EQ(bar.samplesPerSecond(), 128.0);
  }  // the destructor finishes the bar
  EXPECT_EQ(out.str(),
            "epoch 1/2  2/20 (10%)  loss 2  128 samples/s  ETA 0:09\n"
            "epoch 1/2  4/20 (20%)  loss 4  128 samples/s  ETA 0:08\n"
            "epoch 1/2  6/20 (30%)  loss 6  128 samples/s  ETA 0:07\n"
            "epoch 1/2  8/20 (40%)  loss 8  128 samples/s  ETA 0:06\n"
            "epoch 1/2  10/20 (50%)  loss 10  128 samples/s  ETA 0:05\n"
            "epoch 1/2  12/20 (60%)  loss 12  128 samples/s  ETA 0:04\n"
            "epoch 1/2  14/20 (70%)  loss 14  128 samples/s  ETA 0:03\n"
            "epoch 1/2  16/20 (80%)  loss 16  128 samples/s  ETA 0:02\n"
            "epoch 1/2  18/20 (90%)  loss 18  128 samples/s  ETA 0:01\n"
            "epoch 1/2  20/20 (100%)  loss 20  128 samples/s  in 0:10\n");
}

TEST(ProgressBar, LogOfFewerStepsThanTenthsPrintsEachStepOnce) {
  FakeClock fake;
  std::ostringstream out;
  ProgressBar bar("eval", 3, out, /*interactive=*/false, fake.clock());
  for (int i = 0; i < 3; ++i) {
    fake.now += 1;
    bar.step(10);
  }
  bar.finish();
  bar.finish();  // a second finish prints nothing
  EXPECT_EQ(out.str(),
            "eval  1/3 (33%)  10 samples/s  ETA 0:02\n"
            "eval  2/3 (66%)  10 samples/s  ETA 0:01\n"
            "eval  3/3 (100%)  10 samples/s  in 0:03\n");
}

TEST(ProgressBar, TerminalRedrawsInPlaceAtMostEveryTenthOfASecond) {
  FakeClock fake;
  std::ostringstream out;
  ProgressBar bar("train", 4, out, /*interactive=*/true, fake.clock());
  fake.now += 1;
  bar.step(100, "loss 10.0000");  // drawn: the first step
  fake.now += 0.05;
  bar.step(100, "loss 9");  // not drawn: too soon
  fake.now += 0.95;
  bar.step(100, "loss 8");  // drawn; shorter than the first, so padded with spaces
  fake.now += 0.01;
  bar.step(100, "loss 7");  // drawn: the last step always is
  bar.finish();  // "in 0:02" is a character shorter than "ETA 0:00": one space blanks it
  EXPECT_EQ(out.str(),
            "\rtrain [#####               ] 1/4  loss 10.0000  100 samples/s  ETA 0:03"
            "\rtrain [###############     ] 3/4  loss 8  150 samples/s  ETA 0:01      "
            "\rtrain [####################] 4/4  loss 7  199 samples/s  ETA 0:00"
            "\rtrain [####################] 4/4  loss 7  199 samples/s  in 0:02 \n");
}

TEST(ProgressBar, StepsPastTheTotalKeepTheBarFull) {
  FakeClock fake;
  std::ostringstream out;
  ProgressBar bar("x", 1, out, /*interactive=*/false, fake.clock());
  fake.now += 1;
  bar.step(1);
  bar.step(1);
  bar.finish();
  EXPECT_EQ(bar.done(), 2);
  EXPECT_EQ(out.str(), "x  1/1 (100%)  2 samples/s  in 0:01\n");
}

TEST(ProgressBar, ATotalBelowOneCountsAsOne) {
  FakeClock fake;
  std::ostringstream out;
  ProgressBar bar("empty", 0, out, /*interactive=*/false, fake.clock());
  bar.finish();
  EXPECT_EQ(out.str(), "empty  0/1 (0%)  0 samples/s  in 0:00\n");
}

}  // namespace
}  // namespace kiln::examples
