// The inputs of scripts/golden/gen_optim_goldens.py rebuilt in C++ (initial parameters and
// per-step gradients), and the comparison of a run with its golden trajectory and state.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/Ops.h"
#include "kiln/optim/Optimizer.h"
#include "test/unit/frontend/Golden.h"
#include "test/unit/frontend/optim/OptimGoldens.h"

namespace kiln::optim::testing {

inline constexpr int kSteps = 5;

struct Initial {
  std::vector<double> values;
  Shape shape;
};
inline const std::vector<Initial> kInitial = {{{0.5, -1.25, 2.0, 0.0, -0.75, 1.5}, {2, 3}},
                                              {{0.3, -0.2, 0.1, 0.7}, {4}}};

// grad_values(j, k) of the script: shrinking, so amsgrad's maximum matters.
inline std::vector<double> gradValues(size_t j, int k) {
  std::vector<double> v(kInitial[j].values.size());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::sin(1.3 * double(i) + 0.7 * k + double(j)) / (1 + 0.5 * k);
  return v;
}

// Fresh leaf parameters that require grad.
inline std::vector<Tensor> makeParams(DType dtype) {
  std::vector<Tensor> params;
  for (const Initial& init : kInitial)
    params.push_back(tensor(init.values, init.shape).to(dtype).requires_grad_());
  return params;
}

inline void setGrads(std::vector<Tensor>& params, int k) {
  for (size_t j = 0; j < params.size(); ++j)
    params[j].set_grad(tensor(gradValues(j, k), kInitial[j].shape).to(params[j].dtype()));
}

inline const golden::OptimizerGolden& findGolden(const std::string& name) {
  for (const auto& g : golden::optimizerGoldens())
    if (g.name == name) return g;
  throw std::runtime_error("no optimizer golden named " + name);
}

// |actual - expected| <= rtol * (|expected| + 1e-3) element by element; rtol follows the
// dtype (PyTorch fuses a*x+y into one rounding where kiln rounds twice).
inline ::testing::AssertionResult closeTo(const Tensor& actual, const std::vector<double>& expected) {
  std::vector<double> values = golden::valuesAsDouble(actual);
  if (values.size() != expected.size())
    return ::testing::AssertionFailure() << values.size() << " values, expected " << expected.size();
  double rtol = actual.dtype() == kFloat64 ? 1e-12 : 2e-6;
  for (size_t i = 0; i < values.size(); ++i)
    if (!(std::abs(values[i] - expected[i]) <= rtol * (std::abs(expected[i]) + 1e-3)))
      return ::testing::AssertionFailure()
             << "element " << i << " is " << values[i] << ", expected " << expected[i];
  return ::testing::AssertionSuccess();
}

// Runs kSteps steps from the golden inputs and compares every parameter after every step
// and the final state with the golden `name`.
inline void expectGoldenRun(const std::string& name, DType dtype,
                            const std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>&)>& make) {
  SCOPED_TRACE(name);
  const golden::OptimizerGolden& golden = findGolden(name);
  std::vector<Tensor> params = makeParams(dtype);
  std::unique_ptr<Optimizer> optimizer = make(params);
  for (int k = 0; k < kSteps; ++k) {
    setGrads(params, k);
    optimizer->step();
    for (size_t j = 0; j < params.size(); ++j)
      EXPECT_TRUE(closeTo(params[j], golden.trajectory[k][j])) << "parameter " << j << ", step " << k + 1;
  }
  // The same state names in the same order as PyTorch's.
  std::vector<std::string> keys, goldenKeys;
  for (size_t j = 0; j < params.size(); ++j)
    if (const OrderedDict<Tensor>* state = optimizer->state(params[j]))
      for (const auto& [stateName, value] : *state) keys.push_back(std::to_string(j) + "." + stateName);
  for (const auto& [key, values] : golden.state) goldenKeys.push_back(key);
  EXPECT_EQ(keys, goldenKeys);
  for (const auto& [key, values] : golden.state) {
    size_t dot = key.find('.');
    const Tensor& param = params[std::stoul(key.substr(0, dot))];
    const OrderedDict<Tensor>* state = optimizer->state(param);
    ASSERT_NE(state, nullptr) << key;
    const Tensor* value = state->find(key.substr(dot + 1));
    ASSERT_NE(value, nullptr) << key;
    EXPECT_TRUE(closeTo(*value, values)) << key;
  }
}

}  // namespace kiln::optim::testing
