#!/usr/bin/env python3
"""Plots the training curves the Fashion-MNIST examples write with --metrics PATH.

    python3 scripts/plot_metrics.py OUT.png eager.csv traced.csv [--smooth N] [--title TEXT]

Each CSV (run,epoch,step,loss,accuracy,samples_per_second; examples/common/Metrics.h) is
one curve, named by its run column (the file's name where two runs share one). Three
panels: training loss and samples per second per step (over windows of --smooth steps,
default 50: the mean loss, and the samples over the time they took) and test accuracy
per epoch. Needs python3-matplotlib (Debian); exits
with status 2 and says so when it is missing.
"""
import argparse
import csv
import os
import sys


def read_run(path):
    steps, losses, rates, epochs, accuracies = [], [], [], [], []
    name = None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            name = name or row["run"]
            if row["loss"]:
                steps.append(int(row["step"]))
                losses.append(float(row["loss"]))
                rates.append(float(row["samples_per_second"]))
            if row["accuracy"]:
                epochs.append(int(row["epoch"]))
                accuracies.append(float(row["accuracy"]))
    if not steps:
        sys.exit(f"plot_metrics: {path}: no training steps")
    return {"name": name, "steps": steps, "loss": losses, "rate": rates,
            "epochs": epochs, "accuracy": accuracies}


def moving_average(values, window):
    window = max(1, min(window, len(values)))
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def moving_rate(rates, window):
    """Samples per second over each window: the samples over the time they took (the
    harmonic mean of equal batches' rates), so that one slow step counts for its time; an
    arithmetic mean of rates would let the fast steps hide it."""
    return [1.0 / t for t in moving_average([1.0 / r for r in rates], window)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the PNG to write")
    parser.add_argument("csv", nargs="+", help="--metrics files, one curve each")
    parser.add_argument("--smooth", type=int, default=50, help="moving average window (steps)")
    parser.add_argument("--title", default="", help="the figure's title")
    args = parser.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"plot_metrics: {sys.executable} has no matplotlib (Debian: apt-get install "
              "python3-matplotlib, then run it with /usr/bin/python3)", file=sys.stderr)
        return 2

    runs = [read_run(p) for p in args.csv]
    names = [r["name"] for r in runs]
    for run, path in zip(runs, args.csv):
        if names.count(run["name"]) > 1:
            run["name"] = os.path.splitext(os.path.basename(path))[0]

    fig, (loss_ax, rate_ax, acc_ax) = plt.subplots(1, 3, figsize=(12, 3.6))
    for run in runs:
        loss_ax.plot(run["steps"], moving_average(run["loss"], args.smooth), label=run["name"])
        rate_ax.plot(run["steps"], moving_rate(run["rate"], args.smooth), label=run["name"])
        acc_ax.plot(run["epochs"], run["accuracy"], marker="o", label=run["name"])
    loss_ax.set(title="training loss", xlabel="step")
    rate_ax.set(title="samples / s (log scale)", xlabel="step", yscale="log")
    acc_ax.set(title="test accuracy (%)", xlabel="epoch")
    acc_ax.xaxis.get_major_locator().set_params(integer=True)
    for ax in (loss_ax, rate_ax, acc_ax):
        ax.grid(alpha=0.3)
        ax.legend()
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    tmp = f"{args.out}.tmp.{os.getpid()}.png"
    fig.savefig(tmp, dpi=80)
    os.replace(tmp, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
