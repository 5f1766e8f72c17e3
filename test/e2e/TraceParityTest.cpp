// Issue 5's parity check: every case of the table (OpCases.cpp) traced by value and
// symbolically gives, call after call, the bits the eager function gives on the same
// inputs, state and generator; and the fused eager composites (softmax, log_softmax,
// layer_norm, gelu's tanh form) give the bits of the composition a trace runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Functional.h"
#include "kiln/core/Ops.h"
#include "kiln/jit/Trace.h"
#include "test/e2e/Parity.h"

namespace kiln::e2e {
namespace {

// Cases that fail for a cause outside the jit's bridge and interpreter (the recorder,
// jit::trace, the eager core), left for their owners. Each still runs and is expected to
// fail: when one passes, the test says so and the entry must go.
struct KnownFailure {
  std::string_view caseName;
  std::string_view mode;  // "ByValue", "Symbolic" or "Both"
  std::string_view cause;
};

// Cases that record silently wrong programs today; each still runs and must fail, so a
// fix shows up as a failure asking to remove its entry. (Writes through views of state
// and manual_seed inside a trace are TraceErrors, tested in test/unit/jit/TraceTest.cpp.)
const std::vector<KnownFailure> kKnownFailures = {};

const KnownFailure* knownFailure(std::string_view caseName, bool symbolic) {
  for (const KnownFailure& k : kKnownFailures)
    if (k.caseName == caseName && (k.mode == "Both" || k.mode == (symbolic ? "Symbolic" : "ByValue")))
      return &k;
  return nullptr;
}

std::string modeName(bool symbolic) { return symbolic ? "Symbolic" : "ByValue"; }

class TraceParity : public ::testing::TestWithParam<std::tuple<size_t, bool>> {};

TEST_P(TraceParity, TracedCallsEqualEagerBitwise) {
  const auto [index, symbolic] = GetParam();
  const OpCase& c = allCases()[index];
  std::vector<std::string> problems = runCase(c, symbolic);
  std::string report;
  for (const std::string& p : problems) report += "\n  " + p;
  const std::string what = c.name + " (" + modeName(symbolic) + ")";
  if (const KnownFailure* known = knownFailure(c.name, symbolic)) {
    EXPECT_FALSE(problems.empty()) << what << " passes now: remove it from kKnownFailures ("
                                   << known->cause << ")";
    return;
  }
  EXPECT_TRUE(problems.empty()) << what << " differs from eager:" << report;
}

INSTANTIATE_TEST_SUITE_P(
    AllOps, TraceParity,
    ::testing::Combine(::testing::Range(size_t(0), allCases().size()), ::testing::Bool()),
    [](const auto& info) {
      return allCases()[std::get<0>(info.param)].name + "_" + modeName(std::get<1>(info.param));
    });

TEST(TraceParityTable, NamesAreUniqueAndKnownFailuresNameCases) {
  std::vector<std::string> names;
  for (const OpCase& c : allCases()) names.push_back(c.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "a case name repeats";
  for (const KnownFailure& k : kKnownFailures) {
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), std::string(k.caseName)))
        << "kKnownFailures names no case: " << k.caseName;
    EXPECT_TRUE(k.mode == "Both" || k.mode == "ByValue" || k.mode == "Symbolic") << k.mode;
  }
}

// ---- fused eager composites against their composition ------------------------------------

struct FusedCase {
  std::string name;
  std::vector<Maker> inputs;
  std::function<Tensor(const Tensors&)> fn;
};

std::vector<FusedCase> fusedCases() {
  const Maker f32 = specials({6, 33}), f64 = normal({6, 33}, kFloat64);
  const Maker gamma = normal({33}), beta = normal({33});
  return {
      {"softmax", {f32}, [](const Tensors& x) { return softmax(x[0], 1); }},
      {"softmax_dim0", {f32}, [](const Tensors& x) { return softmax(x[0], 0); }},
      {"softmax_f64", {f64}, [](const Tensors& x) { return softmax(x[0], 1); }},
      {"log_softmax", {f32}, [](const Tensors& x) { return log_softmax(x[0], 1); }},
      {"log_softmax_dim0", {normal({6, 33})}, [](const Tensors& x) { return log_softmax(x[0], 0); }},
      {"log_softmax_f64", {f64}, [](const Tensors& x) { return log_softmax(x[0], 1); }},
      {"layer_norm", {normal({6, 33})}, [](const Tensors& x) { return layer_norm(x[0], {33}); }},
      {"layer_norm_affine", {normal({6, 33}), gamma, beta},
       [](const Tensors& x) { return layer_norm(x[0], {33}, x[1], x[2]); }},
      {"layer_norm_f64", {f64}, [](const Tensors& x) { return layer_norm(x[0], {6, 33}); }},
      {"gelu_tanh", {f32}, [](const Tensors& x) { return gelu(x[0], "tanh"); }},
      {"gelu_tanh_f64", {f64}, [](const Tensors& x) { return gelu(x[0], "tanh"); }},
  };
}

// The composition eagerly: an input that requires grad turns the fused kernel off.
Tensor composedEagerly(const FusedCase& c, const Tensors& inputs) {
  Tensors x = inputs;
  x[0] = inputs[0].detach().requires_grad_();
  return c.fn(x).detach();
}

TEST(FusedComposites, FusedEagerEqualsComposedEagerAndTraced) {
  for (const FusedCase& c : fusedCases()) {
    Tensors inputs;
    for (size_t i = 0; i < c.inputs.size(); ++i) inputs.push_back(c.inputs[i](40 + i));
    const Tensor fused = c.fn(inputs);
    EXPECT_EQ(bitwiseDifference(composedEagerly(c, inputs), fused), "")
        << c.name << ": composed eagerly vs fused";
    for (bool symbolic : {false, true}) {
      OpCase asCase = op(c.name, c.inputs, c.fn);
      // runCase compares traced calls with `fn` run eagerly, which is the fused kernel.
      for (const std::string& p : runCase(asCase, symbolic))
        ADD_FAILURE() << c.name << ": traced (" << modeName(symbolic) << ") vs fused: " << p;
    }
  }
}

}  // namespace
}  // namespace kiln::e2e
