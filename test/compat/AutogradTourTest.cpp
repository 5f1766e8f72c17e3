// LibTorch's "Autograd in C++ frontend" tutorial (pytorch.org/tutorials/advanced/
// cpp_autograd), first part, as a LibTorch user writes it: only the include differs. Each
// printed value is also checked against the tutorial's.
#include "kiln/torch.h"

#include <cmath>
#include <iostream>

#include "test/compat/CompatCheck.h"

using compat::all_close;
using compat::check;

int main() {
  torch::manual_seed(0);

  // Create a tensor and set torch::requires_grad() to track computation with it.
  auto x = torch::ones({2, 2}, torch::requires_grad());
  std::cout << x << std::endl;

  // Do a tensor operation: y was created as a result of an operation, so it has a grad_fn.
  auto y = x + 2;
  std::cout << y << std::endl;
  std::cout << y.grad_fn()->name() << std::endl;
  check(y.grad_fn() != nullptr && x.grad_fn() == nullptr, "y has a grad_fn, x does not");

  // Do more operations on y.
  auto z = y * y * 3;
  auto out = z.mean();
  std::cout << z << std::endl;
  std::cout << out << std::endl;
  check(out.item<float>() == 27.0f, "out = mean(3 (x + 2)^2) = 27");

  // .requires_grad_( ... ) changes an existing tensor's requires_grad flag in place.
  auto a = torch::randn({2, 2});
  a = ((a * 3) / (a - 1));
  std::cout << a.requires_grad() << std::endl;
  check(!a.requires_grad(), "a does not require grad");
  a.requires_grad_(true);
  std::cout << a.requires_grad() << std::endl;
  auto b = (a * a).sum();
  std::cout << b.grad_fn()->name() << std::endl;
  check(a.requires_grad() && b.requires_grad(), "b requires grad after requires_grad_");

  // Backprop: out contains a single scalar, so backward() needs no gradient argument.
  out.backward();
  std::cout << x.grad() << std::endl;
  // d(out)/dx = 3 (x + 2) / 2 = 4.5 everywhere.
  check(all_close(x.grad(), torch::full({2, 2}, 4.5)), "x.grad() is 4.5 everywhere");

  // A vector-Jacobian product: y is not a scalar, so backward takes the vector.
  x = torch::randn({3}, torch::requires_grad());
  y = x * 2;
  int doublings = 1;
  while (y.norm().item<double>() < 1000) {
    y = y * 2;
    ++doublings;
  }
  std::cout << y << std::endl;
  auto v = torch::tensor({0.1, 1.0, 0.0001}, torch::kFloat);
  y.backward(v);
  std::cout << x.grad() << std::endl;
  check(all_close(x.grad(), v * std::pow(2.0, doublings)), "x.grad() = v * 2^doublings");

  // Stop autograd from tracking history with NoGradGuard, or with detach().
  std::cout << x.requires_grad() << std::endl;
  std::cout << x.pow(2).requires_grad() << std::endl;
  check(x.pow(2).requires_grad(), "x.pow(2) requires grad");
  {
    torch::NoGradGuard no_grad;
    std::cout << x.pow(2).requires_grad() << std::endl;
    check(!x.pow(2).requires_grad(), "x.pow(2) under NoGradGuard does not require grad");
  }
  std::cout << x.requires_grad() << std::endl;
  y = x.detach();
  std::cout << y.requires_grad() << std::endl;
  std::cout << x.eq(y).all().item<bool>() << std::endl;
  check(!y.requires_grad() && x.eq(y).all().item<bool>(), "detach keeps the values, not the history");

  return compat::exit_code();
}
