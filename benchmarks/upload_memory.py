"""The server's memory for parsing an uploaded CSV, against the file's size: what sets the
app's upload cap (``server.maxUploadSize`` in .streamlit/config.toml).

For each size it writes a CSV of random features (a label and 100 numeric columns, six
decimals; with ``--short-cells``, two-digit whole numbers, the most cells a byte of file can
hold and so the parse's worst case for its size), then parses it with ``nca_core.datasets.from_csv`` in a fresh process, as the
Your data page does, and prints the file's size, the parse's seconds, its peak memory above
the file's bytes (the maximum resident set), and that peak over the file's size.

    .venv/bin/python benchmarks/upload_memory.py --rows 20000 100000
    .venv/bin/python benchmarks/upload_memory.py --rows 70000 --short-cells
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _results import Table, key

_PARSE = """
import resource, sys, time
import nca_core.datasets._csv, pandas
from nca_core.datasets import from_csv
raw = open(sys.argv[1], "rb").read()
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
from_csv(raw, "label")
print(time.perf_counter() - start, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024)
"""


def write_csv(path: Path, rows: int, columns: int = 100, short_cells: bool = False) -> None:
    rng = np.random.default_rng(0)
    with path.open("w") as f:
        f.write("label," + ",".join(f"f{i}" for i in range(columns)) + "\n")
        for start in range(0, rows, 10000):
            shape = (min(10000, rows - start), columns)
            block = rng.integers(10, 100, size=shape) if short_cells else rng.normal(size=shape).round(6)
            f.write("".join(f"{(start + i) % 10}," + ",".join(map(str, r)) + "\n" for i, r in enumerate(block)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[20000, 50000, 100000])
    parser.add_argument("--short-cells", action="store_true", help="two-digit whole numbers: the worst case")
    parser.add_argument("--quick", action="store_true", help="20,000 rows only; kept nowhere")
    args = parser.parse_args()
    if args.quick:
        args.rows = [20000]
    table = Table(
        "upload_memory", key("parse", "short-cells" if args.short_cells else None),
        ["rows", "file (MB)", "parse (s)", "peak above the file (MB)", "peak / file"], keep=not args.quick,
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        for rows in args.rows:
            path = Path(folder) / f"{rows}.csv"
            write_csv(path, rows, short_cells=args.short_cells)
            out = subprocess.run([sys.executable, "-c", _PARSE, str(path)], capture_output=True, text=True, check=True)
            seconds, peak = (float(v) for v in out.stdout.split())
            size = path.stat().st_size
            table.add(f"{rows:,}", f"{size / 2**20:.0f}", f"{seconds:.1f}", f"{peak / 2**20:.0f}", f"{peak / size:.1f}x")
    table.save()


if __name__ == "__main__":
    main()
