"""What the exact step's passes cost on a CPU, and the fusions tried on them.

One minibatch step of 1,024 anchors against n synthetic class-sorted points (10 classes,
d = 32, distances of order one) through ``blocks.GaussianBlocks`` in the library's blocks,
against the pair floor of the same step (three products and one exp over the same pairs,
as ``exact_epoch.py`` times it; ``block_shapes.exact_steps``, which times it on a GPU). Then the passes over one block's (rows, n) matrix, each
timed alone (median of ``--repeats``), and the variants tried to save one of them:

- clamp and exp a cache-sized run of rows at a time (1 MB, so exp reads what clamp wrote
  from the core's cache), alone and followed by the product that reads the block next;
- the sums' right-hand side [Z, 1] (33 columns) against Z alone (32);
- exp of arguments below float32's range, with and without flush-to-zero, which is why
  the library clamps first;
- with ``--compile``, the exponent product, clamp and exp through ``torch.compile`` into the
  block's buffer (its compile time printed apart).

    .venv/bin/python benchmarks/cpu_step_passes.py
    .venv/bin/python benchmarks/cpu_step_passes.py --n 30000 --compile
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from block_shapes import BATCH, exact_steps
from compare_sklearn import machine

CACHED_ELEMENTS = 1 << 18  # 1 MB of float32: half of a 2 MB L2 for each of two threads
FLOOR, CAP = -79.0, 40.0  # about the library's clamp (blocks._gaussian_floor, _LARGEST_EXPONENT)


def _median_ms(work, repeats: int) -> float:
    work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def _in_runs(E: torch.Tensor) -> None:
    for rows in E.split(max(1, CACHED_ELEMENTS // E.shape[1])):
        rows.clamp_(FLOOR, CAP).exp_()


def _steps(n: int, d: int, repeats: int) -> tuple[dict, int]:
    """The pair floor's step and the library's, in ms (the better of two turns each)."""
    library_step, floor_step, rows = exact_steps(n, d, torch.device("cpu"))
    timings = {}
    for _ in range(2):  # in turn, so a slow patch of the machine falls on both
        for name, work in (("pair floor", floor_step), ("library (GaussianBlocks)", library_step)):
            timings.setdefault(name, []).append(_median_ms(work, repeats))
    return {name: min(values) for name, values in timings.items()}, rows


def _block_passes(n: int, d: int, rows: int, repeats: int, compile_too: bool) -> dict[str, float]:
    generator = torch.Generator().manual_seed(1)
    Z = torch.randn(n, d, generator=generator) * 0.3
    left = torch.randn(rows, d + 2, generator=generator) * 0.3
    right = torch.randn(n, d + 2, generator=generator) * 0.3
    R = torch.cat([Z, torch.ones(n, 1)], 1)
    E = torch.empty(rows, n)
    in_range = torch.empty(rows, n).uniform_(-20.0, 10.0, generator=generator)
    below = torch.empty(rows, n).uniform_(-200.0, 10.0, generator=generator)

    def exponent():
        return torch.mm(left, right.T, out=E)

    passes = {
        f"exponent product ({rows} x {d + 2} @ {d + 2} x n)": exponent,
        "clamp_": lambda: E.clamp_(FLOOR, CAP),
        "product, then clamp_ and exp_ over the whole block": lambda: (exponent(), E.clamp_(FLOOR, CAP).exp_()),
        "product, then clamp_ and exp_ in 1 MB runs of rows": lambda: (exponent(), _in_runs(E)),
        "product, clamp, exp, E @ [Z, 1]: whole block": lambda: (exponent(), E.clamp_(FLOOR, CAP).exp_(), E @ R),
        "product, clamp, exp, E @ [Z, 1]: 1 MB runs": lambda: (exponent(), _in_runs(E), E @ R),
        f"E @ [Z, 1] (n x {d + 1})": lambda: E @ R,
        f"E @ Z (n x {d})": lambda: E @ Z,
        "exp of [-20, 10] into the block": lambda: torch.exp(in_range, out=E),
        "exp of [-200, 10] into the block": lambda: torch.exp(below, out=E),
    }
    timings = {name: _median_ms(work, repeats) for name, work in passes.items()}
    torch.set_flush_denormal(True)
    try:
        timings["exp of [-200, 10], flush-to-zero on"] = _median_ms(lambda: torch.exp(below, out=E), repeats)
    finally:
        torch.set_flush_denormal(False)
    timings["exp of [-200, 10] clamped first"] = _median_ms(lambda: torch.clamp(below, FLOOR, CAP, out=E).exp_(), repeats)
    if compile_too:
        fused = torch.compile(lambda a, b, out: out.copy_(torch.mm(a, b.T).clamp(FLOOR, CAP).exp()))
        start = time.perf_counter()
        fused(left, right, E)
        compiled = f"through torch.compile (compiled in {time.perf_counter() - start:.1f} s)"
        timings[f"product, clamp, exp {compiled}"] = _median_ms(lambda: fused(left, right, E), repeats)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=60000)
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--compile", action="store_true", help="also time the product, clamp and exp compiled")
    args = parser.parse_args()
    print(f"machine: {machine()}; torch threads: {torch.get_num_threads()}")
    steps, rows = _steps(args.n, args.d, args.repeats)
    print(f"n = {args.n:,}, d = {args.d}, a step of {BATCH} anchors in blocks of {rows}\n")
    print("| one step | ms | / pair floor |\n| --- | --- | --- |")
    for name, ms in steps.items():
        print(f"| {name} | {ms:.1f} | {ms / steps['pair floor']:.2f}x |")
    print(f"\n| one block's pass ({rows} x n) | ms |\n| --- | --- |")
    for name, ms in _block_passes(args.n, args.d, rows, args.repeats, args.compile).items():
        print(f"| {name} | {ms:.2f} |", flush=True)


if __name__ == "__main__":
    main()
