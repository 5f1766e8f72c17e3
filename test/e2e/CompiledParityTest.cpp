// Issue 6's parity check: every case of the table (OpCases.cpp), traced by value and
// symbolically and compiled for the CPU by the backend the BUILD target names
// (KILN_JIT_BACKEND=MLIR for CompiledParityTest, HALIDE for HalideParityTest), agrees call
// after call with the eager function, which the interpreter matches bitwise: within
// kCompiled on floating dtypes, exactly on integers and bools.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "test/e2e/Parity.h"

namespace kiln::e2e {
namespace {

std::string modeName(bool symbolic) { return symbolic ? "Symbolic" : "ByValue"; }

class CompiledParity : public ::testing::TestWithParam<std::tuple<size_t, bool>> {};

TEST_P(CompiledParity, CompiledCallsAgreeWithEager) {
  const std::string_view backend =
      std::getenv("KILN_JIT_BACKEND") ? std::getenv("KILN_JIT_BACKEND") : "";
  ASSERT_TRUE(!backend.empty() && backend != "INTERP")
      << "this suite checks compiled programs; its BUILD target sets KILN_JIT_BACKEND to a "
         "code generator, not '"
      << backend << "'";
  const auto [index, symbolic] = GetParam();
  const OpCase& c = allCases()[index];
  std::vector<std::string> problems = runCase(c, symbolic, kCompiled);
  std::string report;
  for (const std::string& p : problems) report += "\n  " + p;
  EXPECT_TRUE(problems.empty()) << c.name << " (" << modeName(symbolic)
                                << ") compiled differs from eager:" << report;
}

INSTANTIATE_TEST_SUITE_P(
    AllOps, CompiledParity,
    ::testing::Combine(::testing::Range(size_t(0), allCases().size()), ::testing::Bool()),
    [](const auto& info) {
      return allCases()[std::get<0>(info.param)].name + "_" + modeName(std::get<1>(info.param));
    });

}  // namespace
}  // namespace kiln::e2e
