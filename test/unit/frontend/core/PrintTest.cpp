// Printing tensors: the exact strings of PyTorch 1.13's repr, with "torch." read as
// "kiln." in dtype names. Expected strings were generated with python3-torch:
//   /usr/bin/python3 -c 'import torch; print(repr(repr(<tensor>)))'
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"
#include "test/unit/frontend/core/TestTensors.h"

namespace kiln {
namespace {

using kiln::testing::ramp;

using D = std::vector<double>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::string str(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

Tensor f32(const D& v, std::optional<Shape> shape = std::nullopt) {
  return tensor(std::vector<float>(v.begin(), v.end()), shape);
}
Tensor i64(const std::vector<int64_t>& v, std::optional<Shape> shape = std::nullopt) {
  return tensor(v, shape);
}

struct PrintCase {
  const char* name;
  std::function<Tensor()> make;
  const char* torchRepr;
};

// gtest names a failing case by this rather than dumping its bytes.
void PrintTo(const PrintCase& c, std::ostream* os) { *os << c.name; }

const std::vector<PrintCase>& printCases() {
  static const std::vector<PrintCase> cases = {
      {"FloatMatrix", [] { return f32({1.5, -2.25, 3.0, 4.125, 5.0, -6.5}, Shape{2, 3}); },
       "tensor([[ 1.5000, -2.2500,  3.0000],\n        [ 4.1250,  5.0000, -6.5000]])"},
      {"Int64Matrix", [] { return i64({1, -20, 300, 4, 5, 6}, Shape{2, 3}); },
       "tensor([[  1, -20, 300],\n        [  4,   5,   6]])"},
      {"Int32Matrix", [] { return i64({1, -20, 300, 4, 5, 6}, Shape{2, 3}).to(kInt32); },
       "tensor([[  1, -20, 300],\n        [  4,   5,   6]], dtype=kiln.int32)"},
      {"Bools", [] { return tensor(std::vector<bool>{true, false, true}); },
       "tensor([ True, False,  True])"},
      {"ZeroDimFloat", [] { return scalar_tensor(3.5); }, "tensor(3.5000)"},
      {"ZeroDimInt64", [] { return scalar_tensor(3, kInt64); }, "tensor(3)"},
      {"ZeroDimBool", [] { return scalar_tensor(1, kBool); }, "tensor(True)"},
      {"ZeroDimFloat64", [] { return scalar_tensor(2, kFloat64); }, "tensor(2., dtype=kiln.float64)"},
      {"ZeroDimInt32", [] { return scalar_tensor(7, kInt32); }, "tensor(7, dtype=kiln.int32)"},
      {"ZeroDimNegative", [] { return scalar_tensor(-0.125); }, "tensor(-0.1250)"},
      {"Empty", [] { return zeros({0}); }, "tensor([])"},
      {"Empty2x0", [] { return zeros({2, 0}); }, "tensor([], size=(2, 0))"},
      {"EmptyFloat64", [] { return zeros({0}, kFloat64); }, "tensor([], dtype=kiln.float64)"},
      // An empty tensor has no values to infer int64 or bool from, so PyTorch names them.
      {"EmptyInt64", [] { return zeros({0}, kInt64); }, "tensor([], dtype=kiln.int64)"},
      {"EmptyInt32_0x3", [] { return zeros({0, 3}, kInt32); },
       "tensor([], size=(0, 3), dtype=kiln.int32)"},
      {"EmptyBool", [] { return zeros({0}, kBool); }, "tensor([], dtype=kiln.bool)"},
      {"SciSmall", [] { return f32({1e-5, 2.5, -300.0}); },
       "tensor([ 1.0000e-05,  2.5000e+00, -3.0000e+02])"},
      {"SciLarge", [] { return f32({1e10, 1.0}); }, "tensor([1.0000e+10, 1.0000e+00])"},
      {"SciAbove1e8", [] { return f32({123456789.0, 1.0}); }, "tensor([1.2346e+08, 1.0000e+00])"},
      {"SciWithZero", [] { return f32({1e-5, 0.0}); }, "tensor([1.0000e-05, 0.0000e+00])"},
      {"FixedSmallRatio", [] { return f32({0.001, 1.0}); }, "tensor([0.0010, 1.0000])"},
      {"IntegralFloats", [] { return f32({1, 2, -3}); }, "tensor([ 1.,  2., -3.])"},
      // Integral values whose max/min ratio exceeds 1000 print in scientific notation too.
      {"IntegralFloatsWideRatio", [] { return f32({1, 10000}); },
       "tensor([1.0000e+00, 1.0000e+04])"},
      {"Zeros", [] { return f32({0, 0}); }, "tensor([0., 0.])"},
      {"NegativeZero", [] { return f32({-0.0, 1.0}); }, "tensor([-0., 1.])"},
      {"Float64Matrix", [] { return tensor(D{1, 2, 3, 4}, Shape{2, 2}); },
       "tensor([[1., 2.],\n        [3., 4.]], dtype=kiln.float64)"},
      {"Float16", [] { return f32({1.5, 2.5}).to(kFloat16); },
       "tensor([1.5000, 2.5000], dtype=kiln.float16)"},
      {"BFloat16", [] { return f32({1.5, 2.5}).to(kBFloat16); },
       "tensor([1.5000, 2.5000], dtype=kiln.bfloat16)"},
      // Widths come from the finite non-zero values only; nan/inf are padded to them.
      {"Inf", [] { return f32({1, kInf}); }, "tensor([1., inf])"},
      {"InfNaN", [] { return f32({1, -kInf, kNaN}); }, "tensor([1., -inf, nan])"},
      {"OnlyNaN", [] { return f32({kNaN}); }, "tensor([nan])"},
      {"FractionWithNaN", [] { return f32({0.5, kNaN, -kInf}); },
       "tensor([0.5000,    nan,   -inf])"},
      {"ThreeD", [] { return ones({2, 3, 4}); },
       "tensor([[[1., 1., 1., 1.],\n         [1., 1., 1., 1.],\n         [1., 1., 1., 1.]],\n\n"
       "        [[1., 1., 1., 1.],\n         [1., 1., 1., 1.],\n         [1., 1., 1., 1.]]])"},
      {"Transposed", [] { return f32({1.5, -2.25, 3.0, 4.125, 5.0, -6.5}, Shape{2, 3}).t(); },
       "tensor([[ 1.5000,  4.1250],\n        [-2.2500,  5.0000],\n        [ 3.0000, -6.5000]])"},
      // Rows longer than 80 characters wrap (torch's linewidth).
      {"LineWrap", [] { return ramp({20}); },
       "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
       "        14., 15., 16., 17., 18., 19.])"},
      {"LineWrapInts", [] { return ramp({40}, kInt64); },
       "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
       "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35,\n"
       "        36, 37, 38, 39])"},
      // More than 1000 elements: three at each edge of every dim.
      {"Summarized1D", [] { return ones({2000}); }, "tensor([1., 1., 1.,  ..., 1., 1., 1.])"},
      {"SummarizedInts", [] { return ramp({2000}, kInt64); },
       "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"},
      // The format is chosen from the printed values only (torch formats the summary).
      {"SummarizedIgnoresTheMiddle",
       [] {
         D v(2000, 1.0);
         v[1000] = 1e9;
         return f32(v);
       },
       "tensor([1., 1., 1.,  ..., 1., 1., 1.])"},
      {"Summarized2D", [] { return ones({40, 30}); },
       "tensor([[1., 1., 1.,  ..., 1., 1., 1.],\n        [1., 1., 1.,  ..., 1., 1., 1.],\n"
       "        [1., 1., 1.,  ..., 1., 1., 1.],\n        ...,\n"
       "        [1., 1., 1.,  ..., 1., 1., 1.],\n        [1., 1., 1.,  ..., 1., 1., 1.],\n"
       "        [1., 1., 1.,  ..., 1., 1., 1.]])"},
  };
  return cases;
}

class PrintReprTest : public ::testing::TestWithParam<PrintCase> {};

TEST_P(PrintReprTest, MatchesTorchRepr) {
  EXPECT_EQ(str(GetParam().make()), GetParam().torchRepr);
}

INSTANTIATE_TEST_SUITE_P(Torch, PrintReprTest, ::testing::ValuesIn(printCases()),
                         [](const ::testing::TestParamInfo<PrintCase>& info) {
                           return std::string(info.param.name);
                         });

TEST(PrintSummaryTest, ThreeDims) {
  std::string block =
      "[[1., 1., 1.,  ..., 1., 1., 1.],\n         [1., 1., 1.,  ..., 1., 1., 1.],\n"
      "         [1., 1., 1.,  ..., 1., 1., 1.],\n         ...,\n"
      "         [1., 1., 1.,  ..., 1., 1., 1.],\n         [1., 1., 1.,  ..., 1., 1., 1.],\n"
      "         [1., 1., 1.,  ..., 1., 1., 1.]]";
  std::string sep = ",\n\n        ";
  std::string expected = "tensor([" + block + sep + block + sep + block + sep + "..." + sep + block +
                         sep + block + sep + block + "])";
  EXPECT_EQ(str(ones({11, 10, 10})), expected);
}

TEST(PrintSummaryTest, ExactlyAThousandElementsAreAllPrinted) {
  std::string s = str(zeros({1000}));
  EXPECT_EQ(s.find("..."), std::string::npos);
  size_t count = 0;
  for (size_t at = s.find("0."); at != std::string::npos; at = s.find("0.", at + 1)) ++count;
  EXPECT_EQ(count, 1000u);
}

TEST(PrintAutogradTest, RequiresGrad) {
  Tensor a = tensor(D{0.1, 0.25});
  a.requires_grad_();
  EXPECT_EQ(str(a), "tensor([0.1000, 0.2500], dtype=kiln.float64, requires_grad=True)");
  Tensor b = f32({1, 2});
  b.requires_grad_();
  EXPECT_EQ(str(b), "tensor([1., 2.], requires_grad=True)");
}

// PyTorch names the backward node after the op's autograd function: AddBackward0, ...
TEST(PrintAutogradTest, GradFn) {
  Tensor a = f32({1, 2});
  a.requires_grad_();
  EXPECT_EQ(str(add(a, a)), "tensor([2., 4.], grad_fn=<AddBackward0>)");
  EXPECT_EQ(str(mul(a, 2.0)), "tensor([2., 4.], grad_fn=<MulBackward0>)");
  EXPECT_EQ(str(exp(a)), "tensor([2.7183, 7.3891], grad_fn=<ExpBackward0>)");
  // Kiln names the node after its frontend op ("reduce"); PyTorch prints SumBackward0.
  EXPECT_EQ(str(sum(a)), "tensor(3., grad_fn=<ReduceBackward0>)");
}

TEST(PrintAutogradTest, NoGradSuffixUnderNoGradOrAfterDetach) {
  Tensor a = f32({1, 2});
  a.requires_grad_();
  EXPECT_EQ(str(a.detach()), "tensor([1., 2.])");
}

TEST(PrintTest, UndefinedTensor) { EXPECT_EQ(str(Tensor()), "[ Tensor (undefined) ]"); }

}  // namespace
}  // namespace kiln
