#!/usr/bin/env python3
"""PyTorch's training step time for examples/fashion_mnist_mlp's model, on a CUDA device.

The model, batch and optimizer are the example's: a 784-256-256-10 MLP with ReLUs
(examples/common/FashionMnist.cpp makeMlp), cross_entropy, SGD with lr 0.05 and momentum 0.9
(examples/common/FashionMnist.h TrainingOptions), batches of 64. The data is random, of the
same shapes and dtypes (float32 images in [N, 784], int64 labels in [0, 10)): no dataset is
needed, and the step's cost does not depend on the values. The example also steps a cosine
schedule after each update; that is host arithmetic on the learning rate and is left out.

Each result is the median over --steps timed steps after --warmup untimed ones, each step
timed from a torch.cuda.synchronize() to the next, so a step's queued kernels are counted.
Prints one line per result:

    torch eager mlp step: 0.412 ms (median of 200, batch 64, NVIDIA H100 80GB HBM3)
    torch compile mlp step: 0.201 ms (median of 200, batch 64, NVIDIA H100 80GB HBM3)

Then, unless --no-extra: the card's copy bandwidth (torch's copy_ of 16M and 64M floats, GB/s of
bytes read and written), bench/traced's gelu chain on [rows, 1024] eager and
torch.compile'd, and softmax and layer_norm over those rows eager, timed as bench/cuda_step times Kiln's (median of 5 rounds of 20 calls between
synchronizes); and torchvision's mobilenet_v2 (10 classes) training step on 32x32 inputs,
batch 64, SGD with momentum, eager, median of 20.

Usage: python3 scripts/gpu/torch_mlp_step.py [--steps 200] [--warmup 20] [--batch-size 64]
       [--no-compile] [--no-extra] [--device cuda]
Exit status: 0 on success, 2 without a CUDA device (the message says why).
"""

import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

IN_FEATURES, HIDDEN, CLASSES = 784, 256, 10
LR, MOMENTUM = 0.05, 0.9


def make_mlp():
    return nn.Sequential(nn.Linear(IN_FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN),
                         nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def train_step(model, optimizer, x, y):
    optimizer.zero_grad()  # set_to_none, as kiln's default
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def median_ms(step, x, y, warmup, steps):
    for _ in range(warmup):
        step(x, y)
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step(x, y)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def queued_ms(fn):
    """Milliseconds a call takes when calls queue back to back: median of 5 rounds of 20."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        rounds.append((time.perf_counter() - start) * 1e3 / 20)
    return statistics.median(rounds)


def gelu_chain(x, bias):
    return F.gelu((x + bias) * 0.5, approximate="tanh") * 2.0


def bandwidth_rows(device, no_compile):
    compiled_chain = None if no_compile else torch.compile(gelu_chain)
    for rows in (16384, 65536):
        n = rows * 1024
        gb = 2 * 4 * n / 1e9
        x = torch.randn(rows, 1024, device=device)
        bias = torch.randn(1024, device=device)
        out = torch.empty_like(x)
        ms = queued_ms(lambda: out.copy_(x))
        print(f"torch copy {n >> 20}M: {gb / ms * 1e3:.1f} GB/s ({ms:.3f} ms)", flush=True)
        ms = queued_ms(lambda: gelu_chain(x, bias))
        print(f"torch gelu chain {n >> 20}M (eager): {gb / ms * 1e3:.1f} GB/s ({ms:.3f} ms)", flush=True)
        if compiled_chain is not None:
            ms = queued_ms(lambda: compiled_chain(x, bias))
            print(f"torch gelu chain {n >> 20}M (compile): {gb / ms * 1e3:.1f} GB/s ({ms:.3f} ms)",
                  flush=True)
        for name, fn in (("softmax rows", lambda: F.softmax(x, 1)),
                         ("layer_norm rows", lambda: F.layer_norm(x, (1024,), bias, bias))):
            ms = queued_ms(fn)
            print(f"torch {name} {n >> 20}M (eager): {gb / ms * 1e3:.1f} GB/s ({ms:.3f} ms)", flush=True)


def mobilenet_row(device, seed):
    try:
        import torchvision
    except ImportError as e:
        print(f"torch eager mobilenet_v2 step: SKIPPED (no torchvision: {e})")
        return
    torch.manual_seed(seed)
    model = torchvision.models.mobilenet_v2(num_classes=CLASSES).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=MOMENTUM)
    x = torch.randn(64, 3, 32, 32, device=device)
    y = torch.randint(0, CLASSES, (64,), device=device)
    ms = median_ms(lambda a, b: train_step(model, optimizer, a, b), x, y, 5, 20)
    print(f"torch eager mobilenet_v2 step: {ms:.3f} ms (median of 20, batch 64, 32x32)", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200, help="timed steps (default 200)")
    parser.add_argument("--warmup", type=int, default=20, help="untimed steps first (default 20)")
    parser.add_argument("--batch-size", type=int, default=64, help="examples per step (default 64)")
    parser.add_argument("--device", default="cuda", help="a CUDA device (default cuda)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile'd step")
    parser.add_argument("--no-extra", action="store_true",
                        help="skip the bandwidth and mobilenet_v2 rows")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0 or args.batch_size < 1:
        parser.error("--steps and --batch-size must be at least 1, --warmup at least 0")
    if not torch.cuda.is_available():
        print(f"torch_mlp_step: no CUDA device: torch {torch.__version__} sees none", file=sys.stderr)
        return 2
    device = torch.device(args.device)
    if device.type != "cuda":
        parser.error(f"--device {args.device}: this script times CUDA steps")

    torch.manual_seed(args.seed)
    x = torch.randn(args.batch_size, IN_FEATURES, device=device)
    y = torch.randint(0, CLASSES, (args.batch_size,), device=device)
    name = torch.cuda.get_device_name(device)
    where = f"median of {args.steps}, batch {args.batch_size}, {name}"

    torch.manual_seed(args.seed)
    model = make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    eager = median_ms(lambda a, b: train_step(model, optimizer, a, b), x, y, args.warmup, args.steps)
    print(f"torch eager mlp step: {eager:.3f} ms ({where})", flush=True)

    if not args.no_compile:
        torch.manual_seed(args.seed)
        model = make_mlp().to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
        # The forward and loss compiled (backward through AOTAutograd), and the optimizer
        # step compiled as its own function, as PyTorch's compile-the-optimizer recipe does.
        forward_loss = torch.compile(lambda a, b: F.cross_entropy(model(a), b))
        compiled_opt_step = torch.compile(optimizer.step)

        def compiled_step(a, b):
            optimizer.zero_grad()
            loss = forward_loss(a, b)
            loss.backward()
            compiled_opt_step()
            return loss

        start = time.perf_counter()
        compiled_step(x, y)  # compiles
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - start
        compiled = median_ms(compiled_step, x, y, args.warmup, args.steps)
        print(f"torch compile mlp step: {compiled:.3f} ms ({where}; first call {compile_s:.1f} s)",
              flush=True)
    if not args.no_extra:
        bandwidth_rows(device, args.no_compile)
        mobilenet_row(device, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
