#!/usr/bin/env python3
"""torch.jit.trace column of bench/traced: the same workloads, shapes and thread count.

Run by bench/Traced.cpp through popen; prints one "ROW<TAB>name<TAB>median ms" line per
workload (names as bench/traced spells them) and "INFO ..." lines. Each workload is a
torch.jit.trace of the same function; each repetition times a batch of calls of about
--target_ms, after warm-up calls (the profiling executor optimises on the first calls),
and the median of --reps repetitions is reported, as bench/Harness.cpp times.

The MLP training step traces the model's forward (torch.jit.trace cannot record
backward() or the optimizer); cross_entropy, zero_grad, backward and SGD's step run
eagerly around it, which is how torch.jit.trace is used for training.
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F


def timed(fn, reps, target_ms):
    for _ in range(3):  # warm-up: profiling runs, first-touch
        fn()
    t0 = time.perf_counter()
    fn()
    once = max((time.perf_counter() - t0) * 1e3, 1e-5)
    iters = int(min(max(target_ms / once, 1), 1e6))
    samples = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - t0) * 1e3 / iters)
    return statistics.median(samples)


def gelu_chain(x, b):
    return F.gelu((x + b) * 0.5, approximate="tanh") * 2.0


def softmax_rows(x):
    return torch.softmax(x, 1)


def layer_norm(x, w, b):
    return F.layer_norm(x, [1024], w, b)


def mixed_chain(x, b):
    t = (x + b) * 0.5
    t = (torch.tanh(t) + 1.0) * x
    t = torch.sigmoid(t) - 0.25
    return torch.sqrt(torch.abs(t)) * 3.0


def matmul(a, b):
    return torch.matmul(a, b)


def add(a, b):
    return a + b


def conv(groups, pad):
    def f(x, w):
        return F.conv2d(x, w, None, 1, pad, 1, groups)
    return f


def workloads():
    """(name, builder) pairs; a builder returns the callable to time."""
    def traced(fn, *shapes):
        inputs = [torch.randn(s) for s in shapes]
        t = torch.jit.trace(fn, inputs)
        return lambda: t(*inputs)

    rows = []
    for n in (1 << 20, 1 << 22, 1 << 24):
        rows.append((f"gelu chain {n >> 20}M", lambda n=n: traced(gelu_chain, (n // 1024, 1024), (1024,))))
    rows.append(("softmax rows [4096,1024]", lambda: traced(softmax_rows, (4096, 1024))))
    rows.append(("layer_norm [4096,1024]", lambda: traced(layer_norm, (4096, 1024), (1024,), (1024,))))
    rows.append(("mixed chain, 10 ops, 1 broadcast", lambda: traced(mixed_chain, (4096, 1024), (1024,))))

    def mlp():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                    torch.nn.ReLU(), torch.nn.Linear(256, 10))
        x = torch.randn(128, 784)
        y = torch.randint(0, 10, (128,))
        forward = torch.jit.trace(model, x)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def step():
            loss = F.cross_entropy(forward(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss
        return step
    rows.append(("MLP training step", mlp))
    for n in (256, 1024, 2048):
        rows.append((f"sgemm {n}", lambda n=n: traced(matmul, (n, n), (n, n))))
    rows.append(("conv2d 3x3", lambda: traced(conv(1, 1), (64, 32, 16, 16), (32, 32, 3, 3))))
    rows.append(("conv2d depthwise 3x3", lambda: traced(conv(96, 1), (64, 96, 16, 16), (96, 1, 3, 3))))
    rows.append(("dispatch", lambda: traced(add, (1,), (1,))))
    return rows


def wanted(name, filter_text):
    if not filter_text:
        return True
    return any(part and part in name for part in filter_text.split("|"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=9)
    p.add_argument("--target_ms", type=float, default=25)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--filter", default="")
    args = p.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    print(f"INFO torch {torch.__version__}, {torch.get_num_threads()} threads", flush=True)
    for name, build in workloads():
        if not wanted(name, args.filter):
            continue
        training = name == "MLP training step"
        with torch.set_grad_enabled(training):
            ms = timed(build(), args.reps, args.target_ms)
        print(f"ROW\t{name}\t{ms:.6g}", flush=True)

if __name__ == "__main__":
    main()
