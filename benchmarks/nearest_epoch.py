"""One approximate ("nearest") epoch and its candidate search, timed apart.

On ``mnist-deformed`` of ``--n`` images (d = 32, batches of 1024 anchors, Adam), builds the
strategy ``NCA`` uses for neighbours "nearest" (``training.candidates.CandidateEpochs``) and
prints the seconds of a first epoch, of one candidate search (``knn.neighbour_lists`` on
the current embedding) and of a second epoch, which searches again; ``--profile`` adds
torch.profiler's tables of a third. The clock waits for the device before each reading.

    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/nearest_epoch.py --n 250000
    NCA_DATA_DIR=/path/to/data python benchmarks/nearest_epoch.py --n 250000 --device cuda --profile
    NCA_DATA_DIR=/path/to/data python benchmarks/nearest_epoch.py --quick   # all of MNIST, on the CPU

The seconds are kept in results/nearest_epoch.json (``_results``) under the device and n.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from _results import Table, key, machine
from exact_epoch import _clock, _start_map

from nca_core import datasets
from nca_core.config.plan import make_plan
from nca_core.config.rules import DataShape
from nca_core.training.encoders import LinearEncoder
from nca_core.training.epochs import make_epochs
from nca_core.training.problem import Problem
from nca_core.util.device import resolve_device


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=250000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--quick", action="store_true", help="all of MNIST (60,000) on --device; kept nowhere")
    args = parser.parse_args()
    if args.quick:
        args.n, args.profile = 60000, False
    device = resolve_device(args.device)
    data = datasets.load("mnist-deformed", download=False, n_train=args.n, seed=0)
    X = torch.as_tensor(np.asarray(data.X_train, dtype=np.float32)).to(device)
    y = torch.as_tensor(np.asarray(data.y_train)).long().to(device)
    problem = Problem.sorted_by_class(LinearEncoder(_start_map(X, 32)), X, y)
    shape = DataShape(len(X), X.shape[1], int(y.max()) + 1)
    plan = make_plan({"optimizer": "adam", "learning_rate": 0.003, "batch_size": 1024, "neighbors": "nearest",
                      "n_components": 32, "device": str(device)}, shape)  # fmt: skip
    epochs = make_epochs(problem, plan, torch.Generator().manual_seed(0))
    print(f"machine: {machine(str(device))}\n")
    table = Table("nearest_epoch", key(device.type, args.n), ["measure", "seconds"], formats={"seconds": "{:.2f}"},
                  device=str(device), keep=not args.quick)  # fmt: skip
    table.notes.append(f"mnist-deformed n = {args.n:,}, d = 32, batches of 1024 anchors")
    for name, work in (("first epoch", lambda: epochs.run(1)), ("candidate search", lambda: epochs.prepare(2)),
                       ("second epoch (searches again)", lambda: epochs.run(2))):  # fmt: skip
        start = _clock(device)
        work()
        table.add(name, _clock(device) - start)
    table.save()
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
        with profile(activities=activities) as trace:
            epochs.run(3)
            _clock(device)
        print(trace.key_averages().table(sort_by="cpu_time_total", row_limit=22))
        if device.type == "cuda":
            print(trace.key_averages().table(sort_by="device_time_total", row_limit=12))


if __name__ == "__main__":
    main()
