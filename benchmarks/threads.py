"""Seconds per training epoch on one and on two torch threads, alone and beside a busy core.

The app trains small sets on one thread per job and large ones on a share of the cores
(`app_pages/ui/state.threads_for`); this is the measurement behind that rule. Each case
runs in its own process with the page's recommended settings; "beside a busy core" starts
a process that spins on one core for the whole case, as a browser redrawing a chart does.

    python benchmarks/threads.py                                   # rings, digits
    NCA_DATA_DIR=../shared/data python benchmarks/threads.py --datasets rings usps mnist
"""

from __future__ import annotations

import argparse
import subprocess
import sys

CASE = """
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
from nca_core.datasets import load
from nca_core.runs.run import Run, recommended_config
data = load(sys.argv[2])
run = Run(recommended_config(data).replace(max_iter=int(sys.argv[3])), data)
stream = run.stream()
next(stream)  # epoch 0 (the starting map) is set-up, not training
started = time.perf_counter()
epochs = sum(1 for _ in stream)
print((time.perf_counter() - started) / epochs)
"""

SPIN = "import time\nend = time.monotonic() + 3600\nwhile time.monotonic() < end: pass"


def seconds_per_epoch(threads: int, dataset: str, epochs: int, busy: bool) -> float:
    spinner = subprocess.Popen([sys.executable, "-c", SPIN]) if busy else None
    try:
        out = subprocess.run(
            [sys.executable, "-c", CASE, str(threads), dataset, str(epochs)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    return float(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datasets", nargs="+", default=["rings", "digits"])
    parser.add_argument("--epochs", type=int, default=None, help="default: 30, or 2 for MNIST")
    args = parser.parse_args()
    print("| dataset | busy core beside | s/epoch, 1 thread | s/epoch, 2 threads | 1 thread / 2 threads |")
    print("| --- | --- | --- | --- | --- |")
    for dataset in args.datasets:
        epochs = args.epochs or (2 if dataset == "mnist" else 30)
        for busy in (False, True):
            one, two = (seconds_per_epoch(t, dataset, epochs, busy) for t in (1, 2))
            print(f"| {dataset} | {'yes' if busy else 'no'} | {one:.4f} | {two:.4f} | {one / two:.2f} |")


if __name__ == "__main__":
    main()
