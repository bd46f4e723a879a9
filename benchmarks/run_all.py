"""``make bench``: every benchmark's quick mode in one run, one table of ratios.

Each benchmark with a quick mode offers ``quick() -> list[dict]``, whose rows say what was
measured, the ratio against the reference measured beside it in the same run, the figures
behind it, and the target where there is one. A quick mode takes seconds to a minute, so a
regression shows up as a number before the full benchmark is run for RESULTS.md. A missed
target is printed as missed; the command fails only when a benchmark itself fails.

    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/run_all.py
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # the benchmarks import each other by name

from _results import machine  # found through the path above

QUICK_MODES = ("sklearn_parity", "knn_search", "exact_epoch", "scaling")


def _rows(name: str) -> list[dict]:
    start = time.perf_counter()
    rows = importlib.import_module(name).quick()
    seconds = time.perf_counter() - start
    return [{**row, "benchmark": name, "seconds": seconds} for row in rows]


def _cell(row: dict) -> str:
    ratio = "" if row["ratio"] is None else f"{row['ratio']:.2f}x"
    verdict = {True: "met", False: "**missed**", None: ""}[row["met"]]
    return (
        f"| {row['benchmark']} | {row['measure']} | {ratio} | {row['value']} | {row['target']} | {verdict} |"
    )


def main() -> int:
    print(f"machine: {machine()}\n")
    print("| benchmark | measure | ratio | figures | target | |")
    print("| --- | --- | --- | --- | --- | --- |")
    missed = 0
    for name in QUICK_MODES:
        for row in _rows(name):
            print(_cell(row), flush=True)
            missed += row["met"] is False
    print(f"\n{missed} target(s) missed." if missed else "\nEvery target with a verdict was met.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
