// kiln-fuzz's own pieces: the comparison and its tolerances, the C++ printer, the
// generator (deterministic, valid, well-conditioned), the minimizer, the runner's verdicts
// and the forked child's report of crashes and hangs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>

#include "kiln/core/Ops.h"
#include "kiln/core/Random.h"
#include "tools/kiln-fuzz/Analysis.h"
#include "tools/kiln-fuzz/Compare.h"
#include "tools/kiln-fuzz/Generator.h"
#include "tools/kiln-fuzz/Isolate.h"
#include "tools/kiln-fuzz/Minimize.h"
#include "tools/kiln-fuzz/Program.h"
#include "tools/kiln-fuzz/Runner.h"

namespace kiln::fuzz {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

Tolerance loose() { return {.bitwise = false, .atol = 1e-6, .rtol = 1e-5}; }

// ---- comparison -------------------------------------------------------------------------
TEST(KilnFuzzCompare, BeyondToleranceIsAMismatchWithinIsNot) {
  Tensor want = tensor(std::vector<float>{1.0f, -2.0f, 3.0f});
  EXPECT_THAT(difference(add(want, tensor(std::vector<float>{0, 0, 1e-3f})), want, loose()),
              HasSubstr("1 of 3 elements differ; first at [2]"));
  EXPECT_THAT(difference(add(want, tensor(std::vector<float>{0, 1e-6f, 0})), want, loose()), IsEmpty());
}

TEST(KilnFuzzCompare, BitwiseCatchesOneUlp) {
  Tensor want = tensor(std::vector<float>{1.0f, 2.0f});
  Tensor got = tensor(std::vector<float>{1.0f, std::nextafter(2.0f, 3.0f)});
  EXPECT_THAT(difference(got, want, Tolerance{}), HasSubstr("differ bitwise"));
  EXPECT_THAT(difference(want.clone(), want, Tolerance{}), IsEmpty());
}

TEST(KilnFuzzCompare, NanMatchesNanOnly) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor want = tensor(std::vector<float>{nan, 1.0f});
  EXPECT_THAT(difference(tensor(std::vector<float>{nan, 1.0f}), want, loose()), IsEmpty());
  EXPECT_THAT(difference(tensor(std::vector<float>{0.0f, 1.0f}), want, loose()), Not(IsEmpty()));
  EXPECT_THAT(difference(tensor(std::vector<float>{1.0f, nan}), tensor(std::vector<float>{1.0f, 1.0f}), loose()),
              Not(IsEmpty()));
}

TEST(KilnFuzzCompare, IntegersAndBoolsAreExactWhateverTheTolerance) {
  Tolerance huge{.bitwise = false, .atol = 10, .rtol = 10};
  EXPECT_THAT(difference(tensor(std::vector<int64_t>{1, 3}), tensor(std::vector<int64_t>{1, 2}), huge),
              HasSubstr("first at [1]"));
  EXPECT_THAT(difference(tensor(std::vector<bool>{true}), tensor(std::vector<bool>{false}), huge), Not(IsEmpty()));
  EXPECT_THAT(difference(tensor(std::vector<int64_t>{4}), tensor(std::vector<int64_t>{4}), huge), IsEmpty());
}

TEST(KilnFuzzCompare, ShapeAndDtypeMustMatch) {
  Tensor want = zeros({2, 3});
  EXPECT_THAT(difference(zeros({3, 2}), want, loose()), HasSubstr("where eager gives"));
  EXPECT_THAT(difference(zeros({2, 3}, kFloat64), want, loose()), HasSubstr("where eager gives"));
}

TEST(KilnFuzzCompare, CompiledToleranceFollowsConditioningAndPrecision) {
  manual_seed(1);
  Tensor exact = randn({64}, kFloat64);
  Tensor single = convert(exact, kFloat32);
  // A well-conditioned float32 result: a few ulps pass, a 1e-4 relative error does not.
  Tolerance t = compiledTolerance(single, single, exact, 8, kFloat32);
  EXPECT_THAT(difference(mul(single, 1.0 + 4e-7), single, t), IsEmpty());
  EXPECT_THAT(difference(mul(single, 1.0001), single, t), Not(IsEmpty()));
  // float64 is held to float64's epsilon, unless float32 values fed it.
  Tolerance f64 = compiledTolerance(exact, single, exact, 8, kFloat64);
  EXPECT_THAT(difference(mul(exact, 1.0 + 1e-9), exact, f64), Not(IsEmpty()));
  Tolerance mixed = compiledTolerance(exact, single, exact, 8, kFloat32);
  EXPECT_THAT(difference(mul(exact, 1.0 + 1e-9), exact, mixed), IsEmpty());
  // An ill-conditioned result (the float32 shadow far from float64) allows more.
  Tolerance wide = compiledTolerance(single, add(single, 1e-3), exact, 8, kFloat32);
  EXPECT_THAT(difference(add(single, 1e-3), single, wide), IsEmpty());
  // A gradient that cancels to a small value is judged in units of a larger floor.
  Tensor tiny = mul(single, 1e-6);
  EXPECT_THAT(difference(add(tiny, 1e-9), tiny, compiledTolerance(tiny, tiny, mul(exact, 1e-6), 8, kFloat32)),
              Not(IsEmpty()));
  EXPECT_THAT(difference(add(tiny, 1e-9), tiny, compiledTolerance(tiny, tiny, mul(exact, 1e-6), 8, kFloat32, 10.0)),
              IsEmpty());
}

// ---- programs by hand ---------------------------------------------------------------------
Node leaf(Op op, int slot, Shape shape, bool param = false) {
  Node n;
  n.op = op;
  n.slot = slot;
  n.flag = param;
  n.shape = std::move(shape);
  return n;
}

Node apply(Op op, std::vector<int> args, Shape shape, Shape ints = {}) {
  Node n;
  n.op = op;
  n.args = std::move(args);
  n.shape = std::move(shape);
  n.ints = std::move(ints);
  return n;
}

// layer_norm(tanh(x0) + p, {5}), with p a parameter, trained through a loss.
Program layerNormProgram() {
  Program p;
  p.nodes = {leaf(Op::Input, 0, {3, 5}), leaf(Op::State, 0, {5}, true), apply(Op::Tanh, {0}, {3, 5}),
             apply(Op::Add, {2, 1}, {3, 5}), apply(Op::LayerNorm, {3}, {3, 5}, {5})};
  p.outputs = {4};
  p.backward = true;
  return p;
}

TEST(KilnFuzzProgram, PrintsAParityCaseCallingTheSameOps) {
  const std::string text = printCase(layerNormProgram(), "fuzz_7", "// seed 7\n");
  EXPECT_THAT(text, HasSubstr("// seed 7\nwithState(\"fuzz_7\", {normal({3, 5})},"));
  EXPECT_THAT(text, HasSubstr("normal({5})(seed).requires_grad_();"));
  EXPECT_THAT(text, HasSubstr("optim::SGD(Tensors{s[0]}, optim::SGDOptions(0.1)).zero_grad(true);"));
  EXPECT_THAT(text, HasSubstr("Tensor v2 = tanh(x[0]);\n  Tensor v3 = add(v2, s[0]);\n"));
  EXPECT_THAT(text, HasSubstr("Tensor v4 = layer_norm(v3, {5});"));
  EXPECT_THAT(text, HasSubstr("Tensor loss = sum(mul(v4, s[1]));\n  loss.backward();"));
  EXPECT_THAT(text, HasSubstr("return Tensors{v4, s[0].grad()};\n}),\n"));
  int parens = 0, braces = 0;
  for (char c : text) {
    parens += c == '(' ? 1 : c == ')' ? -1 : 0;
    braces += c == '{' ? 1 : c == '}' ? -1 : 0;
  }
  EXPECT_EQ(parens, 0);
  EXPECT_EQ(braces, 0);
}

TEST(KilnFuzzProgram, EvaluateReturnsOutputsThenGradients) {
  Program p = layerNormProgram();
  Tensors state;
  std::vector<Leaf> leaves = stateLeaves(p);
  ASSERT_EQ(leaves.size(), 2u);  // the parameter and the loss weight
  for (size_t k = 0; k < leaves.size(); ++k) state.push_back(makeLeaf(leaves[k], 900 + k));
  Tensors out = evaluate(p, {makeLeaf(inputLeaves(p)[0], 100)}, state);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].sizes(), Shape({5}));
  EXPECT_TRUE(std::isfinite(sum(out[1]).item<float>()));
}

// ---- runner --------------------------------------------------------------------------------
TEST(KilnFuzzRunner, AValidProgramMatchesOnTheInterpreter) {
  RunOptions options{.configs = {{"INTERP", false}, {"INTERP", true}}};
  EXPECT_THAT(check(layerNormProgram(), options), IsEmpty());
}

// Seed 100192 of the long run: a float64 sum of layer_norm's output cancels to rounding
// noise (1e-17), which the compiled sum rounds differently. Its tolerance scales with the
// terms the sum adds (reducedMag), not with the noise, so it is no mismatch.
TEST(KilnFuzzRunner, ASumThatCancelsIsHeldToItsTermsRounding) {
  const Program p = generate(100192, {.maxOps = 10});
  const std::vector<Facts> facts = analyze(p);
  double largest = 0;
  for (int out : p.outputs) largest = std::max(largest, facts[size_t(out)].reducedMag);
  EXPECT_GE(largest, 1.0);
  EXPECT_THAT(check(p, {.configs = {{"MLIR", true}}}), IsEmpty());
}

// Seed 105959: the gradient of mean(batch_norm(x)) is 0 in exact arithmetic; compiled it
// is -3.6e-12, eager 0. Gradients are held to the rounding of the largest value the
// program holds, since the mean they pass through also cancels.
TEST(KilnFuzzRunner, AGradientThatCancelsIsHeldToTheProgramsValues) {
  EXPECT_THAT(check(generate(105959, {.maxOps = 10}), {.configs = {{"MLIR", false}}}), IsEmpty());
}

// Seed 117964: layer_norm of rows a broadcast made constant; x - mean is rounding that
// 1 / sqrt(eps) magnifies (eager 3.5e-14, compiled 0). The tolerance follows the gain the
// values show, so it is no mismatch; the program is well conditioned otherwise.
TEST(KilnFuzzRunner, ANormalizationOfNearlyConstantRowsIsHeldToItsGain) {
  EXPECT_THAT(check(generate(117964, {.maxOps = 10}), {.configs = {{"MLIR", false}}}), IsEmpty());
}

// Seed 109737: rsqrt of float64 state that a float32 batch_norm updated in place as its
// running statistics carries float32 rounding (2e-10 relative), so the state read after it
// is held to float32's tolerance.
TEST(KilnFuzzRunner, StateABatchNormWritesCarriesItsInputsPrecision) {
  const Program p = generate(109737, {.maxOps = 10});
  const std::vector<Facts> facts = analyze(p);
  bool written = false;
  for (const Node& n : p.nodes)
    if (n.op == Op::BatchNorm && n.args.size() > 1) written = written || facts[size_t(n.args[1])].single;
  EXPECT_TRUE(written);
  EXPECT_THAT(check(p, {.configs = {{"MLIR", false}}}), IsEmpty());
}

// Seed 102484: a conversion keeps a permuted operand's layout, so the generator must not
// view() it; the analysis says it may not be contiguous.
TEST(KilnFuzzAnalysis, AConversionKeepsItsOperandsLayout) {
  Program p;
  p.nodes = {leaf(Op::Input, 0, {3, 5}), apply(Op::Transpose, {0}, {5, 3}, {0, 1}),
             apply(Op::Convert, {1}, {5, 3})};
  p.nodes[2].dtype = kFloat64;
  p.outputs = {2};
  EXPECT_FALSE(analyze(p)[2].contiguous);
  EXPECT_THAT(check(generate(102484, {.maxOps = 10}), {.configs = {{"INTERP", false}}}), IsEmpty());
}

TEST(KilnFuzzRunner, AProgramEagerRejectsIsReportedAsInvalid) {
  Program p;  // view() of a transposed tensor: eager refuses
  p.nodes = {leaf(Op::Input, 0, {3, 5}), apply(Op::Transpose, {0}, {5, 3}, {0, 1}),
             apply(Op::View, {1}, {15}, {15})};
  p.outputs = {2};
  std::vector<Problem> problems = check(p, {.configs = {{"INTERP", false}}});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, "invalid");
  EXPECT_THAT(problems[0].message, HasSubstr("not contiguous"));
}

// ---- state written in place ------------------------------------------------------------------
Node update(int state, int value, Shape shape, InPlaceKind kind, double weight) {
  Node n = apply(Op::InPlace, {state, value}, std::move(shape), {int64_t(kind)});
  n.scalar = weight;
  return n;
}

// The minimized seed 800097 of --in-place (found again with 5ac2822's fix reverted):
// s.sub_(s - (s * 0.5).transpose(1, 2), 0.25), then a sum of s. Its transposed read of its
// own state must not be planned in place.
Program ownTransposeProgram() {
  Program p;
  p.nodes = {leaf(Op::State, 0, {3, 11, 11}), apply(Op::MulScalar, {0}, {3, 11, 11}),
             apply(Op::Transpose, {1}, {3, 11, 11}, {1, 2}), update(0, 2, {3, 11, 11}, InPlaceKind::TowardBy, 0.25),
             apply(Op::Sum, {0}, {11, 11}, {0})};
  p.nodes[1].scalar = 0.5;
  p.outputs = {4};
  return p;
}

TEST(KilnFuzzProgram, AStateUpdatePrintsAndRunsAsAModulesBufferWrite) {
  const Program p = ownTransposeProgram();
  EXPECT_THAT(printCase(p, "u", ""), HasSubstr("Tensor v3 = s[0].sub_(sub(s[0], v2.detach()), 0.25);"));
  Program average = p, copy = p;
  average.nodes[3].ints = {int64_t(InPlaceKind::Average)};
  copy.nodes[3].ints = {int64_t(InPlaceKind::Copy)};
  EXPECT_THAT(printCase(average, "u", ""), HasSubstr("Tensor v3 = s[0].mul_(0.75).add_(v2.detach(), 0.25);"));
  EXPECT_THAT(printCase(copy, "u", ""), HasSubstr("Tensor v3 = s[0].copy_(v2.detach());"));
  // Evaluating writes the state: s - 0.25 (s - 0.5 s^T), and the later sum reads it.
  Tensor s = makeLeaf(stateLeaves(p)[0], 5);
  Tensor before = s.clone();
  Tensors out = evaluate(p, {}, {s});
  Tensor want = sub(before, mul(sub(before, mul(before, 0.5).transpose(1, 2)), 0.25));
  EXPECT_THAT(difference(s, want, loose()), IsEmpty());
  EXPECT_THAT(difference(out[0], sum(want, {0}), loose()), IsEmpty());
}

// An earlier value written in place: readers before the write see the old values, readers
// after it the new ones, in eager and in every compiled program.
TEST(KilnFuzzRunner, AValueWrittenInPlaceIsReadOldBeforeAndNewAfter) {
  Program p;
  p.nodes = {leaf(Op::Input, 0, {4, 4}), apply(Op::MulScalar, {0}, {4, 4}), apply(Op::Exp, {1}, {4, 4}),
             apply(Op::Sin, {1}, {4, 4}), apply(Op::Transpose, {3}, {4, 4}, {0, 1}),
             update(1, 4, {4, 4}, InPlaceKind::Average, 0.5), apply(Op::Add, {1, 2}, {4, 4})};
  p.nodes[1].scalar = 0.5;
  p.outputs = {6};
  ASSERT_TRUE(wellConditioned(p));
  Tensor x = makeLeaf(inputLeaves(p)[0], 3);
  Tensor half = mul(x, 0.5);
  Tensor want = add(add(mul(half, 0.5), mul(sin(half).transpose(0, 1), 0.5)), exp(half));
  EXPECT_THAT(difference(evaluate(p, {x}, {})[0], want, loose()), IsEmpty());
  EXPECT_THAT(check(p, {.configs = {{"INTERP", false}, {"MLIR", false}, {"MLIR", true}}}), IsEmpty());
  p.nodes[5].args[0] = 0;  // the input itself, which a minimizer's cut could make: refused
  EXPECT_FALSE(wellConditioned(p));
}

TEST(KilnFuzzRunner, AStateUpdatedFromItsOwnTransposeMatchesEager) {
  EXPECT_THAT(check(ownTransposeProgram(), {.configs = {{"INTERP", false}, {"MLIR", false}, {"MLIR", true}}}),
              IsEmpty());
}

// Seed 800045 of --in-place: a state copied from a parameter's value is no path for its
// gradient (the value is detached), so the program has no gradients and no backward pass.
TEST(KilnFuzzProgram, AnUpdatesValueCarriesNoGradient) {
  Program p;
  p.nodes = {leaf(Op::State, 0, {3, 4}, true), leaf(Op::State, 1, {3, 4}), apply(Op::Tanh, {0}, {3, 4}),
             update(1, 2, {3, 4}, InPlaceKind::Copy, 0)};
  p.outputs = {3};
  p.backward = true;
  EXPECT_THAT(gradParams(p), IsEmpty());
  EXPECT_FALSE(compact(p).backward);
  p.nodes.push_back(apply(Op::Mul, {3, 0}, {3, 4}));  // the state times the parameter: a path
  p.outputs = {4};
  EXPECT_EQ(gradParams(p), std::vector<int>{0});
}

// ---- generator -----------------------------------------------------------------------------
TEST(KilnFuzzGenerator, TheSameSeedGivesTheSameProgram) {
  GenOptions options;
  EXPECT_EQ(printCase(generate(42, options), "a", ""), printCase(generate(42, options), "a", ""));
  EXPECT_NE(printCase(generate(42, options), "a", ""), printCase(generate(43, options), "a", ""));
}

TEST(KilnFuzzGenerator, ProgramsAreWellConditionedAndEagerRunsThem) {
  GenOptions options{.maxOps = 12};
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Program p = generate(seed, options);
    ASSERT_TRUE(wellConditioned(p)) << printCase(p, "seed_" + std::to_string(seed), "");
    std::vector<Problem> problems = check(p, {.configs = {}, .calls = 1});
    EXPECT_THAT(problems, IsEmpty()) << problems[0].message << "\n" << printCase(p, "s", "");
  }
}

// --in-place: states and earlier values written in place by every kind of write, some from
// their own values moved (transposed or reduced), each value fitting its target and sharing
// no memory with it; never a target a view still reads (jit::trace rejects that) nor one
// autograd saved (eager rejects that); well conditioned and run by eager. Without it, none.
TEST(KilnFuzzGenerator, InPlaceWritesAreOnesEagerAndTraceAllow) {
  std::set<int64_t> kinds;
  int states = 0, values = 0, ownMoved = 0;
  for (uint64_t seed = 0; seed < 80; ++seed) {
    const Program p = generate(seed, {.maxOps = 12, .inPlace = true});
    const std::string text = printCase(p, "seed_" + std::to_string(seed), "");
    ASSERT_TRUE(wellConditioned(p)) << text;
    const std::vector<std::vector<bool>> deps = dependencies(p);
    const std::vector<Facts> facts = analyze(p);
    for (size_t u = 0; u < p.nodes.size(); ++u) {
      const Node& n = p.nodes[u];
      if (n.op != Op::InPlace) continue;
      kinds.insert(n.ints[0]);
      const int t = n.args[0], v = n.args[1];
      const Node& target = p.nodes[size_t(t)];
      const Node& value = p.nodes[size_t(v)];
      if (target.op == Op::State) {
        ++states;
        EXPECT_FALSE(target.flag) << text;
      } else {
        ++values;
        EXPECT_FALSE(mayShareStorage(target.op)) << text;
        EXPECT_LE(facts[size_t(t)].lo, -1) << text;
        EXPECT_GE(facts[size_t(t)].hi, 1) << text;
      }
      EXPECT_EQ(n.shape, target.shape) << text;
      EXPECT_EQ(value.dtype, target.dtype) << text;
      EXPECT_FALSE(mayShareStorage(value.op)) << text;
      // The value broadcasts to the target's shape.
      ASSERT_LE(value.shape.size(), target.shape.size()) << text;
      for (size_t d = 0; d < value.shape.size(); ++d) {
        const int64_t vd = value.shape[value.shape.size() - 1 - d], sd = target.shape[target.shape.size() - 1 - d];
        EXPECT_TRUE(vd == sd || vd == 1) << text;
      }
      for (size_t m = 0; m < u; ++m) {
        const Node& earlier = p.nodes[m];
        if (!isLeaf(earlier.op) && mayShareStorage(earlier.op) && earlier.op != Op::InPlace) {
          EXPECT_NE(earlier.args[0], t) << "a view of the target before it is written\n" << text;
        }
        if (!p.backward || isLeaf(earlier.op) || !deps[m][size_t(t)]) continue;
        for (size_t q = 0; q < p.nodes.size(); ++q)
          EXPECT_FALSE(deps[m][q] && isParam(p.nodes[q])) << "a target autograd saved, then written\n" << text;
      }
      // The value is the target's own, moved: reached from it through a transpose or a
      // reduction.
      for (size_t m = size_t(t) + 1; m < size_t(v) + 1; ++m) {
        const Node& moved = p.nodes[m];
        if ((moved.op == Op::Transpose || moved.op == Op::Mean || moved.op == Op::Amax) && deps[m][size_t(t)] &&
            deps[size_t(v)][m]) {
          ++ownMoved;
          break;
        }
      }
    }
    std::vector<Problem> problems = check(p, {.configs = {}, .calls = 2});
    EXPECT_THAT(problems, IsEmpty()) << problems[0].message << "\n" << text;
    for (const Node& n : generate(seed, {.maxOps = 12}).nodes) EXPECT_NE(n.op, Op::InPlace);
  }
  EXPECT_EQ(kinds.size(), 3u);
  EXPECT_GE(states, 20);
  EXPECT_GE(values, 3);
  EXPECT_GE(ownMoved, 3);
}

// --wide-dims: programs with rows of 128 and 133 elements (HALIDE's eight-vector rows
// start at 128 floats), still well conditioned and run by eager; without it none.
TEST(KilnFuzzGenerator, WideDimsReachRowsOf128AndMore) {
  int wide = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    for (bool wideDims : {false, true}) {
      Program p = generate(seed, {.maxOps = 12, .wideDims = wideDims});
      const std::string text = printCase(p, "seed_" + std::to_string(seed), "");
      ASSERT_TRUE(wellConditioned(p)) << text;
      // 133 = 7 x 19 is no product of the default sizes (reshapes and concats merge dims).
      for (const Node& n : p.nodes)
        if (!wideDims) {
          EXPECT_EQ(std::count(n.shape.begin(), n.shape.end(), 133), 0) << text;
        }
      if (wideDims && std::any_of(p.nodes.begin(), p.nodes.end(), [](const Node& n) {
            return n.op == Op::Input && !n.shape.empty() && n.shape.back() >= 128;
          }))
        ++wide;
      if (wideDims) {
        std::vector<Problem> problems = check(p, {.configs = {}, .calls = 1});
        EXPECT_THAT(problems, IsEmpty()) << problems[0].message << "\n" << text;
      }
    }
  }
  EXPECT_GE(wide, 5);
}

// What batchPrograms() saw of the programs it generated.
struct BatchStats {
  int followed = 0;      // programs with an output that follows B or S
  int batchNotFirst = 0;  // inputs whose B is not dim 0
  int withSeq = 0;        // programs with a second size S
  int sOnly = 0;          // inputs that hold S and not B
};

// Batch programs of `options` (seeds 0..39): each input holds B or S at most once each and
// nothing else dynamic, state is fixed, the sizes recorded as following B or S track them
// through the ops, and eager runs each program at every size the dynamic configs call.
BatchStats batchPrograms(GenOptions options) {
  BatchStats stats;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    const Program p = generate(seed, options);
    const std::string text = printCase(p, "seed_" + std::to_string(seed), "");
    EXPECT_GE(p.batch, 3) << text;
    EXPECT_TRUE(wellConditioned(p)) << text;
    EXPECT_GE(sizeSource(p, 1).first, 0) << text;  // an input holds B
    if (p.seq > 0) ++stats.withSeq;
    EXPECT_FALSE(inputLeaves(p).empty()) << text;
    for (const Node& n : p.nodes) {
      EXPECT_EQ(n.batch.size(), n.shape.size()) << text;
      if (n.batch.size() != n.shape.size()) return stats;
      const int64_t fixed = std::count(n.batch.begin(), n.batch.end(), 0);
      if (n.op == Op::Input) {
        EXPECT_TRUE(isInputBatch(n.batch)) << text;
        if (options.dims == GenOptions::Dims::First) {
          EXPECT_EQ(n.batch[0], 1) << text;
          EXPECT_EQ(fixed, int64_t(n.shape.size()) - 1) << text;
        }
        stats.batchNotFirst += std::find(n.batch.begin(), n.batch.end(), 1) - n.batch.begin() > 0;
        stats.sOnly += std::count(n.batch.begin(), n.batch.end(), 1) == 0;
      }
      if (n.op == Op::State) {
        EXPECT_EQ(fixed, int64_t(n.shape.size())) << text;
      }
      for (size_t d = 0; d < n.shape.size(); ++d) {
        if (followsS(n.batch[d])) {
          EXPECT_GT(p.seq, 0) << text;
        }
        if (follows(n.batch[d])) {
          EXPECT_EQ(n.shape[d], sizeAt(n.batch[d], p.batch, p.seq)) << text;
        }
      }
    }
    stats.followed += std::any_of(p.outputs.begin(), p.outputs.end(), [&](int o) {
      const Shape& b = p.nodes[size_t(o)].batch;
      return std::any_of(b.begin(), b.end(), follows);
    });
    std::vector<Problem> problems = check(p, {.configs = {}});  // eager at every call's sizes
    EXPECT_THAT(problems, IsEmpty()) << problems[0].message << "\n" << text;
  }
  return stats;
}

TEST(KilnFuzzGenerator, BatchProgramsKeepTheBatchAsEveryInputsDim0) {
  const BatchStats stats = batchPrograms({.maxOps = 12, .batch = true});
  EXPECT_GE(stats.followed, 20);  // most outputs still carry the batch
  EXPECT_EQ(stats.batchNotFirst, 0);
  EXPECT_EQ(stats.withSeq, 0);
}

TEST(KilnFuzzGenerator, BatchProgramsWithAnyDynamicDimPutTheBatchElsewhere) {
  const BatchStats stats = batchPrograms({.maxOps = 12, .batch = true, .dims = GenOptions::Dims::Any});
  EXPECT_GE(stats.followed, 20);
  EXPECT_GE(stats.batchNotFirst, 20);
  EXPECT_EQ(stats.withSeq, 0);
}

TEST(KilnFuzzGenerator, BatchProgramsWithTwoDynamicSizesHoldBothInTheirInputs) {
  const BatchStats stats = batchPrograms({.maxOps = 12, .batch = true, .dims = GenOptions::Dims::Two});
  EXPECT_GE(stats.followed, 20);
  EXPECT_GE(stats.withSeq, 20);
  EXPECT_GE(stats.sOnly, 1);
}

// The Any and Two options draw ops the dim-0 batch programs do not have: a matmul that
// contracts over the batch, a cat along it and a slice of it, each valid at every size.
TEST(KilnFuzzGenerator, AnyDynamicDimContractsConcatenatesAndSlicesAlongTheBatch) {
  bool contracted = false, concatenated = false, sliced = false;
  for (uint64_t seed = 0; seed < 300 && !(contracted && concatenated && sliced); ++seed) {
    const Program p = generate(seed, {.maxOps = 8, .batch = true, .dims = GenOptions::Dims::Any});
    for (const Node& n : p.nodes) {
      const Node& a = p.nodes[size_t(n.args.empty() ? 0 : n.args[0])];
      if (n.args.empty() || a.batch.empty()) continue;
      const size_t d = n.ints.empty() ? 0 : size_t(n.ints[0] < 0 ? n.ints[0] + int64_t(a.shape.size()) : n.ints[0]);
      contracted |= n.op == Op::Matmul && follows(a.batch.back());
      concatenated |= n.op == Op::Cat && follows(a.batch[d]);
      sliced |= n.op == Op::Slice && follows(a.batch[d]);
    }
  }
  EXPECT_TRUE(contracted);
  EXPECT_TRUE(concatenated);
  EXPECT_TRUE(sliced);
}

// x [B, 6] reshaped to [3B, 2] and summed over dim 1: the sizes that follow the batch
// scale with it, and the printed case computes them from x[0].size(0).
Program batchReshapeProgram() {
  Program p;
  p.batch = 4;
  p.nodes = {leaf(Op::Input, 0, {4, 6}), apply(Op::Reshape, {0}, {12, 2}, {12, 2}), apply(Op::Tanh, {1}, {12, 2}),
             apply(Op::Sum, {2}, {12}, {1})};
  p.nodes[0].batch = {1, 0};
  p.nodes[1].batch = p.nodes[2].batch = {3, 0};
  p.nodes[3].batch = {3};
  p.outputs = {3};
  return p;
}

TEST(KilnFuzzProgram, ABatchProgramScalesItsSizesWithTheBatch) {
  const Program p = atBatch(batchReshapeProgram(), 13);
  EXPECT_EQ(p.batch, 13);
  EXPECT_EQ(p.nodes[0].shape, Shape({13, 6}));
  EXPECT_EQ(p.nodes[1].ints, Shape({39, 2}));
  EXPECT_EQ(p.nodes[3].shape, Shape({39}));
  const std::string text = printCase(batchReshapeProgram(), "b", "");
  EXPECT_THAT(text, HasSubstr("const int64_t B = x[0].size(0);"));
  EXPECT_THAT(text, HasSubstr("Tensor v1 = x[0].reshape({B * 3, 2});"));
  EXPECT_EQ(dynamicBatches(p), std::vector<CallSizes>({{13}, {26}, {2}, {2}, {9}, {9}, {13}, {13}, {61}, {61}, {26}, {13}}));
}

// x [B, S] (B = 3, S = 5) transposed and reshaped to [S, B] by sizes read from x, and
// summed over S.
Program twoSizesProgram() {
  Program p;
  p.batch = 3;
  p.seq = 5;
  p.nodes = {leaf(Op::Input, 0, {3, 5}), apply(Op::Transpose, {0}, {5, 3}, {0, 1}),
             apply(Op::Reshape, {1}, {5, 3}, {5, 3}), apply(Op::Sum, {2}, {3}, {0})};
  p.nodes[0].batch = {1, -1};
  p.nodes[1].batch = p.nodes[2].batch = {-1, 1};
  p.nodes[3].batch = {1};
  p.outputs = {2, 3};
  return p;
}

TEST(KilnFuzzProgram, ABatchProgramScalesEachSizeWithItsOwnDynamicSize) {
  const Program p = atBatch(twoSizesProgram(), 7, 2);
  EXPECT_EQ(p.batch, 7);
  EXPECT_EQ(p.seq, 2);
  EXPECT_EQ(p.nodes[0].shape, Shape({7, 2}));
  EXPECT_EQ(p.nodes[2].ints, Shape({2, 7}));
  EXPECT_EQ(p.nodes[3].shape, Shape({7}));
  const std::string text = printCase(twoSizesProgram(), "b", "");
  EXPECT_THAT(text, HasSubstr("const int64_t B = x[0].size(0);"));
  EXPECT_THAT(text, HasSubstr("const int64_t S = x[0].size(1);"));
  EXPECT_THAT(text, HasSubstr("Tensor v2 = v1.reshape({S, B});"));
  EXPECT_EQ(dynamicBatches(twoSizesProgram()), std::vector<CallSizes>({{3, 5}, {6, 15}, {2, 5}, {2, 5}, {3, 9}, {3, 9},
                                                                      {13, 2}, {13, 2}, {61, 61}, {61, 61}, {6, 15}, {3, 5}}));
  EXPECT_EQ(sizeSource(twoSizesProgram(), -1), std::make_pair(0, int64_t(1)));
  EXPECT_TRUE(isInputBatch({1, -1}));
  EXPECT_TRUE(isInputBatch({0, -1, 0}));
  EXPECT_FALSE(isInputBatch({1, 1}));  // B twice
  EXPECT_FALSE(isInputBatch({2, 0}));  // 2B
  EXPECT_FALSE(isInputBatch({0, 0}));  // fixed: state
}

// The dynamic configs trace at the program's batch and twice it, where the recordings
// merge, and then serve 2, 9, 13 and 61 from the one dynamic program (num_traces() stays 1,
// else the runner reports "retraced").
TEST(KilnFuzzRunner, ABatchProgramMergesAndMatchesEagerAtEveryBatchSize) {
  DynamicCounts counts;
  RunOptions options{.configs = {{"INTERP", false, true}, {"INTERP", true, true}, {"INTERP", false, false}}};
  EXPECT_THAT(check(batchReshapeProgram(), options, &counts), IsEmpty());
  EXPECT_EQ(counts.merged, 2);
  EXPECT_EQ(counts.stayedStatic, 0);
}

// Two dynamic sizes: the recordings at (3, 5) and (6, 15) merge, and the one dynamic
// program serves B and S changed alone and together.
TEST(KilnFuzzRunner, AProgramOfTwoDynamicSizesMergesAndMatchesEagerAtEverySize) {
  DynamicCounts counts;
  RunOptions options{.configs = {{"INTERP", false, true}, {"INTERP", true, true}}};
  EXPECT_THAT(check(twoSizesProgram(), options, &counts), IsEmpty());
  EXPECT_EQ(counts.merged, 2);
  EXPECT_EQ(counts.stayedStatic, 0);
}

TEST(KilnFuzzRunner, ADynamicConfigNeedsABatchProgram) {
  std::vector<Problem> problems = check(layerNormProgram(), {.configs = {{"INTERP", false, true}}});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].kind, "invalid");
  EXPECT_THAT(problems[0].message, HasSubstr("batch program"));
}

// ---- minimizer -----------------------------------------------------------------------------
TEST(KilnFuzzMinimize, KeepsOnlyWhatTheFailureNeeds) {
  // "Fails" while the program still holds a tanh: everything else can go.
  auto hasTanh = [](const Program& p) {
    for (const Node& n : p.nodes)
      if (n.op == Op::Tanh) return true;
    return false;
  };
  Program small = minimize(layerNormProgram(), hasTanh, 100);
  EXPECT_EQ(countOps(small), 1);
  EXPECT_FALSE(small.backward);
  EXPECT_THAT(printCase(small, "m", ""), HasSubstr("Tensor v1 = tanh(x[0]);"));
}

// A batch_norm whose output nothing reads still writes its running statistics, which a
// later op reads: compacting keeps it (seed 109737's printed reproducer lacked it).
TEST(KilnFuzzMinimize, CompactKeepsABatchNormWhoseStatisticsAreRead) {
  Program p;
  p.nodes = {leaf(Op::Input, 0, {4, 3}), leaf(Op::State, 0, {3}), leaf(Op::State, 1, {3}),
             apply(Op::BatchNorm, {0, 1, 2}, {4, 3}), apply(Op::Abs, {1}, {3})};
  p.outputs = {4};
  const Program c = compact(p);
  ASSERT_EQ(c.nodes.size(), 5u);
  EXPECT_EQ(c.nodes[3].op, Op::BatchNorm);
  p.nodes[4].args = {0};  // reads the input instead: the batch_norm is dead
  p.nodes[4].shape = {4, 3};
  EXPECT_EQ(compact(p).nodes.size(), 2u);
}

// An update whose output nothing reads still writes its state, which a later op reads:
// compacting keeps it.
TEST(KilnFuzzMinimize, CompactKeepsAStateUpdateALaterOpReads) {
  Program p;
  p.nodes = {leaf(Op::Input, 0, {4}), leaf(Op::State, 0, {4}), apply(Op::Tanh, {0}, {4}),
             update(1, 2, {4}, InPlaceKind::Average, 0.5), apply(Op::Abs, {1}, {4})};
  p.outputs = {4};
  const Program c = compact(p);
  ASSERT_EQ(c.nodes.size(), 5u);
  EXPECT_EQ(c.nodes[3].op, Op::InPlace);
  p.nodes[4].args = {0};  // reads the input instead: the update is dead
  EXPECT_EQ(compact(p).nodes.size(), 2u);
}

// Cutting a batch program's value: one of fixed shape becomes state, one that holds the
// batch once an input wherever the batch is (the transpose's dim 1 here).
TEST(KilnFuzzMinimize, ABatchProgramIsCutIntoInputsThatHoldTheBatch) {
  Program p = batchReshapeProgram();
  p.nodes.push_back(apply(Op::Transpose, {0}, {6, 4}, {0, 1}));
  p.nodes[4].batch = {0, 1};
  p.nodes.push_back(apply(Op::Sum, {0}, {6}, {0}));
  p.nodes[5].batch = {0};
  p.nodes.push_back(apply(Op::Relu, {4}, {6, 4}));
  p.nodes[6].batch = {0, 1};
  p.outputs = {3, 5, 6};
  auto leafOps = [](const Program& m) {
    std::string ops;
    for (const Node& n : m.nodes)
      if (isLeaf(n.op)) ops += n.op == Op::Input ? "i" : "s";
    return ops;
  };
  // "Fails" while the program holds a relu and a value of shape {6} (the sum or a cut of it).
  auto fails = [](const Program& m) {
    bool relu = false, six = false;
    for (const Node& n : m.nodes) relu = relu || n.op == Op::Relu, six = six || n.shape == Shape({6});
    return relu && six;
  };
  const Program small = minimize(p, fails, 200);
  EXPECT_EQ(small.batch, 4);
  // The transpose as an input [6, B], and the sum as state.
  ASSERT_EQ(leafOps(small), "is") << printCase(small, "m", "");
  EXPECT_EQ(small.nodes[0].shape, Shape({6, 4}));
  EXPECT_EQ(small.nodes[0].batch, Shape({0, 1}));
  for (const Node& n : small.nodes) EXPECT_NE(n.op, Op::Sum);
  for (const Node& n : small.nodes) EXPECT_NE(n.op, Op::Transpose);
}

TEST(KilnFuzzMinimize, CompactRenumbersLeaves) {
  Program p = layerNormProgram();
  p.outputs = {2};  // tanh(x0) alone: the parameter and the rest are dead
  Program c = compact(p);
  EXPECT_EQ(c.nodes.size(), 2u);
  EXPECT_FALSE(c.backward);  // no parameter reaches the output
}

// ---- forked children -----------------------------------------------------------------------
TEST(KilnFuzzIsolate, ReportsPassFailCrashTimeoutAndHang) {
  EXPECT_EQ(runInChild([] { return std::string(); }, 10).kind, ChildOutcome::Passed);
  ChildOutcome noted = runInChild([] { return kPassNote + std::string("3 1"); }, 10);
  EXPECT_EQ(noted.kind, ChildOutcome::Passed);
  EXPECT_EQ(noted.text, "3 1");
  ChildOutcome failed = runInChild([] { return std::string("mismatch"); }, 10);
  EXPECT_EQ(failed.kind, ChildOutcome::Failed);
  EXPECT_EQ(failed.text, "mismatch");
  // The default action, as without a sanitizer: ASan's SEGV handler would exit with 1.
  ChildOutcome crashed = runInChild([]() -> std::string {
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
    return "";
  }, 10);
  EXPECT_EQ(crashed.kind, ChildOutcome::Crashed);
  EXPECT_THAT(crashed.text, HasSubstr("signal 11"));
  // How a sanitizer ends a child: status 1 and no report. A crash, not a mismatch.
  ChildOutcome sanitized = runInChild([]() -> std::string { _exit(1); }, 10);
  EXPECT_EQ(sanitized.kind, ChildOutcome::Crashed);
  EXPECT_EQ(sanitized.text, "exited with status 1");
  // The limit is CPU time: a child that spins past it is ended; one that waits longer than
  // it in wall time (as a loaded machine makes any child do) is not, up to ten times it.
  // The spinning child's wall limit is 600 s, not 10, so that a loaded machine, which may
  // take longer than 10 s to give it 1 s of CPU, cannot end it first.
  ChildOutcome spun = runInChild([] {
    for (uint64_t i = 0;; ++i) asm volatile("" : "+r"(i));  // a loop the compiler keeps
    return std::string();
  }, 1, 600);
  EXPECT_EQ(spun.kind, ChildOutcome::Crashed);
  EXPECT_EQ(spun.text, "timed out: more than 1 s of CPU time");
  EXPECT_EQ(runInChild([] { sleep(2); return std::string(); }, 1).kind, ChildOutcome::Passed);
  EXPECT_EQ(runInChild([] { sleep(1); return std::string(); }, 0).kind, ChildOutcome::Passed);  // 0: none
  ChildOutcome hung = runInChild([] { sleep(30); return std::string(); }, 1);
  EXPECT_EQ(hung.kind, ChildOutcome::Crashed);
  EXPECT_EQ(hung.text, "hung: no result after 10 s of wall time");
}

}  // namespace
}  // namespace kiln::fuzz
