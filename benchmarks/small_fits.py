"""Small problems on each device: where "auto" should send them.

Fits ``NCA(2, random_state=0)`` (L-BFGS; the whole-matrix float64 engine on the CPU up to
400 points) on iris, wine and digits, standardised, on every device given, and prints the
median of three fits; then scikit-learn's warm-start check on iris (one more iteration
after a warm-started fit moves the map by less than 3.0, summed absolute change) for each
device and dtype. The devices are named explicitly, so "auto" plays no part.

    python benchmarks/small_fits.py --devices cpu cuda
    python benchmarks/small_fits.py --quick     # iris and wine on the CPU; kept nowhere

Both tables are kept in results/small_fits.json (``_results``) under the devices.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _results import Table, machine
from sklearn.datasets import load_digits, load_iris, load_wine

from nca_core import NCA

SETS = {"iris": load_iris, "wine": load_wine, "digits": load_digits}


def fit_seconds(X, y, device: str, repeats: int = 3) -> tuple[float, int]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        model = NCA(2, random_state=0, device=device).fit(X, y)
        times.append(time.perf_counter() - start)
    return statistics.median(times), model.n_iter_


def warm_step(device: str, dtype: str) -> float:
    """Summed absolute change of the map from one warm-started iteration after a fit on iris
    (rows in scikit-learn's test order)."""
    iris = load_iris()
    order = np.random.RandomState(0).permutation(len(iris.target))
    X, y = iris.data[order], iris.target[order]
    model = NCA(warm_start=True, random_state=0, device=device, dtype=dtype).fit(X, y)
    before = model.components_.copy()
    model.max_iter = 1
    model.fit(X, y)
    return float(np.abs(model.components_ - before).sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", nargs="+", default=["cpu"])
    parser.add_argument("--quick", action="store_true", help="iris and wine on the CPU; kept nowhere")
    args = parser.parse_args()
    sets = {name: SETS[name] for name in ("iris", "wine")} if args.quick else SETS
    devices = ["cpu"] if args.quick else args.devices
    gpu = next((d for d in devices if d.startswith("cuda")), "cpu")
    print(f"machine: {machine(gpu)}\n")
    seconds = [f"{d} (s)" for d in devices]
    table = Table("small_fits", "+".join(devices), ["data", "points", *seconds, "iterations"],
                  formats=dict.fromkeys(seconds, "{:.3f}"), device=gpu, keep=not args.quick)  # fmt: skip
    for name, loader in sets.items():
        data = loader()
        X = (data.data - data.data.mean(0)) / (data.data.std(0) + 1e-12)
        timed = [fit_seconds(X, data.target, device) for device in devices]
        table.add(name, len(X), *(s for s, _ in timed), timed[0][1])
    table.save()
    print()
    steps = Table("small_fits", "warm-start-" + "+".join(devices), ["device", "dtype",
                  "warm-start step (scikit-learn's bound 3.0)"], formats={"warm-start step (scikit-learn's bound 3.0)": "{:.4f}"},
                  device=gpu, keep=not args.quick)  # fmt: skip
    for device in devices:
        for dtype in ("float32", "float64"):
            steps.add(device, dtype, warm_step(device, dtype))
    steps.save()


if __name__ == "__main__":
    main()
