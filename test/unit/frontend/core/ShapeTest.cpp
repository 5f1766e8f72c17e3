#include "kiln/core/Shape.h"

#include <gtest/gtest.h>

#include <sstream>

namespace kiln {
namespace {

// Every error message ends with the location; these tests pass this one.
const std::source_location kLoc = std::source_location::current();
const std::string kAt =
    " (at test/unit/frontend/core/ShapeTest.cpp:" + std::to_string(kLoc.line()) + ")";

template <class F>
std::string shapeErrorOf(F&& call) {
  try {
    call();
  } catch (const ShapeError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ShapeTest, Numel) {
  EXPECT_EQ(numel({}), 1);
  EXPECT_EQ(numel({2, 3}), 6);
  EXPECT_EQ(numel({2, 0, 3}), 0);
  EXPECT_EQ(checkedNumel({4, 5}, "zeros", kLoc), 20);
  EXPECT_EQ(checkedNumel({}, "zeros", kLoc), 1);
}

TEST(ShapeTest, CheckedNumelRejectsNegativeDimsAndOverflow) {
  EXPECT_EQ(shapeErrorOf([] { checkedNumel({2, -3}, "zeros", kLoc); }),
            "kiln::zeros: shape [2, -3] has negative dimension -3 at index 1" + kAt);
  EXPECT_EQ(shapeErrorOf([] { checkedNumel({1ll << 32, 1ll << 32}, "ones", kLoc); }),
            "kiln::ones: shape [4294967296, 4294967296] has more elements than int64 can count" +
                kAt);
}

TEST(ShapeTest, ContiguousStrides) {
  EXPECT_EQ(contiguousStrides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(contiguousStrides({}), Strides{});
  EXPECT_EQ(contiguousStrides({5}), Strides{1});
  EXPECT_EQ(contiguousStrides({2, 0, 3}), (Strides{3, 3, 1}));  // as PyTorch
  EXPECT_EQ(contiguousStrides({3, 1, 2}), (Strides{2, 2, 1}));
}

TEST(ShapeTest, IsContiguous) {
  EXPECT_TRUE(isContiguous({2, 3}, {3, 1}));
  EXPECT_FALSE(isContiguous({2, 3}, {1, 2}));  // a transpose
  EXPECT_FALSE(isContiguous({2, 3}, {6, 2}));  // every other column
  EXPECT_TRUE(isContiguous({2, 1, 3}, {3, 99, 1}));  // size-1 dims carry any stride
  EXPECT_TRUE(isContiguous({3, 0}, {7, 7}));         // empty
  EXPECT_TRUE(isContiguous({}, {}));
  EXPECT_FALSE(isContiguous({2, 3}, {1}));  // rank mismatch
}

TEST(ShapeTest, BroadcastFollowsNumPy) {
  EXPECT_EQ(broadcastShapes({2, 3}, {3}, "add", kLoc), (Shape{2, 3}));
  EXPECT_EQ(broadcastShapes({3}, {2, 3}, "add", kLoc), (Shape{2, 3}));
  EXPECT_EQ(broadcastShapes({4, 1, 5}, {3, 1}, "add", kLoc), (Shape{4, 3, 5}));
  EXPECT_EQ(broadcastShapes({}, {2, 2}, "add", kLoc), (Shape{2, 2}));
  EXPECT_EQ(broadcastShapes({}, {}, "add", kLoc), Shape{});
  EXPECT_EQ(broadcastShapes({0, 1}, {1, 3}, "add", kLoc), (Shape{0, 3}));
  EXPECT_EQ(broadcastShapes({1}, {0}, "add", kLoc), Shape{0});
  EXPECT_EQ(broadcastShapes({2, 1}, {1, 1}, "add", kLoc), (Shape{2, 1}));
}

TEST(ShapeTest, BroadcastMismatchNamesBothShapes) {
  EXPECT_EQ(shapeErrorOf([] { broadcastShapes({2, 3}, {4}, "add", kLoc); }),
            "kiln::add: operands have shapes [2, 3] and [4], which cannot be broadcast" + kAt);
  EXPECT_EQ(shapeErrorOf([] { broadcastShapes({2}, {3, 0}, "mul", kLoc); }),
            "kiln::mul: operands have shapes [2] and [3, 0], which cannot be broadcast" + kAt);
  EXPECT_EQ(shapeErrorOf([] { broadcastShapes({0}, {2}, "sub", kLoc); }),
            "kiln::sub: operands have shapes [0] and [2], which cannot be broadcast" + kAt);
}

TEST(ShapeTest, NormalizeDim) {
  EXPECT_EQ(normalizeDim(0, 3, "sum", kLoc), 0);
  EXPECT_EQ(normalizeDim(2, 3, "sum", kLoc), 2);
  EXPECT_EQ(normalizeDim(-1, 3, "sum", kLoc), 2);
  EXPECT_EQ(normalizeDim(-3, 3, "sum", kLoc), 0);
  EXPECT_EQ(normalizeDim(0, 0, "sum", kLoc), 0);   // a scalar takes 0 and -1
  EXPECT_EQ(normalizeDim(-1, 0, "sum", kLoc), 0);
}

TEST(ShapeTest, NormalizeDimOutOfRangeNamesDimAndRank) {
  EXPECT_EQ(shapeErrorOf([] { normalizeDim(3, 3, "sum", kLoc); }),
            "kiln::sum: dimension 3 is out of range for a tensor of rank 3 (expected a value in "
            "[-3, 2])" + kAt);
  EXPECT_EQ(shapeErrorOf([] { normalizeDim(-4, 3, "softmax", kLoc); }),
            "kiln::softmax: dimension -4 is out of range for a tensor of rank 3 (expected a "
            "value in [-3, 2])" + kAt);
  EXPECT_EQ(shapeErrorOf([] { normalizeDim(1, 0, "sum", kLoc); }),
            "kiln::sum: dimension 1 is out of range for a tensor of rank 0 (expected a value in "
            "[-1, 0])" + kAt);
}

TEST(ShapeTest, InferSize) {
  EXPECT_EQ(inferSize({-1, 4}, 12, "reshape", kLoc), (Shape{3, 4}));
  EXPECT_EQ(inferSize({2, -1, 2}, 12, "reshape", kLoc), (Shape{2, 3, 2}));
  EXPECT_EQ(inferSize({3, 4}, 12, "reshape", kLoc), (Shape{3, 4}));
  EXPECT_EQ(inferSize({-1}, 0, "reshape", kLoc), Shape{0});
  EXPECT_EQ(inferSize({3, -1}, 0, "reshape", kLoc), (Shape{3, 0}));
  EXPECT_EQ(inferSize({}, 1, "reshape", kLoc), Shape{});
  EXPECT_EQ(inferSize({0, 5}, 0, "reshape", kLoc), (Shape{0, 5}));
}

TEST(ShapeTest, InferSizeErrors) {
  EXPECT_EQ(shapeErrorOf([] { inferSize({-1, -1}, 4, "reshape", kLoc); }),
            "kiln::reshape: shape [-1, -1] has more than one -1; only one dimension can be "
            "inferred" + kAt);
  EXPECT_EQ(shapeErrorOf([] { inferSize({2, -2}, 4, "view", kLoc); }),
            "kiln::view: shape [2, -2] has invalid dimension -2 at index 1" + kAt);
  EXPECT_EQ(shapeErrorOf([] { inferSize({2, 5}, 12, "reshape", kLoc); }),
            "kiln::reshape: cannot reshape a tensor of 12 elements into shape [2, 5]" + kAt);
  EXPECT_EQ(shapeErrorOf([] { inferSize({-1, 5}, 12, "reshape", kLoc); }),
            "kiln::reshape: cannot reshape a tensor of 12 elements into shape [-1, 5]" + kAt);
  EXPECT_EQ(shapeErrorOf([] { inferSize({0, -1}, 0, "reshape", kLoc); }),
            "kiln::reshape: cannot infer the -1 in shape [0, -1] for a tensor of 0 elements: "
            "with a zero-size dimension any size fits" + kAt);
  EXPECT_EQ(shapeErrorOf([] { inferSize({1ll << 40, 1ll << 40, -1}, 4, "reshape", kLoc); }),
            "kiln::reshape: shape [1099511627776, 1099511627776, -1] has more elements than "
            "int64 can count" + kAt);
}

TEST(ShapeTest, Formatting) {
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(formatShape({7}), "[7]");
  EXPECT_EQ(formatShape({2, 3}), "[2, 3]");
  std::ostringstream os;
  os << Shape{64, 784};
  EXPECT_EQ(os.str(), "[64, 784]");
}

}  // namespace
}  // namespace kiln
