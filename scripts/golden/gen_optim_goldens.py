#!/usr/bin/python3
"""Generates test/unit/frontend/optim/OptimGoldens.h: PyTorch 1.13's optimizer trajectories
(SGD, Adam, AdamW with the single-tensor updates, foreach=False) and learning-rate
schedules (StepLR, CosineAnnealingLR) for test/unit/frontend/optim/*Test.cpp.

    /usr/bin/python3 scripts/golden/gen_optim_goldens.py   # needs python3-torch

Inputs are closed-form so the C++ tests rebuild them exactly (OptimTestSupport.h):
parameter j starts at INITIAL[j]; before step k its gradient is grad_values(j, k) in
float64, converted to the case's dtype. Each case records every parameter after every step
and the final optimizer state. The options of each case are written again in the C++ test
that runs it, under the same name.
"""

import math
import os
import warnings

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                   "test", "unit", "frontend", "optim", "OptimGoldens.h")

STEPS = 5
INITIAL = [([0.5, -1.25, 2.0, 0.0, -0.75, 1.5], [2, 3]), ([0.3, -0.2, 0.1, 0.7], [4])]


def grad_values(j, k):
    # Shrinking gradients make amsgrad's running maximum differ from the current average.
    n = len(INITIAL[j][0])
    return [math.sin(1.3 * i + 0.7 * k + j) / (1 + 0.5 * k) for i in range(n)]


def make_params(dtype):
    return [torch.tensor(v, dtype=torch.float64).reshape(s).to(dtype) for v, s in INITIAL]


def run(name, dtype, make_optimizer):
    params = make_params(dtype)
    opt = make_optimizer(params)
    trajectory = []
    for k in range(STEPS):
        for j, p in enumerate(params):
            p.grad = torch.tensor(grad_values(j, k), dtype=torch.float64).reshape(p.shape).to(dtype)
        opt.step()
        trajectory.append([p.detach().reshape(-1).tolist() for p in params])
    state = []
    for j, p in enumerate(params):
        for key, value in opt.state[p].items():
            if value is None:
                continue
            state.append(("%d.%s" % (j, key), value.detach().reshape(-1).tolist()))
    return name, trajectory, state


# Options as the C++ tests write them (OptimizerTest.cpp, same names).
SGD_CASES = [
    ("sgd_plain", torch.float64, lambda ps: torch.optim.SGD(ps, lr=0.1, foreach=False)),
    ("sgd_momentum", torch.float64, lambda ps: torch.optim.SGD(
        ps, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, foreach=False)),
    ("sgd_nesterov", torch.float64, lambda ps: torch.optim.SGD(
        ps, lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.05, foreach=False)),
    ("sgd_maximize_f32", torch.float32, lambda ps: torch.optim.SGD(
        ps, lr=0.1, momentum=0.5, maximize=True, foreach=False)),
    ("sgd_groups", torch.float64, lambda ps: torch.optim.SGD(
        [{"params": [ps[0]]}, {"params": [ps[1]], "lr": 0.01, "momentum": 0.0}],
        lr=0.1, momentum=0.9, foreach=False)),
]

ADAM_CASES = [
    ("adam", torch.float64, lambda ps: torch.optim.Adam(ps, lr=0.01, foreach=False)),
    ("adam_amsgrad_wd", torch.float64, lambda ps: torch.optim.Adam(
        ps, lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=True,
        foreach=False)),
    ("adam_f32", torch.float32, lambda ps: torch.optim.Adam(ps, lr=0.01, foreach=False)),
    ("adamw", torch.float64, lambda ps: torch.optim.AdamW(
        ps, lr=0.01, weight_decay=0.1, foreach=False)),
    ("adamw_amsgrad_maximize", torch.float64, lambda ps: torch.optim.AdamW(
        ps, lr=0.01, weight_decay=0.05, amsgrad=True, maximize=True, foreach=False)),
    # The capturable form on the CPU: PyTorch 1.13 takes the same branch for
    # differentiable=True (capturable=True asserts CUDA); the parameters do not require
    # grad, so nothing is recorded.
    ("adam_capturable_f32", torch.float32, lambda ps: torch.optim.Adam(
        ps, lr=0.01, differentiable=True, foreach=False)),
    ("adam_capturable_amsgrad", torch.float64, lambda ps: torch.optim.Adam(
        ps, lr=0.01, weight_decay=0.1, amsgrad=True, differentiable=True, foreach=False)),
]

EPOCHS = 16
GROUP_LRS = [0.1, 0.02]


def schedule(name, make_schedulers, closed_form=False):
    params = [torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)]
    opt = torch.optim.SGD([{"params": [params[0]], "lr": GROUP_LRS[0]},
                           {"params": [params[1]], "lr": GROUP_LRS[1]}], lr=1.0)
    schedulers = make_schedulers(opt)
    lrs = [schedulers[-1].get_last_lr()]
    for epoch in range(1, EPOCHS):
        opt.step()
        for s in schedulers:
            if closed_form:
                s.step(epoch)
            else:
                s.step()
        lrs.append(schedulers[-1].get_last_lr())
    return name, lrs


SCHEDULES = [
    ("step_lr", lambda o: [torch.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5)]),
    ("step_lr_closed", lambda o: [torch.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.5)],
     True),
    ("cosine", lambda o: [torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.001)]),
    ("cosine_closed",
     lambda o: [torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.001)], True),
    # Recursive forms chain: both scale the rates the other left.
    ("cosine_then_step", lambda o: [
        torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=5, eta_min=0.0),
        torch.optim.lr_scheduler.StepLR(o, step_size=4, gamma=0.3)]),
]


def fmt(v):
    return "%.17g" % v


def fmt_list(values):
    return "{" + ", ".join(fmt(v) for v in values) + "}"


def main():
    torch.set_default_dtype(torch.float32)
    warnings.simplefilter("ignore")  # step(epoch) is deprecated
    lines = [
        "// PyTorch %s's optimizer trajectories and learning-rate schedules." % torch.__version__,
        "// Generated by scripts/golden/gen_optim_goldens.py; do not edit by hand.",
        "#pragma once",
        "",
        "#include <string>",
        "#include <utility>",
        "#include <vector>",
        "",
        "namespace kiln::golden {",
        "",
        "struct OptimizerGolden {",
        "  std::string name;",
        "  // trajectory[k][j]: parameter j (flattened) after step k + 1.",
        "  std::vector<std::vector<std::vector<double>>> trajectory;",
        "  // The final state as \"<parameter>.<name>\" and its values (flattened).",
        "  std::vector<std::pair<std::string, std::vector<double>>> state;",
        "};",
        "",
        "struct ScheduleGolden {",
        "  std::string name;",
        "  // get_last_lr() at epoch 0 (construction) through %d." % (EPOCHS - 1),
        "  std::vector<std::vector<double>> lrs;",
        "};",
        "",
        "inline const std::vector<OptimizerGolden>& optimizerGoldens() {",
        "  static const std::vector<OptimizerGolden> goldens = {",
    ]
    for name, dtype, make in SGD_CASES + ADAM_CASES:
        name, trajectory, state = run(name, dtype, make)
        lines.append("      {\"%s\"," % name)
        lines.append("       {")
        for step in trajectory:
            lines.append("           {" + ", ".join(fmt_list(p) for p in step) + "},")
        lines.append("       },")
        lines.append("       {")
        for key, values in state:
            lines.append("           {\"%s\", %s}," % (key, fmt_list(values)))
        lines.append("       }},")
    lines += ["  };", "  return goldens;", "}", "",
              "inline const std::vector<ScheduleGolden>& scheduleGoldens() {",
              "  static const std::vector<ScheduleGolden> goldens = {"]
    for case in SCHEDULES:
        name, lrs = schedule(*case)
        lines.append("      {\"%s\", {%s}}," % (name, ", ".join(fmt_list(l) for l in lrs)))
    lines += ["  };", "  return goldens;", "}", "", "}  // namespace kiln::golden", ""]
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
