#include "kiln/core/DType.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace kiln {
namespace {

using ::testing::HasSubstr;

constexpr DType kAll[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool};
const DType kInvalid = static_cast<DType>(99);

TEST(DTypeTest, LibTorchSpellings) {
  static_assert(kFloat == DType::Float32 && kFloat32 == DType::Float32);
  static_assert(kDouble == DType::Float64 && kFloat64 == DType::Float64);
  static_assert(kHalf == DType::Float16 && kFloat16 == DType::Float16);
  static_assert(kBFloat16 == DType::BFloat16);
  static_assert(kInt == DType::Int32 && kInt32 == DType::Int32);
  static_assert(kLong == DType::Int64 && kInt64 == DType::Int64);
  static_assert(kBool == DType::Bool);
}

TEST(DTypeTest, SizesAndNames) {
  std::map<DType, std::pair<size_t, std::string>> expected = {
      {kFloat32, {4, "float32"}}, {kFloat64, {8, "float64"}}, {kFloat16, {2, "float16"}},
      {kBFloat16, {2, "bfloat16"}}, {kInt32, {4, "int32"}},   {kInt64, {8, "int64"}},
      {kBool, {1, "bool"}}};
  for (auto& [dtype, sizeAndName] : expected) {
    EXPECT_EQ(elementSize(dtype), sizeAndName.first);
    EXPECT_EQ(name(dtype), sizeAndName.second);
    EXPECT_EQ(qualifiedName(dtype), "kiln." + sizeAndName.second);
    std::ostringstream os;
    os << dtype;
    EXPECT_EQ(os.str(), sizeAndName.second);
  }
}

TEST(DTypeTest, Categories) {
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    EXPECT_TRUE(isFloatingPoint(d)) << d;
    EXPECT_FALSE(isIntegral(d, true)) << d;
  }
  for (DType d : {kInt32, kInt64}) {
    EXPECT_FALSE(isFloatingPoint(d)) << d;
    EXPECT_TRUE(isIntegral(d, false)) << d;
  }
  EXPECT_FALSE(isFloatingPoint(kBool));
  EXPECT_FALSE(isIntegral(kBool, false));
  EXPECT_TRUE(isIntegral(kBool, true));
}

// torch.promote_types over these dtypes, written in PyTorch's own order (b1 i4 i8 f2 bf f4
// f8), not the enum's, so a transposed or shifted row in the implementation shows up.
TEST(DTypeTest, PromotionMatchesPyTorchTable) {
  const DType order[] = {kBool, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64};
  const char* table[7][7] = {
      /*        b1     i4     i8     f2     bf     f4     f8 */
      /* b1 */ {"b1", "i4", "i8", "f2", "bf", "f4", "f8"},
      /* i4 */ {"i4", "i4", "i8", "f2", "bf", "f4", "f8"},
      /* i8 */ {"i8", "i8", "i8", "f2", "bf", "f4", "f8"},
      /* f2 */ {"f2", "f2", "f2", "f2", "f4", "f4", "f8"},
      /* bf */ {"bf", "bf", "bf", "f4", "bf", "f4", "f8"},
      /* f4 */ {"f4", "f4", "f4", "f4", "f4", "f4", "f8"},
      /* f8 */ {"f8", "f8", "f8", "f8", "f8", "f8", "f8"},
  };
  std::map<std::string, DType> byCode = {{"b1", kBool},    {"i4", kInt32},    {"i8", kInt64},
                                         {"f2", kFloat16}, {"bf", kBFloat16}, {"f4", kFloat32},
                                         {"f8", kFloat64}};
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j)
      EXPECT_EQ(promoteTypes(order[i], order[j]), byCode.at(table[i][j]))
          << order[i] << " with " << order[j];
}

TEST(DTypeTest, PromotionExamplesFromTheBrief) {
  EXPECT_EQ(promoteTypes(kBFloat16, kFloat16), kFloat32);
  EXPECT_EQ(promoteTypes(kBool, kInt32), kInt32);
  EXPECT_EQ(promoteTypes(kInt64, kFloat16), kFloat16);
}

TEST(DTypeTest, ScalarKinds) {
  static_assert(scalarKindOf<bool>() == ScalarKind::Bool);
  static_assert(scalarKindOf<int>() == ScalarKind::Integral);
  static_assert(scalarKindOf<int64_t>() == ScalarKind::Integral);
  static_assert(scalarKindOf<float>() == ScalarKind::Floating);
  static_assert(scalarKindOf<double>() == ScalarKind::Floating);
}

// torch.result_type(tensor, python_scalar) for every dtype and scalar kind.
TEST(DTypeTest, ResultTypeWithScalarFollowsPyTorch) {
  for (DType d : kAll) EXPECT_EQ(resultTypeWithScalar(d, ScalarKind::Bool), d) << d;
  EXPECT_EQ(resultTypeWithScalar(kBool, ScalarKind::Integral), kInt64);
  EXPECT_EQ(resultTypeWithScalar(kBool, ScalarKind::Floating), kFloat32);
  for (DType d : {kInt32, kInt64}) {
    EXPECT_EQ(resultTypeWithScalar(d, ScalarKind::Integral), d) << d;
    EXPECT_EQ(resultTypeWithScalar(d, ScalarKind::Floating), kFloat32) << d;
  }
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    EXPECT_EQ(resultTypeWithScalar(d, ScalarKind::Integral), d) << d;
    EXPECT_EQ(resultTypeWithScalar(d, ScalarKind::Floating), d) << d;
  }
}

TEST(DTypeTest, CppTypeTraitsRoundTrip) {
  static_assert(std::is_same_v<CppType<kFloat32>, float>);
  static_assert(std::is_same_v<CppType<kFloat64>, double>);
  static_assert(std::is_same_v<CppType<kFloat16>, Half>);
  static_assert(std::is_same_v<CppType<kBFloat16>, BFloat16>);
  static_assert(std::is_same_v<CppType<kInt32>, int32_t>);
  static_assert(std::is_same_v<CppType<kInt64>, int64_t>);
  static_assert(std::is_same_v<CppType<kBool>, bool>);
  static_assert(dtypeOf<float>() == kFloat32 && dtypeOf<double>() == kFloat64);
  static_assert(dtypeOf<Half>() == kFloat16 && dtypeOf<BFloat16>() == kBFloat16);
  static_assert(dtypeOf<int32_t>() == kInt32 && dtypeOf<int64_t>() == kInt64);
  static_assert(dtypeOf<bool>() == kBool);
  static_assert(std::is_same_v<OpMathType<Half>, float>);
  static_assert(std::is_same_v<OpMathType<BFloat16>, float>);
  static_assert(std::is_same_v<OpMathType<double>, double>);
  static_assert(std::is_same_v<OpMathType<int32_t>, int32_t>);
}

TEST(DTypeTest, DispatchCallsWithTheStoredType) {
  for (DType d : kAll) {
    size_t size = dispatchDType(d, []<class T>() { return sizeof(T); });
    EXPECT_EQ(size, elementSize(d)) << d;
    DType back = dispatchDType(d, []<class T>() { return dtypeOf<T>(); });
    EXPECT_EQ(back, d);
  }
}

TEST(DTypeTest, DispatchSupportsVoidAndReferenceResults) {
  int calls = 0;
  dispatchDType(kInt64, [&]<class T>() { calls += std::is_same_v<T, int64_t>; });
  EXPECT_EQ(calls, 1);
  int& ref = dispatchFloatingDType(kHalf, "test", std::source_location::current(),
                                   [&]<class T>() -> int& { return calls; });
  EXPECT_EQ(&ref, &calls);
}

TEST(DTypeTest, FloatingDispatchAcceptsEveryFloatType) {
  for (DType d : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    DType seen = dispatchFloatingDType(d, "exp", std::source_location::current(),
                                       []<class T>() { return dtypeOf<T>(); });
    EXPECT_EQ(seen, d);
  }
}

TEST(DTypeTest, FloatingDispatchRejectsOthersNamingOpDtypeAndLine) {
  for (DType d : {kInt32, kInt64, kBool}) {
    int line = __LINE__ + 1;
    auto loc = std::source_location::current();
    try {
      dispatchFloatingDType(d, "exp", loc, []<class T>() { return 0; });
      FAIL() << "no error for " << d;
    } catch (const TypeError& e) {
      std::string expected = "kiln::exp: dtype " + std::string(name(d)) +
                             " is not supported (expected one of float32, float64, float16, "
                             "bfloat16) (at test/unit/frontend/core/DTypeTest.cpp:" +
                             std::to_string(line) + ")";
      EXPECT_EQ(e.what(), expected);
    }
  }
}

TEST(DTypeTest, DispatchAmongAListedSubset) {
  auto loc = std::source_location::current();
  auto run = [&](DType d) {
    return dispatchDTypeAmong<kFloat32, kFloat64>(d, "matmul", loc,
                                                  []<class T>() { return sizeof(T); });
  };
  EXPECT_EQ(run(kFloat64), 8u);
  try {
    run(kHalf);
    FAIL();
  } catch (const TypeError& e) {
    EXPECT_EQ(e.message(), "dtype float16 is not supported (expected one of float32, float64)");
    EXPECT_EQ(e.op(), "matmul");
  }
}

TEST(DTypeTest, InvalidDTypeValuesAreRejected) {
  auto expectInvalid = [](auto&& call) {
    try {
      call();
      FAIL() << "no error";
    } catch (const TypeError& e) {
      EXPECT_THAT(e.what(), HasSubstr("kiln::dtype: invalid dtype value 99"));
    }
  };
  expectInvalid([] { dispatchDType(kInvalid, []<class T>() { return 0; }); });
  expectInvalid([] { elementSize(kInvalid); });
  expectInvalid([] { name(kInvalid); });
  expectInvalid([] { isFloatingPoint(kInvalid); });
  expectInvalid([] { isIntegral(kInvalid, true); });
  expectInvalid([] { promoteTypes(kFloat32, kInvalid); });
  expectInvalid([] { resultTypeWithScalar(kInvalid, ScalarKind::Floating); });
}

}  // namespace
}  // namespace kiln
