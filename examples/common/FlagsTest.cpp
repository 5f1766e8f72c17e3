#include "examples/common/Flags.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::examples {
namespace {

// Flags of every kind, bound to members with their defaults.
struct FlagsFixture : ::testing::Test {
  int64_t epochs = 2;
  int64_t zeroOk = 0;
  uint64_t seed = 7;
  double lr = 0.1;
  std::string path = "/default";
  std::optional<int64_t> limit;
  bool verbose = false;
  Flags flags{"prog", "Does things."};
  bool helpAsked = false;

  FlagsFixture() {
    flags.add("epochs", epochs, "N", "passes");
    flags.add("zero-ok", zeroOk, "N", "a count that may be 0", /*min=*/0);
    flags.add("seed", seed, "N", "seed");
    flags.add("lr", lr, "X", "rate", 0.0, 10.0);
    flags.add("path", path, "DIR", "where");
    flags.add("limit", limit, "N", "first N", "all");
    flags.add("verbose", verbose, "talk more");
  }

  std::optional<std::string> parse(std::vector<const char*> args) {
    args.insert(args.begin(), "prog");
    return flags.parse(int(args.size()), args.data(), helpAsked);
  }
};

TEST_F(FlagsFixture, DefaultsStayWithoutArguments) {
  EXPECT_EQ(parse({}), std::nullopt);
  EXPECT_EQ(epochs, 2);
  EXPECT_EQ(seed, 7u);
  EXPECT_EQ(lr, 0.1);
  EXPECT_EQ(path, "/default");
  EXPECT_EQ(limit, std::nullopt);
  EXPECT_FALSE(verbose);
  EXPECT_FALSE(helpAsked);
}

TEST_F(FlagsFixture, SpaceAndEqualsFormsSetEveryKind) {
  EXPECT_EQ(parse({"--epochs", "5", "--zero-ok=0", "--seed=18446744073709551615", "--lr", "2.5e-2",
                   "--path=/data/x", "--verbose", "--limit", "256"}),
            std::nullopt);
  EXPECT_TRUE(verbose);
  EXPECT_EQ(epochs, 5);
  EXPECT_EQ(zeroOk, 0);
  EXPECT_EQ(seed, UINT64_MAX);
  EXPECT_EQ(lr, 0.025);
  EXPECT_EQ(path, "/data/x");
  EXPECT_EQ(limit, 256);
}

TEST_F(FlagsFixture, LaterValueWins) {
  EXPECT_EQ(parse({"--epochs", "3", "--epochs", "4"}), std::nullopt);
  EXPECT_EQ(epochs, 4);
}

TEST_F(FlagsFixture, HelpStopsParsing) {
  EXPECT_EQ(parse({"--help", "--bogus"}), std::nullopt);
  EXPECT_TRUE(helpAsked);
  EXPECT_EQ(parse({"-h"}), std::nullopt);
  EXPECT_TRUE(helpAsked);
}

TEST_F(FlagsFixture, ErrorsNameTheFlagAndTheValue) {
  EXPECT_EQ(parse({"--bogus", "1"}), "unknown flag --bogus");
  EXPECT_EQ(parse({"epochs"}), "unexpected argument 'epochs'");
  EXPECT_EQ(parse({"--epochs"}), "--epochs needs a value (N)");
  EXPECT_EQ(parse({"--epochs", "two"}), "--epochs: 'two' is not an integer");
  EXPECT_EQ(parse({"--epochs", "3x"}), "--epochs: '3x' is not an integer");
  EXPECT_EQ(parse({"--epochs", ""}), "--epochs: '' is not an integer");
  EXPECT_EQ(parse({"--epochs", "0"}), "--epochs: '0' is less than 1");
  EXPECT_EQ(parse({"--zero-ok", "-1"}), "--zero-ok: '-1' is less than 0");
  EXPECT_EQ(parse({"--epochs", "99999999999999999999"}),
            "--epochs: '99999999999999999999' is not an integer");
  EXPECT_EQ(parse({"--seed", "-1"}), "--seed: '-1' is not a non-negative integer");
  EXPECT_EQ(parse({"--lr", "fast"}), "--lr: 'fast' is not a number");
  EXPECT_EQ(parse({"--lr", "nan"}), "--lr: 'nan' is not a number");
  EXPECT_EQ(parse({"--lr", "inf"}), "--lr: 'inf' is not a number");
  EXPECT_EQ(parse({"--lr", "11"}), "--lr: '11' is outside [0, 10]");
  EXPECT_EQ(parse({"--path="}), "--path: '' is empty");
  EXPECT_EQ(parse({"--limit", "0"}), "--limit: '0' is less than 1");
  EXPECT_EQ(parse({"--verbose=yes"}), "--verbose takes no value");
  EXPECT_EQ(parse({"--verbose="}), "--verbose takes no value");
}

// A switch takes no value: the argument after it is parsed as the next flag.
TEST_F(FlagsFixture, ASwitchLeavesTheNextArgumentAlone) {
  EXPECT_EQ(parse({"--verbose", "--epochs", "3"}), std::nullopt);
  EXPECT_TRUE(verbose);
  EXPECT_EQ(epochs, 3);
  EXPECT_EQ(parse({"--verbose", "3"}), "unexpected argument '3'");
}

TEST_F(FlagsFixture, UsageListsEveryFlagWithItsDefault) {
  EXPECT_EQ(flags.usage(),
            "usage: prog [--flag value]...\n"
            "Does things.\n"
            "\n"
            "flags:\n"
            "  --epochs N   passes (default 2)\n"
            "  --zero-ok N  a count that may be 0 (default 0)\n"
            "  --seed N     seed (default 7)\n"
            "  --lr X       rate (default 0.1)\n"
            "  --path DIR   where (default /default)\n"
            "  --limit N    first N (default all)\n"
            "  --verbose    talk more (default off)\n"
            "  --help       prints this text\n");
}

TEST_F(FlagsFixture, FailPrintsTheMessageAndUsageAndExitsWith2) {
  EXPECT_EXIT(flags.fail("--a and --b disagree"), ::testing::ExitedWithCode(2),
              "prog: --a and --b disagree\nusage: prog");
}

TEST_F(FlagsFixture, ParseOrExitExitsWith2OnABadFlagAnd0OnHelp) {
  const char* bad[] = {"prog", "--epochs", "x"};
  EXPECT_EXIT(flags.parseOrExit(3, bad), ::testing::ExitedWithCode(2),
              "prog: --epochs: 'x' is not an integer\nusage: prog");
  const char* help[] = {"prog", "--help"};
  EXPECT_EXIT(flags.parseOrExit(2, help), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kiln::examples
