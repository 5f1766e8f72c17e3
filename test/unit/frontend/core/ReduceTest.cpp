// Reductions: sum/mean/amax/amin/prod over dims with keepdim and negative dims, their
// dtype rules and errors, empty and 0-d inputs, large inputs, and sum_to.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "frontend/core/kernels/Reduce.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/core/ExpectError.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

using golden::valuesAsDouble;
using golden::valuesAsInt64;
using kiln::testing::at;
using kiln::testing::ramp;
using kiln::testing::spreadTensor;
using ::testing::ElementsAre;

using D = std::vector<double>;
using I = std::vector<int64_t>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// x[i][j][k] = 12i + 4j + k, shape [2, 3, 4].
Tensor x234(DType dtype = kFloat64) { return ramp({2, 3, 4}, dtype); }

TEST(ReduceTest, SumOverAllDims) {
  Tensor s = sum(x234());
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.dtype(), kFloat64);
  EXPECT_EQ(s.item<double>(), 276.0);
  Tensor k = sum(x234(), {}, true);
  EXPECT_THAT(k.sizes(), ElementsAre(1, 1, 1));
  EXPECT_EQ(k.item<double>(), 276.0);
}

TEST(ReduceTest, SumOverOneDim) {
  Tensor s1 = sum(x234(), {1});
  EXPECT_THAT(s1.sizes(), ElementsAre(2, 4));
  EXPECT_EQ(valuesAsDouble(s1), (D{12, 15, 18, 21, 48, 51, 54, 57}));
  Tensor s1k = sum(x234(), {1}, true);
  EXPECT_THAT(s1k.sizes(), ElementsAre(2, 1, 4));
  EXPECT_EQ(valuesAsDouble(s1k), valuesAsDouble(s1));
  EXPECT_EQ(valuesAsDouble(sum(x234(), {0})), valuesAsDouble(add(ramp({3, 4}, kFloat64),
                                                                  ramp({3, 4}, kFloat64, 12))));
  EXPECT_EQ(valuesAsDouble(sum(x234(), {2})), (D{6, 22, 38, 54, 70, 86}));
}

TEST(ReduceTest, SumOverSeveralAndNegativeDims) {
  Tensor s = sum(x234(), {0, 2});
  EXPECT_THAT(s.sizes(), ElementsAre(3));
  EXPECT_EQ(valuesAsDouble(s), (D{60, 92, 124}));
  EXPECT_EQ(valuesAsDouble(sum(x234(), {2, 0})), (D{60, 92, 124}));  // order does not matter
  EXPECT_EQ(valuesAsDouble(sum(x234(), {-1, -3})), (D{60, 92, 124}));
  EXPECT_THAT(sum(x234(), {-1, 0}, true).sizes(), ElementsAre(1, 3, 1));
  EXPECT_EQ(valuesAsDouble(sum(x234(), {-1})), (D{6, 22, 38, 54, 70, 86}));
}

TEST(ReduceTest, Mean) {
  EXPECT_EQ(mean(x234()).item<double>(), 11.5);
  EXPECT_EQ(valuesAsDouble(mean(x234(), {2})), (D{1.5, 5.5, 9.5, 13.5, 17.5, 21.5}));
  Tensor m = mean(x234(), {0, 1}, true);
  EXPECT_THAT(m.sizes(), ElementsAre(1, 1, 4));
  EXPECT_EQ(valuesAsDouble(m), (D{10, 11, 12, 13}));
  EXPECT_EQ(mean(x234(kFloat32)).dtype(), kFloat32);
  EXPECT_EQ(mean(x234(kFloat16), {0}).dtype(), kFloat16);
}

TEST(ReduceTest, AmaxAmin) {
  Tensor x = tensor(std::vector<double>{3, -1, 7, 2, 9, -4}, Shape{2, 3});
  EXPECT_EQ(amax(x).item<double>(), 9);
  EXPECT_EQ(amin(x).item<double>(), -4);
  EXPECT_EQ(valuesAsDouble(amax(x, {1})), (D{7, 9}));
  EXPECT_EQ(valuesAsDouble(amin(x, {0})), (D{2, -1, -4}));
  EXPECT_THAT(amax(x, {-1}, true).sizes(), ElementsAre(2, 1));
  EXPECT_EQ(valuesAsDouble(amin(x, {-2}, true)), (D{2, -1, -4}));
}

TEST(ReduceTest, AmaxAminPropagateNaN) {
  Tensor x = tensor(std::vector<double>{1, kNaN, 3, kNaN, 2, 0}, Shape{2, 3});
  std::vector<double> mx = valuesAsDouble(amax(x, {1}));
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  EXPECT_TRUE(std::isnan(amin(x).item<double>()));
  std::vector<double> col = valuesAsDouble(amax(x, {0}));
  EXPECT_TRUE(std::isnan(col[0]) && std::isnan(col[1]));
  EXPECT_EQ(col[2], 3);
}

TEST(ReduceTest, Prod) {
  Tensor x = tensor(std::vector<double>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  EXPECT_EQ(prod(x).item<double>(), 720);
  EXPECT_EQ(valuesAsDouble(prod(x, {1})), (D{6, 120}));
  EXPECT_EQ(valuesAsDouble(prod(x, {0}, true)), (D{4, 10, 18}));
}

// ---- dtypes -------------------------------------------------------------------------------

TEST(ReduceTest, IntegerAndBoolSumsWidenToInt64) {
  Tensor i = tensor(std::vector<int32_t>{2000000000, 2000000000, -5});
  Tensor s = sum(i);
  EXPECT_EQ(s.dtype(), kInt64);
  EXPECT_EQ(s.item<int64_t>(), 3999999995);  // no int32 overflow
  Tensor b = tensor(std::vector<bool>{true, false, true, true});
  EXPECT_EQ(sum(b).dtype(), kInt64);
  EXPECT_EQ(sum(b).item<int64_t>(), 3);
  EXPECT_EQ(sum(ramp({2, 3}, kInt32), {1}).dtype(), kInt64);
  EXPECT_EQ(valuesAsInt64(sum(ramp({2, 3}, kInt32), {1})), (I{3, 12}));
  const int64_t big = (int64_t(1) << 53) + 1;
  EXPECT_EQ(sum(tensor(std::vector<int64_t>{big, 2})).item<int64_t>(), big + 2);  // exact
}

TEST(ReduceTest, IntegerProdWidensToInt64) {
  Tensor i = tensor(std::vector<int32_t>{100000, 100000, 3});
  EXPECT_EQ(prod(i).dtype(), kInt64);
  EXPECT_EQ(prod(i).item<int64_t>(), 30000000000);
}

TEST(ReduceTest, AmaxAminKeepIntegerDTypes) {
  Tensor i = tensor(std::vector<int32_t>{4, -9, 7});
  EXPECT_EQ(amax(i).dtype(), kInt32);
  EXPECT_EQ(amax(i).item<int64_t>(), 7);
  EXPECT_EQ(amin(i).item<int64_t>(), -9);
  const int64_t big = (int64_t(1) << 62) + 1;
  EXPECT_EQ(amax(tensor(std::vector<int64_t>{big, big - 1})).item<int64_t>(), big);
}

TEST(ReduceTest, FloatSumsKeepTheirDType) {
  EXPECT_EQ(sum(x234(kFloat32)).dtype(), kFloat32);
  EXPECT_EQ(sum(x234(kBFloat16)).dtype(), kBFloat16);
  EXPECT_EQ(sum(x234(kBFloat16)).item<float>(), 276.0f);
}

// torch.mean of an integer tensor: "mean(): could not infer output dtype. Input dtype
// must be either a floating point or complex dtype". The message names mean, not the
// primitive it is recorded as.
TEST(ReduceTest, MeanOfIntegersIsTypeError) {
  EXPECT_KILN_ERROR_HAS(mean(ramp({3}, kInt64)), TypeError, "int64");
  EXPECT_KILN_ERROR_HAS(mean(ramp({3}, kInt64)), TypeError, "kiln::mean: ");
  EXPECT_THROW(mean(tensor(std::vector<bool>{true})), TypeError);
}

// ---- errors -------------------------------------------------------------------------------

TEST(ReduceTest, DuplicateDimsAreShapeError) {
  EXPECT_KILN_ERROR(sum(x234(), {1, 1}), ShapeError,
                    "kiln::sum: dim appears more than once in [1, 1]" + at());
  EXPECT_KILN_ERROR(sum(x234(), {1, -2}), ShapeError,
                    "kiln::sum: dim appears more than once in [1, 1]" + at());
  EXPECT_KILN_ERROR_HAS(mean(x234(), {0, 2, -1}), ShapeError, "kiln::mean: dim appears more than once");
}

TEST(ReduceTest, OutOfRangeDimsAreShapeError) {
  EXPECT_KILN_ERROR(sum(x234(), {3}), ShapeError,
                    "kiln::sum: dimension 3 is out of range for a tensor of rank 3 (expected a "
                    "value in [-3, 2])" + at());
  EXPECT_KILN_ERROR_HAS(prod(x234(), {-4}), ShapeError, "kiln::prod: dimension -4 is out of range");
  EXPECT_KILN_ERROR_HAS(sum(scalar_tensor(1.0), {1}), ShapeError, "dimension 1 is out of range");
}

// The error names the op the user called.
TEST(ReduceTest, ErrorsNameAmaxAndAmin) {
  EXPECT_KILN_ERROR_HAS(amax(x234(), {5}), ShapeError, "kiln::amax: ");
  EXPECT_KILN_ERROR_HAS(amin(x234(), {0, 0}), ShapeError, "kiln::amin: ");
}

TEST(ReduceTest, MaxOfEmptyIsShapeError) {
  EXPECT_KILN_ERROR_HAS(amax(zeros({0})), ShapeError,
                        "kiln::amax: cannot reduce dim 0 of size 0 of a tensor of shape [0] (max and "
                        "min have no identity)");
  EXPECT_KILN_ERROR_HAS(amin(zeros({2, 0}), {1}), ShapeError,
                        "kiln::amin: cannot reduce dim 1 of size 0 of a tensor of shape [2, 0]");
  EXPECT_KILN_ERROR_HAS(amax(zeros({0}, kInt32)), ShapeError, "kiln::amax: ");
}

// Reducing a non-empty dim of an empty tensor is fine: torch.zeros(0, 3).amax(1) is
// tensor([]); only a reduced dim of size 0 has no identity.
TEST(ReduceTest, MaxOverANonEmptyDimOfAnEmptyTensor) {
  Tensor e = zeros({0, 3});
  Tensor m = amax(e, {1});
  EXPECT_THAT(m.sizes(), ElementsAre(0));
  EXPECT_THAT(amin(e, {1}, true).sizes(), ElementsAre(0, 1));
  EXPECT_THROW(amax(e, {0}), ShapeError);
}

// ---- empty and 0-d inputs -----------------------------------------------------------------

TEST(ReduceTest, EmptyInputs) {
  EXPECT_EQ(sum(zeros({0})).item<float>(), 0.0f);
  EXPECT_EQ(prod(zeros({0})).item<float>(), 1.0f);
  EXPECT_TRUE(std::isnan(mean(zeros({0})).item<float>()));
  Tensor s = sum(zeros({0, 3}), {0});
  EXPECT_THAT(s.sizes(), ElementsAre(3));
  EXPECT_EQ(valuesAsDouble(s), (D{0, 0, 0}));
  EXPECT_THAT(sum(zeros({0, 3}), {1}).sizes(), ElementsAre(0));
  EXPECT_EQ(sum(zeros({0}, kInt32)).item<int64_t>(), 0);
}

TEST(ReduceTest, ZeroDimInputs) {
  Tensor s = scalar_tensor(2.5, kFloat64);
  EXPECT_EQ(sum(s).item<double>(), 2.5);
  EXPECT_EQ(sum(s).dim(), 0);
  EXPECT_EQ(sum(s, {0}).dim(), 0);
  EXPECT_EQ(mean(s, {-1}, true).dim(), 0);
  EXPECT_EQ(amax(s).item<double>(), 2.5);
  EXPECT_EQ(prod(s).item<double>(), 2.5);
}

// ---- non-contiguous and large inputs ------------------------------------------------------

TEST(ReduceTest, NonContiguousInputs) {
  Tensor t = x234().permute({2, 0, 1});  // [4, 2, 3]
  EXPECT_EQ(valuesAsDouble(sum(t, {1, 2})), (D{60, 66, 72, 78}));
  Tensor s = x234().slice(2, 0, 4, 2);  // k = 0, 2
  EXPECT_EQ(valuesAsDouble(amax(s, {2})), (D{2, 6, 10, 14, 18, 22}));
  Tensor e = ramp({3}, kFloat64).expand({4, 3});
  EXPECT_EQ(valuesAsDouble(sum(e, {0})), (D{0, 4, 8}));
}

TEST(ReduceTest, LargeReductions) {
  const int64_t n = (int64_t(1) << 20) + 3;
  EXPECT_EQ(sum(ones({n}, kInt32)).item<int64_t>(), n);
  EXPECT_EQ(sum(ramp({n}, kFloat64)).item<double>(), double(n) * double(n - 1) / 2);
  EXPECT_EQ(amax(ramp({n}, kFloat32, -1e6)).item<float>(), float(-1e6 + double(n - 1)));
  // Many outputs, each a short segment: the parallel split is over outputs.
  const int64_t rows = 300007;
  Tensor x = ramp({rows, 4}, kInt64);
  std::vector<int64_t> r = valuesAsInt64(sum(x, {1}));
  int64_t wrong = 0;
  for (int64_t i = 0; i < rows; ++i) wrong += r[i] != 16 * i + 6;
  EXPECT_EQ(wrong, 0);
  // A transposed large input.
  std::vector<int64_t> c = valuesAsInt64(sum(x.t(), {1}));
  EXPECT_EQ(c[0], 4 * rows * (rows - 1) / 2);
  EXPECT_EQ(c[3], 4 * rows * (rows - 1) / 2 + 3 * rows);
}

// ---- the loops: rows, columns, rows in segments, packed copies ----------------------------

// Byte equality, NaN payloads and signed zeros included.
bool sameBits(const Tensor& a, const Tensor& b) {
  Tensor ca = a.contiguous(), cb = b.contiguous();
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() &&
         std::memcmp(ca.rawData(), cb.rawData(), size_t(a.numel()) * a.element_size()) == 0;
}

using Reduction = Tensor (*)(const Tensor&, Dims, bool, const SourceLoc&);
const std::vector<std::pair<const char*, Reduction>> kReductions = {
    {"sum", sum}, {"mean", mean}, {"prod", prod}, {"amax", amax}, {"amin", amin}};

// The order an output's elements are combined in depends on the logical shape and dims
// only: a contiguous input read in place (here [R, K, R], rows in segments, and
// [R, K, R, K], packed first), a strided view of it, and the reduced dims moved last in a
// contiguous copy all give the same bits.
TEST(ReduceTest, ResultsDoNotDependOnTheInputLayout) {
  Tensor x = spreadTensor({5, 7, 19}, 3, 0.5, 1.5, kFloat32);
  Tensor strided = x.permute({2, 0, 1}).contiguous().permute({1, 2, 0});  // x's values
  ASSERT_FALSE(strided.is_contiguous());
  Tensor moved = x.permute({1, 0, 2}).contiguous();  // [7, 5, 19], reduced dims last
  Tensor x4 = spreadTensor({3, 4, 5, 6}, 4, 0.5, 1.5, kFloat32);
  Tensor moved4 = x4.permute({1, 3, 0, 2}).contiguous();
  for (const auto& [name, f] : kReductions) {
    SCOPED_TRACE(name);
    Tensor r = f(x, {0, 2}, false, SourceLoc::current());
    EXPECT_TRUE(sameBits(r, f(strided, {0, 2}, false, SourceLoc::current())));
    EXPECT_TRUE(sameBits(r, f(moved, {1, 2}, false, SourceLoc::current())));
    EXPECT_TRUE(sameBits(f(x4, {0, 2}, false, SourceLoc::current()),
                         f(moved4, {2, 3}, false, SourceLoc::current())));
    EXPECT_TRUE(sameBits(f(x, {0}, false, SourceLoc::current()),
                         f(strided, {0}, false, SourceLoc::current())));
  }
}

// Each loop against a serial sum in long double: rows of odd widths (the lanes' tails),
// columns in several blocks, and batch_norm's [N, C, H, W] over 0, 2, 3.
TEST(ReduceTest, EveryLoopSumsAccurately) {
  struct Case {
    Shape shape, dims;
  };
  for (const Case& c : std::vector<Case>{{{9, 1}, {1}},
                                         {{9, 17}, {1}},
                                         {{4, 1037}, {1}},
                                         {{33, 1500}, {0}},
                                         {{3, 70, 5}, {1}},
                                         {{4, 3, 5, 5}, {0, 2, 3}},
                                         {{2, 3, 4, 5}, {0, 2}}}) {
    SCOPED_TRACE(::testing::PrintToString(c.shape));
    Tensor x = spreadTensor(c.shape, 9, -2, 2, kFloat64);
    // The reference: reduced dims moved last and summed serially.
    Shape perm;
    for (int64_t d = 0; d < x.dim(); ++d)
      if (std::find(c.dims.begin(), c.dims.end(), d) == c.dims.end()) perm.push_back(d);
    perm.insert(perm.end(), c.dims.begin(), c.dims.end());
    std::vector<double> v = valuesAsDouble(x.permute(perm).contiguous());
    std::vector<double> got = valuesAsDouble(sum(x, c.dims));
    const size_t per = v.size() / got.size();
    for (size_t o = 0; o < got.size(); ++o) {
      long double exact = 0;
      for (size_t i = 0; i < per; ++i) exact += v[o * per + i];
      EXPECT_NEAR(got[o], double(exact), 1e-13) << "output " << o;
    }
  }
}

// float32 pair sums accumulate in double: the pairs (0, 16) and (1, 17) of 1e8 and -1e8
// sum to 2e8 and -2e8 exactly, and the pairs of ones to 2 each; in double nothing of the
// 998 is lost beside 2e8 (in float32 it all would be), in rows and columns.
TEST(ReduceTest, Float32SumsAccumulateInDouble) {
  std::vector<float> v(1002, 1.0f);
  v[0] = v[16] = 1e8f;
  v[1] = v[17] = -1e8f;
  Tensor row = tensor(v, Shape{1, 1002});
  EXPECT_EQ(sum(row, {1}).item<float>(), 998.0f);
  EXPECT_EQ(sum(row.t().contiguous(), {0}).item<float>(), 998.0f);
  EXPECT_EQ(mean(row).item<float>(), float(998.0 / 1002.0));
}

// A float32 sum adds element 32k + l and element 32k + 16 + l (l < 16) in float32 first,
// then the pair sums and the elements without a partner in double: every loop, counting
// the elements in the order of the reduced dims. The values make each pair's rounding
// show: a pair is s (1 + 3 * 2^-25), rounding to s (1 + 2^-23), in even blocks and -s in
// odd ones, with s a power of two per output; the sums then add exactly in double. Any
// other pairing, or none, gives another result.
TEST(ReduceTest, Float32SumsPairElementsSixteenApartInBlocksOf32) {
  struct Case {
    Shape shape, dims;
  };
  for (const Case& c : std::vector<Case>{{{3, 10}, {1}},           // one partial block
                                         {{2, 601}, {1}},          // the out-of-line row, tail 25
                                         {{2, 1024}, {1}},
                                         {{3, 70}, {1}},           // tail 6
                                         {{4, 3, 50}, {0, 2}},     // rows in segments
                                         {{5, 3, 7}, {0, 2}},      // blocks across segments
                                         {{37, 20}, {0}},          // columns, tail 5
                                         {{2, 60, 300}, {1}},      // columns in blocks, tail 28
                                         {{3, 4, 5, 6}, {0, 2}},   // packed first
                                         {{7}, {0}}}) {
    SCOPED_TRACE(::testing::PrintToString(c.shape) + " over " + ::testing::PrintToString(c.dims));
    // The values in packed order: kept dims, then the reduced dims, in order.
    Shape perm, packedShape;
    for (int64_t d = 0; d < int64_t(c.shape.size()); ++d)
      if (std::find(c.dims.begin(), c.dims.end(), d) == c.dims.end()) perm.push_back(d);
    perm.insert(perm.end(), c.dims.begin(), c.dims.end());
    for (int64_t d : perm) packedShape.push_back(c.shape[size_t(d)]);
    int64_t n = 1;
    for (int64_t d : c.dims) n *= c.shape[size_t(d)];
    const int64_t total = numel(c.shape), outputs = total / n;
    std::vector<float> packed(static_cast<size_t>(total));
    std::vector<double> expected(static_cast<size_t>(outputs));
    for (int64_t o = 0; o < outputs; ++o) {
      const float scale = std::ldexp(1.0f, int(o % 5) - 2);
      float* v = packed.data() + o * n;
      double exact = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (i % 32 >= 16) continue;  // set with its partner
        const bool up = (i / 16) % 4 == 0, partner = i + 16 < n;
        v[i] = (up ? 1.0f : -1.0f) * scale;
        if (partner) v[i + 16] = (up ? 0x3p-25f : 0.0f) * scale;
        exact += double(v[i]) * (up && partner ? 1 + 0x1p-23 : 1.0);
      }
      expected[size_t(o)] = exact;  // exact: the sum rounds once, to float32
    }
    Shape inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
    Tensor x = tensor(packed, packedShape).permute(inverse).contiguous();
    ASSERT_EQ(x.sizes(), c.shape);
    std::vector<double> got = valuesAsDouble(sum(x, c.dims));
    std::vector<double> gotMean = valuesAsDouble(mean(x, c.dims));
    for (int64_t o = 0; o < outputs; ++o) {
      EXPECT_EQ(float(got[size_t(o)]), float(expected[size_t(o)])) << "output " << o;
      EXPECT_EQ(float(gotMean[size_t(o)]), float(expected[size_t(o)] / double(n))) << "output " << o;
    }
  }
}

// Values of every sign and of magnitudes 2^-20..2^20, so that every rounding shows.
std::vector<float> wideValues(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    const float mantissa = float(seed >> 8) / float(1 << 24) + 0.5f;
    v[i] = std::ldexp((seed & 1) ? -mantissa : mantissa, int((seed >> 1) % 40) - 20);
  }
  return v;
}

// The out-of-line float32 row sum (AVX-512 where the CPU has it) gives the inline lanes'
// bits for every tail length, with infinities, NaN, signed zeros and subnormals; sum and
// mean take it for long rows.
TEST(ReduceTest, TheOutOfLineRowSumGivesTheInlineBits) {
  auto inlineSum = [](const std::vector<float>& v) {
    const int64_t n = int64_t(v.size());
    kernels::PairFold fold;
    fold.add(n, [&](int64_t i) { return v[size_t(i)]; });
    return fold.result();
  };
  auto bits = [](double d) { return std::bit_cast<uint64_t>(d); };
  for (int64_t n = kernels::kMinOutOfLineRow; n < kernels::kMinOutOfLineRow + 40; ++n) {
    std::vector<float> v = wideValues(size_t(n), uint32_t(n));
    EXPECT_EQ(bits(kernels::sumFloatRow(v.data(), n)), bits(inlineSum(v))) << "n = " << n;
    v[size_t(n) - 1] = -0.0f;
    v[size_t(n) / 2] = 1e-42f;
    EXPECT_EQ(bits(kernels::sumFloatRow(v.data(), n)), bits(inlineSum(v))) << "n = " << n;
    EXPECT_EQ(sum(tensor(v, Shape{1, n}), {1}).item<float>(), float(inlineSum(v))) << "n = " << n;
  }
  std::vector<float> v = wideValues(300, 3);
  v[299] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(kernels::sumFloatRow(v.data(), 300), std::numeric_limits<double>::infinity());
  v[3] = -std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(kernels::sumFloatRow(v.data(), 300)));
  const std::vector<float> zeros(300, -0.0f);
  EXPECT_EQ(bits(kernels::sumFloatRow(zeros.data(), 300)), 0u);  // +0, as the lanes give
}

// amax/amin return the first NaN in index order, payload and all, whichever lane or
// column met it: rows, columns and rows in segments.
TEST(ReduceTest, MaxAndMinReturnTheFirstNaN) {
  const float first = std::bit_cast<float>(0x7fc00001u), later = std::bit_cast<float>(0xffc00002u);
  auto bits = [](const Tensor& t) {
    Tensor c = t.contiguous();
    std::vector<uint32_t> out(size_t(c.numel()));
    std::memcpy(out.data(), c.rawData(), out.size() * 4);
    return out;
  };
  std::vector<float> v(3 * 40);
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i % 7) - 3.0f;
  v[20] = later;  // row 0: lane 4 meets `later` first
  v[3] = first;   // row 0: lane 3, earlier in the row
  v[40 + 39] = first;  // row 1: in the tail
  Tensor x = tensor(v, Shape{3, 40});
  for (auto f : {amax, amin}) {
    EXPECT_THAT(bits(f(x, {1}, false, SourceLoc::current())),
                ElementsAre(0x7fc00001u, 0x7fc00001u, ::testing::_));
    // Columns: column 3 meets `first` in row 0, column 20 `later`, column 39 `first` in row 1.
    std::vector<uint32_t> c = bits(f(x, {0}, false, SourceLoc::current()));
    EXPECT_EQ(c[3], 0x7fc00001u);
    EXPECT_EQ(c[20], 0xffc00002u);
    EXPECT_EQ(c[39], 0x7fc00001u);
    // Rows in segments: [3, 2, 20] over dims 0 and 2. Output 1 holds v[20] (`later`)
    // before v[79] (`first`).
    std::vector<uint32_t> s = bits(f(x.reshape({3, 2, 20}), {0, 2}, false, SourceLoc::current()));
    EXPECT_EQ(s[0], 0x7fc00001u);
    EXPECT_EQ(s[1], 0xffc00002u);
  }
}

TEST(ReduceTest, SumsOverAnEmptyDimInEveryLayout) {
  EXPECT_EQ(valuesAsDouble(sum(zeros({3, 0, 2}), {1})), (D{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(valuesAsDouble(prod(zeros({3, 0, 2}), {0, 1})), (D{1, 1}));
  std::vector<double> m = valuesAsDouble(mean(zeros({2, 0}), {1}));
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
}

// ---- sum_to -------------------------------------------------------------------------------

TEST(ReduceTest, SumToUndoesABroadcast) {
  Tensor g = x234();
  Tensor lead = sum_to(g, {3, 4});
  EXPECT_THAT(lead.sizes(), ElementsAre(3, 4));
  EXPECT_EQ(valuesAsDouble(lead), valuesAsDouble(sum(g, {0})));
  Tensor ones = sum_to(g, {1, 3, 1});
  EXPECT_THAT(ones.sizes(), ElementsAre(1, 3, 1));
  EXPECT_EQ(valuesAsDouble(ones), (D{60, 92, 124}));
  Tensor mixed = sum_to(g, {3, 1});
  EXPECT_THAT(mixed.sizes(), ElementsAre(3, 1));
  EXPECT_EQ(valuesAsDouble(mixed), (D{60, 92, 124}));
  Tensor scalar = sum_to(g, {});
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.item<double>(), 276);
  EXPECT_TRUE(sum_to(g, {2, 3, 4}).is_same(g));
  EXPECT_THAT(sum_to(ramp({1, 4}), {1, 1}).sizes(), ElementsAre(1, 1));
}

TEST(ReduceTest, SumToAnIncompatibleShapeIsShapeError) {
  EXPECT_THROW(sum_to(x234(), {2, 4}), ShapeError);
  EXPECT_THROW(sum_to(ramp({3}), {2, 3}), ShapeError);
}

}  // namespace
}  // namespace kiln
