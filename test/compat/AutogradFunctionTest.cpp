// LibTorch's "Autograd in C++ frontend" tutorial (pytorch.org/tutorials/advanced/
// cpp_autograd), third part, "Using custom autograd function in C++": its LinearFunction
// (with the optional bias left out, so backward returns an undefined third gradient)
// and MulConstant (a double argument through saved_data), as the tutorial writes them.
// Only the include differs from a LibTorch program; each gradient is checked against its
// closed form, and the same with the bias given.
#include "kiln/torch.h"

#include <iostream>

#include "test/compat/CompatCheck.h"

using namespace torch::autograd;

// Inherit from Function
class LinearFunction : public Function<LinearFunction> {
 public:
  // Note that both forward and backward are static functions

  // bias is an optional argument
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor weight,
                               torch::Tensor bias = torch::Tensor()) {
    ctx->save_for_backward({input, weight, bias});
    auto output = input.mm(weight.t());
    if (bias.defined()) {
      output += bias.unsqueeze(0).expand_as(output);
    }
    return output;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    auto input = saved[0];
    auto weight = saved[1];
    auto bias = saved[2];

    auto grad_output = grad_outputs[0];
    auto grad_input = grad_output.mm(weight);
    auto grad_weight = grad_output.t().mm(input);
    auto grad_bias = torch::Tensor();
    if (bias.defined()) {
      grad_bias = grad_output.sum(0);
    }

    return {grad_input, grad_weight, grad_bias};
  }
};

class MulConstant : public Function<MulConstant> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor tensor, double constant) {
    // ctx is a context object that can be used to stash information
    // for backward computation
    ctx->saved_data["constant"] = constant;
    return tensor * constant;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    // We return as many input gradients as there were arguments.
    // Gradients of non-tensor arguments to forward must be `torch::Tensor()`.
    return {grad_outputs[0] * ctx->saved_data["constant"].toDouble(), torch::Tensor()};
  }
};

using compat::all_close;
using compat::check;

int main() {
  torch::manual_seed(0);
  {
    auto x = torch::randn({2, 3}).requires_grad_();
    auto weight = torch::randn({4, 3}).requires_grad_();
    auto y = LinearFunction::apply(x, weight);
    y.sum().backward();

    std::cout << x.grad() << std::endl;
    std::cout << weight.grad() << std::endl;
    // d sum(x wᵀ) / dx = ones(2, 4) w, / dw = ones(4, 2) x
    check(all_close(x.grad(), torch::ones({2, 4}).mm(weight.detach())), "x.grad() = 1 w");
    check(all_close(weight.grad(), torch::ones({4, 2}).mm(x.detach())), "weight.grad() = 1ᵀ x");
  }
  {
    auto x = torch::randn({2, 3}).requires_grad_();
    auto weight = torch::randn({4, 3}).requires_grad_();
    auto bias = torch::randn({4}).requires_grad_();
    auto y = LinearFunction::apply(x, weight, bias);
    y.sum().backward();
    check(all_close(y, x.detach().mm(weight.detach().t()) + bias.detach()), "y = x wᵀ + b");
    check(bias.grad().defined() && all_close(bias.grad(), torch::full({4}, 2.0)), "bias.grad() = 2");
  }
  {
    auto x = torch::randn({2}).requires_grad_();
    auto y = MulConstant::apply(x, 5.5);
    y.sum().backward();

    std::cout << x.grad() << std::endl;
    check(all_close(x.grad(), torch::full({2}, 5.5)), "x.grad() = 5.5");
  }
  return compat::exit_code();
}
