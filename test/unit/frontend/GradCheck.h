// A finite-difference gradient checker for float64 ops (torch.autograd.gradcheck's slow
// mode): the full Jacobian from backward() against central differences, element by
// element; and gradgradcheck, the same for the first derivatives taken with create_graph.
// Test-only.
//
//   EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& x) { return exp(x[0]); },
//                         {randomF64({3, 4})}));
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/core/Autograd.h"
#include "kiln/core/Ops.h"
#include "kiln/core/Tensor.h"

namespace kiln::testing {

namespace gradcheck_detail {

inline std::vector<double> readF64(const Tensor& t) {
  Tensor c = t.contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

inline std::string indexOf(const Shape& shape, int64_t linear) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = linear % shape[d];
    linear /= shape[d];
  }
  return formatShape(index);
}

// Fresh leaves with the inputs' values: float64 inputs require grad, others pass as-is.
inline std::vector<Tensor> freshLeaves(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> leaves;
  for (const Tensor& x : inputs) {
    Tensor leaf = x.detach().clone().detach();
    if (leaf.dtype() == kFloat64) leaf.requires_grad_(true);
    leaves.push_back(leaf);
  }
  return leaves;
}

}  // namespace gradcheck_detail

// Checks d fn(inputs) / d inputs for every float64 input (other inputs, such as a bool
// condition, are passed through unchanged). fn must return a float64 tensor.
// Analytical entry a = d out[j] / d in[i] (from backward with a one-hot gradient) must match
// the central difference n = (f(x + eps) - f(x - eps)) / (2 eps) within
// |a - n| <= atol + rtol * |n|. The failure names the worst element (by the amount its
// error exceeds the tolerance) and counts the others.
inline ::testing::AssertionResult gradcheck(std::function<Tensor(const std::vector<Tensor>&)> fn,
                                            std::vector<Tensor> inputs, double eps = 1e-6,
                                            double atol = 1e-5, double rtol = 1e-3) {
  using namespace gradcheck_detail;
  Tensor probe;
  {
    NoGradGuard noGrad;
    probe = fn(inputs);
  }
  if (probe.dtype() != kFloat64)
    return ::testing::AssertionFailure() << "gradcheck: fn returned a " << probe.dtype()
                                         << " tensor; it needs float64";
  const int64_t outputs = probe.numel();

  // analytical[k][j * n_k + i] = d out[j] / d in_k[i]
  std::vector<std::vector<double>> analytical(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k)
    analytical[k].assign(size_t(outputs * inputs[k].numel()), 0.0);
  for (int64_t j = 0; j < outputs; ++j) {
    std::vector<Tensor> leaves = freshLeaves(inputs);
    Tensor out = fn(leaves);
    if (!out.requires_grad()) break;  // independent of the inputs: a zero Jacobian
    std::vector<double> oneHot(size_t(outputs), 0.0);
    oneHot[size_t(j)] = 1.0;
    out.backward(tensor(oneHot, out.sizes()));
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (inputs[k].dtype() != kFloat64) continue;
      Tensor g = leaves[k].grad();
      if (!g.defined()) continue;
      if (g.sizes() != inputs[k].sizes() || g.dtype() != kFloat64)
        return ::testing::AssertionFailure()
               << "gradcheck: the gradient of input " << k << " is a " << g.dtype()
               << formatShape(g.sizes()) << " tensor for a float64" << formatShape(inputs[k].sizes())
               << " input";
      std::vector<double> values = readF64(g);
      for (size_t i = 0; i < values.size(); ++i)
        analytical[k][size_t(j) * values.size() + i] = values[i];
    }
  }

  double worstExcess = 0;
  std::string worst;
  int64_t failures = 0;
  NoGradGuard noGrad;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].dtype() != kFloat64) continue;
    const int64_t n = inputs[k].numel();
    for (int64_t i = 0; i < n; ++i) {
      std::vector<double> sides[2];
      for (int s = 0; s < 2; ++s) {
        std::vector<Tensor> shifted = inputs;
        shifted[k] = inputs[k].contiguous().clone();
        shifted[k].data_ptr<double>()[i] += s == 0 ? eps : -eps;
        sides[s] = readF64(fn(shifted));
      }
      for (int64_t j = 0; j < outputs; ++j) {
        double num = (sides[0][size_t(j)] - sides[1][size_t(j)]) / (2 * eps);
        double ana = analytical[k][size_t(j * n + i)];
        double excess = std::fabs(ana - num) - (atol + rtol * std::fabs(num));
        if (!(excess > 0) && !std::isnan(ana) && !std::isnan(num)) continue;
        ++failures;
        if (std::isnan(excess)) excess = INFINITY;
        if (failures == 1 || excess > worstExcess) {
          worstExcess = excess;
          std::ostringstream os;
          os.precision(10);
          os << "d out" << indexOf(probe.sizes(), j) << " / d input " << k
             << indexOf(inputs[k].sizes(), i) << ": analytical " << ana << ", numerical " << num;
          worst = os.str();
        }
      }
    }
  }
  if (failures == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "gradcheck: " << failures
                                       << " Jacobian entries differ; worst: " << worst
                                       << " (atol " << atol << ", rtol " << rtol << ")";
}

// Checks second derivatives (torch.autograd.gradgradcheck): the first derivatives of
// sum(fn(inputs) * w) with respect to the float64 inputs, taken by autograd::grad with
// create_graph (w: fixed, unequal weights), flattened into one tensor, go through gradcheck:
// their Jacobian from a second backward pass against central differences of them.
inline ::testing::AssertionResult gradgradcheck(std::function<Tensor(const std::vector<Tensor>&)> fn,
                                                std::vector<Tensor> inputs, double eps = 1e-6,
                                                double atol = 1e-5, double rtol = 1e-3) {
  auto firstDerivatives = [fn](const std::vector<Tensor>& given) {
    AutoGradMode gradMode(true);  // gradcheck evaluates its finite differences without grad
    std::vector<Tensor> x = given, wrt;
    for (Tensor& t : x) {
      if (t.dtype() != kFloat64) continue;
      if (!t.requires_grad()) t = t.detach().requires_grad_(true);
      wrt.push_back(t);
    }
    Tensor out = fn(x);
    std::vector<double> weights(size_t(out.numel()));
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = 0.5 + 0.25 * double(i % 5);
    std::vector<Tensor> grads =
        autograd::grad({out}, wrt, {tensor(weights, out.sizes())}, /*retain_graph=*/true,
                       /*create_graph=*/true, /*allow_unused=*/true);
    std::vector<Tensor> flat;
    for (size_t i = 0; i < grads.size(); ++i)
      flat.push_back((grads[i].defined() ? grads[i] : zeros_like(wrt[i])).reshape({-1}));
    return cat(flat);
  };
  return gradcheck(firstDerivatives, std::move(inputs), eps, atol, rtol);
}

}  // namespace kiln::testing
