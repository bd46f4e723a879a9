"""Training cost as the data grows: exact and approximate neighbours, 60k to a million points.

For each N (MNIST's 60,000 training images, grown by deformed copies beyond that:
``datasets.load("mnist-deformed", n_train=N, seed=0)``), fits
``NCA(n_components=32, random_state=0)`` with neighbours "all" (exact) where N is at most
``--exact-max`` and "nearest" (approximate) always, each fit in its own process, and prints
a Markdown table: epochs, seconds per epoch (training time between the first and last
snapshot, so the PCA start is left out), the whole fit, peak RSS of the process (data
included) and 5-NN test error on MNIST's test set through the index ``nca_core.knn``
picks. Then the approximate path's seconds per epoch per 1,000 points, whose flatness is
the linear growth, and at the first N the approximate-against-exact ratios.

    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/scaling.py                 # 60k, 250k, 1M
    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/scaling.py --sizes 60000
    NCA_DATA_DIR=/path/to/data python benchmarks/scaling.py --device cuda   # on a GPU

On a GPU the table adds the device's peak memory (``torch.cuda.max_memory_allocated``).
The table is kept in results/scaling.json (``_results``) under the device, and the sizes
where they are not the default.

``quick()`` (``--quick``, and ``make bench``) fits one epoch of each on all of MNIST and
reports the per-epoch speed-up and the 5-NN error difference after that epoch.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
import torch
from _results import Table, key, machine, print_quick

from nca_core import NCA, datasets
from nca_core.search import knn
from nca_core.util.device import resolve_device

SPEED_TARGET = 5.0
ERROR_TARGET = 0.1  # points of 5-NN test error


def fit_once(
    n_train: int, neighbors: str, max_iter: int | None = None, device: str = "cpu", seed: int = 0,
    n_candidates: int | None = None,
) -> dict:
    """One fit on mnist-deformed of ``n_train`` images, measured in this process."""
    data = datasets.load("mnist-deformed", download=False, n_train=n_train, seed=0)
    model = NCA(
        n_components=32, random_state=seed, neighbors=neighbors, max_iter=max_iter, device=device,
        n_candidates=n_candidates,
    )
    start = time.perf_counter()
    times = [(snapshot.epoch, time.perf_counter()) for snapshot in model.fit_iter(data.X_train, data.y_train)]
    fit_seconds = time.perf_counter() - start
    (first_epoch, first), (last_epoch, last) = times[0], times[-1]
    accuracy = knn.knn_accuracy(
        model.transform(data.X_train), data.y_train, model.transform(data.X_test), data.y_test, 5, device=device
    )
    on_gpu = torch.device(device).type == "cuda"
    return {
        "n": n_train, "neighbors": neighbors, "epochs": last_epoch,
        "epoch_seconds": (last - first) / max(1, last_epoch - first_epoch), "fit_seconds": fit_seconds,
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "error": 100 * (1 - accuracy),
        "gpu_peak_gb": torch.cuda.max_memory_allocated() / 2**30 if on_gpu else None,
    }  # fmt: skip


def in_subprocess(n_train: int, neighbors: str, **options) -> dict:
    """``fit_once`` in a fresh process, so each peak RSS is its own."""
    arguments = json.dumps({"n_train": n_train, "neighbors": neighbors, **options})
    args = [sys.executable, __file__, "--one", arguments]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def quick() -> list[dict]:
    """One epoch of each on all of MNIST: the speed-up and the error difference."""
    try:
        datasets.load("mnist", download=False)
    except datasets.DatasetError:
        return []
    exact, nearest = (in_subprocess(60000, neighbors, max_iter=1) for neighbors in ("all", "nearest"))
    speed = exact["epoch_seconds"] / nearest["epoch_seconds"]
    gap = nearest["error"] - exact["error"]
    figures = (
        f"epoch {exact['epoch_seconds']:.1f} s / {nearest['epoch_seconds']:.1f} s; "
        f"5-NN error after it {exact['error']:.2f}% / {nearest['error']:.2f}%"
    )
    return [
        {"measure": "exact / approximate epoch (MNIST 60k, d=32)", "ratio": speed, "value": figures,
         "target": f">= {SPEED_TARGET}x", "met": speed >= SPEED_TARGET},
        {"measure": "approximate - exact 5-NN error after one epoch (points)", "ratio": None,
         "value": f"{gap:+.2f}", "target": f"<= {ERROR_TARGET} (after all epochs)", "met": None},
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[60000, 250000, 1000000])
    parser.add_argument("--exact-max", type=int, default=60000, help="largest N trained exactly as well")
    parser.add_argument("--device", default="cpu", help='"cpu" (default), "cuda" or "auto"')
    parser.add_argument("--one", help=argparse.SUPPRESS)  # fit_once's arguments, as JSON
    parser.add_argument("--quick", action="store_true", help="quick(): one epoch of each on MNIST; kept nowhere")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(fit_once(**json.loads(args.one))))
        return
    if args.quick:
        print_quick("scaling", quick())
        return
    device = str(resolve_device(args.device))
    gpu = device.startswith("cuda")
    print(f"machine: {machine(device)}\n")
    defaults = parser.parse_args([])
    sizes = None if args.sizes == defaults.sizes else args.sizes
    exact_max = None if args.exact_max == defaults.exact_max else f"exact{args.exact_max}"
    columns = ["N", "neighbours", "epochs", "s / epoch", "fit s", "peak RSS GB", *(["GPU peak GB"] * gpu), "5-NN test error"]
    table = Table("scaling", key(device.split(":")[0], sizes, exact_max), columns, device=device,
                  formats={"N": "{:,}", "s / epoch": "{:.2f}", "fit s": "{:.1f}", "peak RSS GB": "{:.2f}",
                           "GPU peak GB": "{:.2f}", "5-NN test error": "{:.2f}%"})  # fmt: skip
    rows = []
    for n in args.sizes:
        for neighbors in ("all", "nearest") if n <= args.exact_max else ("nearest",):
            row = in_subprocess(n, neighbors, device=device)
            rows.append(row)
            table.add(n, neighbors, row["epochs"], row["epoch_seconds"], row["fit_seconds"], row["peak_gb"],
                      **({"GPU peak GB": row["gpu_peak_gb"]} if gpu else {}), **{"5-NN test error": row["error"]})  # fmt: skip
    approximate = [r for r in rows if r["neighbors"] == "nearest"]
    per_point = ", ".join(f"{r['n']:,}: {1000 * r['epoch_seconds'] / r['n']:.3f}" for r in approximate)
    table.note(f"approximate seconds per epoch per 1,000 points: {per_point}")
    exact = [r for r in rows if r["neighbors"] == "all"]
    if exact:
        e, a = exact[0], next(r for r in approximate if r["n"] == exact[0]["n"])
        table.note(
            f"at N = {e['n']:,}: approximate epochs {e['epoch_seconds'] / a['epoch_seconds']:.1f}x faster "
            f"(target >= {SPEED_TARGET}x), 5-NN error {a['error'] - e['error']:+.2f} points "
            f"(target <= {ERROR_TARGET})"
        )
    table.save()


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
