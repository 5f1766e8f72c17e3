// trace-examples <name> [--locations]: traces one representative function and prints the
// recorded program, for the lit tests beside this file to FileCheck.
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string>

#include "kiln/kiln.h"

namespace {

using namespace kiln;

// Each example traces its function, calls it as many times as it needs, and returns the
// recorded program's text.
using Example = std::function<std::string(bool locations)>;

std::string affine(bool locations) {
  manual_seed(0);
  Tensor w = randn({4, 3}), b = randn({3});
  auto traced = jit::trace([&](Tensor x) { return relu(add(matmul(x, w), b)); });
  traced(randn({2, 4}));
  return traced.graph_str(locations);
}

std::string stateUpdate(bool locations) {
  Tensor count = zeros({1});
  auto traced = jit::trace([&](Tensor x) {
    count.add_(1.0);
    return add(x, count);
  }, {.symbolic = true});
  traced(zeros({1}));
  return traced.graph_str(locations);
}

std::string trainStep(bool locations) {
  manual_seed(0);
  nn::Sequential model(nn::Linear(4, 3));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  auto step = jit::trace([&](Tensor x, Tensor y) {
    Tensor loss = cross_entropy(model->forward(x), y);
    opt.zero_grad(/*set_to_none=*/true);
    loss.backward();
    opt.step();
    return loss;
  }, {.symbolic = true});
  step.name_module("model", model).name_optimizer("opt", opt);
  for (int i = 0; i < 2; ++i) step(randn({2, 4}), randint(0, 3, {2}));  // warm-up, then kept
  return step.graph_str(locations);
}

std::string callback(bool locations) {
  int count = 0;
  auto traced = jit::trace([&](Tensor x) {
    x = add(x, 1.0);
    return jit::exclude_from_trace(
        [&count](const Tensor& y) { return count++ % 2 == 0 ? add(y, 1.0) : y; }, x);
  });
  traced(ones({2}));
  return traced.graph_str(locations);
}

std::string captured(bool locations) {
  Tensor w = full({2, 2}, 0.5);
  auto traced = jit::trace([&](Tensor x) { return matmul(x, w); }, {.capture_as_const = true});
  traced(ones({3, 2}));
  return traced.graph_str(locations);
}

std::string dropoutMask(bool locations) {
  manual_seed(3);
  auto traced = jit::trace([](Tensor x) { return kiln::dropout(x, 0.5, true); });
  traced(ones({4}));
  return traced.graph_str(locations);
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, Example> examples = {
      {"affine", affine},     {"state-update", stateUpdate}, {"train-step", trainStep},
      {"callback", callback}, {"captured", captured},        {"dropout", dropoutMask},
  };
  bool locations = argc == 3 && std::strcmp(argv[2], "--locations") == 0;
  auto it = argc >= 2 ? examples.find(argv[1]) : examples.end();
  if (it == examples.end() || (argc == 3 && !locations) || argc > 3) {
    std::fprintf(stderr, "usage: trace-examples <name> [--locations]; names:");
    for (const auto& [name, example] : examples) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  try {
    std::cout << it->second(locations);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace-examples: %s\n", e.what());
    return 1;
  }
  return 0;
}
