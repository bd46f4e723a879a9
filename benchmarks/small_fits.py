"""Small problems on each device: where "auto" should send them.

Fits ``NCA(2, random_state=0)`` (L-BFGS; the whole-matrix float64 engine on the CPU up to
400 points) on iris, wine and digits, standardised, on every device given, and prints the
median of three fits; then scikit-learn's warm-start check on iris (one more iteration
after a warm-started fit moves the map by less than 3.0, summed absolute change) for each
device and dtype. The devices are named explicitly, so "auto" plays no part.

    python benchmarks/small_fits.py --devices cpu cuda
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from compare_sklearn import machine
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
    args = parser.parse_args()
    print(f"machine: {machine()}\n")
    print("| data | points | " + " | ".join(f"{d} s" for d in args.devices) + " | iterations |")
    print("| --- | --- | " + " | ".join("---" for _ in args.devices) + " | --- |")
    for name, loader in SETS.items():
        data = loader()
        X = (data.data - data.data.mean(0)) / (data.data.std(0) + 1e-12)
        timed = [fit_seconds(X, data.target, device) for device in args.devices]
        seconds = " | ".join(f"{s:.3f}" for s, _ in timed)
        print(f"| {name} | {len(X)} | {seconds} | {timed[0][1]} |")
    print("\n| device | dtype | warm-start step (scikit-learn's bound 3.0) |")
    print("| --- | --- | --- |")
    for device in args.devices:
        for dtype in ("float32", "float64"):
            print(f"| {device} | {dtype} | {warm_step(device, dtype):.4f} |")


if __name__ == "__main__":
    main()
