// LibTorch's "Autograd in C++ frontend" tutorial (pytorch.org/tutorials/advanced/
// cpp_autograd), second part, "Computing higher-order gradients in C++", with second
// derivatives taken both ways LibTorch offers (torch::autograd::grad and
// backward(..., create_graph)). Only the include differs from a LibTorch program; each
// value is checked against its closed form.
#include "kiln/torch.h"

#include <iostream>

#include "test/compat/CompatCheck.h"

using compat::all_close;
using compat::check;

int main() {
  torch::manual_seed(0);

  // d/dx x^3 = 3x^2 with create_graph, so that it can be differentiated again: 6x.
  auto x = torch::tensor({-1.5, 0.5, 2.0}, torch::requires_grad());
  auto y = x.pow(3);
  auto dy_dx = torch::autograd::grad({y}, {x}, /*grad_outputs=*/{torch::ones_like(y)},
                                     /*retain_graph=*/true, /*create_graph=*/true)[0];
  std::cout << dy_dx << std::endl;
  check(dy_dx.grad_fn() != nullptr, "dy/dx has a grad_fn");
  auto d2y_dx2 = torch::autograd::grad({dy_dx}, {x}, {torch::ones_like(dy_dx)})[0];
  std::cout << d2y_dx2 << std::endl;
  check(all_close(dy_dx, 3 * x.detach().pow(2)), "dy/dx = 3x^2");
  check(all_close(d2y_dx2, 6 * x.detach()), "d2y/dx2 = 6x");

  // The same through backward(): x.grad() keeps its history under create_graph.
  auto t = torch::randn({4}, torch::requires_grad());
  auto s = t.tanh().sum();
  s.backward({}, /*retain_graph=*/true, /*create_graph=*/true);
  auto first = t.grad();
  check(first.requires_grad(), "t.grad() requires grad after backward(create_graph)");
  auto second = torch::autograd::grad({first.sum()}, {t})[0];
  auto th = t.detach().tanh();
  check(all_close(first.detach(), 1 - th * th), "d/dt sum(tanh t) = 1 - tanh^2 t");
  check(all_close(second, -2 * th * (1 - th * th)), "d2/dt2 sum(tanh t) = -2 tanh t (1 - tanh^2 t)");

  // The tutorial: a gradient penalty added to an MSE loss.
  auto model = torch::nn::Linear(4, 3);

  auto input = torch::randn({3, 4}).requires_grad_(true);
  auto output = model(input);

  // Calculate loss
  auto target = torch::randn({3, 3});
  auto loss = torch::nn::MSELoss()(output, target);

  // Use norm of gradients as penalty
  auto grad_output = torch::ones_like(output);
  auto gradient = torch::autograd::grad({output}, {input}, /*grad_outputs=*/{grad_output},
                                        /*retain_graph=*/true, /*create_graph=*/true)[0];
  auto gradient_penalty = torch::pow((gradient.norm(2, /*dim=*/1) - 1), 2).mean();

  // Add gradient penalty to loss
  auto combined_loss = loss + gradient_penalty;
  combined_loss.backward();

  std::cout << input.grad() << std::endl;

  // Each row of d(sum output)/d(input) is w = weight.sum(0), whatever the input, so the
  // penalty is (|w| - 1)^2 and adds 2 (|w| - 1) w / |w| to every row of weight's gradient.
  {
    torch::NoGradGuard no_grad;
    auto weight = model->weight;
    auto residual = (output - target) * (2.0 / 9);
    auto w = weight.sum(0);
    auto n = w.norm().item<double>();
    check(all_close(gradient, w.unsqueeze(0).expand({3, 4})), "the gradient is weight.sum(0) per row");
    check(all_close(input.grad(), residual.mm(weight)), "input.grad() is the MSE loss's alone");
    auto expected = residual.t().mm(input) + (w * (2 * (n - 1) / n)).unsqueeze(0).expand({3, 4});
    check(all_close(weight.grad(), expected), "weight.grad() includes the penalty's gradient");
    check(all_close(model->bias.grad(), residual.sum(0)), "bias.grad() is the MSE loss's alone");
  }

  return compat::exit_code();
}
