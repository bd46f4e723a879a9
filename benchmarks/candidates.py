"""How many nearest candidates an anchor takes: speed against 5-NN error, over seeds.

On all of MNIST (or ``--n`` images of mnist-deformed), ``NCA(n_components=32,
random_state=seed)`` fitted exactly (neighbours from all points) and on nearest points
with each of ``--candidates``, for each of ``--seeds``, every fit in its own process
(``scaling.in_subprocess``), one after the other. Prints a Markdown table of seconds per
epoch and 5-NN test error per fit, then per setting the mean error, its difference from
exact training's and the exact epoch's time over the setting's (medians over the seeds).
Errors move by up to about 0.1 point between seeds, so a choice rests on their mean.

    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/candidates.py
    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/candidates.py --candidates 8 12 16 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import statistics

from compare_sklearn import machine
from scaling import in_subprocess


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--n", type=int, default=60000, help="training images (default all of MNIST)")
    parser.add_argument("--candidates", type=int, nargs="+", default=[12, 16])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    print(f"machine: {machine()}; n = {args.n:,}, d = 32\n")
    print("| seed | neighbours | s / epoch | 5-NN test error |\n| --- | --- | --- | --- |")
    settings = [("all", None)] + [("nearest", k) for k in args.candidates]
    rows: dict[str, list[dict]] = {}
    for seed in args.seeds:
        for neighbors, k in settings:
            label = "exact" if k is None else f"{k} candidates"
            row = in_subprocess(args.n, neighbors, seed=seed, n_candidates=k)
            rows.setdefault(label, []).append(row)
            print(f"| {seed} | {label} | {row['epoch_seconds']:.2f} | {row['error']:.2f}% |", flush=True)
    exact_error = statistics.mean(r["error"] for r in rows["exact"])
    exact_seconds = statistics.median(r["epoch_seconds"] for r in rows["exact"])
    print("\n| neighbours | mean error | against exact (points) | exact epoch / this epoch |")
    print("| --- | --- | --- | --- |")
    for label, fits in rows.items():
        error = statistics.mean(r["error"] for r in fits)
        speed = exact_seconds / statistics.median(r["epoch_seconds"] for r in fits)
        print(f"| {label} | {error:.2f}% | {error - exact_error:+.2f} | {speed:.1f}x |")


if __name__ == "__main__":
    main()
