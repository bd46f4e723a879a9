"""What the exact step's passes cost on a CPU, and the fusions tried on them.

One minibatch step of 1,024 anchors against n synthetic class-sorted points (10 classes,
d = 32, distances of order one) through ``gaussian.GaussianBlocks``, against the pair floor
of the same step: ``exact_epoch.py``'s three products and one exp, here in the library's
blocks (``block_shapes.exact_steps``). Then the passes over one block's (rows, n) matrix,
each timed alone (median of ``--repeats``), and the variants tried to save one of them:

- clamp and exp a cache-sized run of rows at a time (``CACHED_ELEMENTS``, so exp reads what
  clamp wrote from the core's cache), alone and followed by the product that reads the
  block next;
- the sums' right-hand side [Z, 1] (33 columns) against Z alone (32);
- exp of arguments below float32's range, with and without flush-to-zero, which is why
  the library clamps first;
- with ``--compile``, the exponent product, clamp and exp through ``torch.compile``, copied
  into the block's buffer (its compile time in the row's name).

    .venv/bin/python benchmarks/cpu_step_passes.py
    .venv/bin/python benchmarks/cpu_step_passes.py --n 30000 --compile
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from block_shapes import exact_steps
from compare_sklearn import machine
from exact_epoch import BATCH

from nca_core.objective import weights

CACHED_ELEMENTS = 1 << 18  # 1 MB of float32: half of a 2 MB L2 for each of two threads
FLOOR, CAP = weights.floor_exponent(torch.float32), weights.LARGEST_EXPONENT  # the library's clamp
RUNS = f"{CACHED_ELEMENTS * 4 / 2**20:g} MB runs of rows"


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


def _steps(library_step, floor_step, repeats: int) -> dict[str, float]:
    """The pair floor's step and the library's, in ms (the better of two turns each)."""
    timings = {}
    for _ in range(2):  # in turn, so a slow patch of the machine falls on both
        for name, work in (("pair floor", floor_step), ("library (GaussianBlocks)", library_step)):
            timings.setdefault(name, []).append(_median_ms(work, repeats))
    return {name: min(values) for name, values in timings.items()}


def _block_passes(E: torch.Tensor, d: int, repeats: int) -> dict[str, float]:
    """Each pass over the block ``E`` (rows, n), and the variants tried, in ms."""
    (rows, n), generator = E.shape, torch.Generator().manual_seed(2)
    Z = torch.randn(n, d, generator=generator) * 0.3
    R = torch.cat([Z, torch.ones(n, 1)], 1)
    left = torch.randn(rows, d + 2, generator=generator) * 0.3
    right = torch.randn(n, d + 2, generator=generator) * 0.3

    def exponent():
        return torch.mm(left, right.T, out=E)

    passes = {
        f"exponent product ({rows} x {d + 2} @ {d + 2} x n)": exponent,
        "clamp_": lambda: E.clamp_(FLOOR, CAP),
        "product, then clamp_ and exp_ over the whole block": lambda: (exponent(), E.clamp_(FLOOR, CAP).exp_()),
        f"product, then clamp_ and exp_ in {RUNS}": lambda: (exponent(), _in_runs(E)),
        "product, clamp, exp, E @ [Z, 1]: whole block": lambda: (exponent(), E.clamp_(FLOOR, CAP).exp_(), E @ R),
        f"product, clamp, exp, E @ [Z, 1]: {RUNS}": lambda: (exponent(), _in_runs(E), E @ R),
        f"E @ [Z, 1] (n x {d + 1})": lambda: E @ R,
        f"E @ Z (n x {d})": lambda: E @ Z,
    }
    return {name: _median_ms(work, repeats) for name, work in passes.items()}


def _exp_below_range(E: torch.Tensor, repeats: int) -> dict[str, float]:
    """exp into ``E`` of arguments in float32's range and below it, in ms."""
    generator = torch.Generator().manual_seed(3)
    in_range = torch.empty(E.shape).uniform_(-20.0, 10.0, generator=generator)
    below = torch.empty(E.shape).uniform_(-200.0, 10.0, generator=generator)
    timings = {
        "exp of [-20, 10] into the block": _median_ms(lambda: torch.exp(in_range, out=E), repeats),
        "exp of [-200, 10] into the block": _median_ms(lambda: torch.exp(below, out=E), repeats),
        "exp of [-200, 10] clamped first": _median_ms(lambda: torch.clamp(below, FLOOR, CAP, out=E).exp_(), repeats),
    }
    if torch.set_flush_denormal(True):
        try:
            timings["exp of [-200, 10], flush-to-zero on"] = _median_ms(lambda: torch.exp(below, out=E), repeats)
        finally:
            torch.set_flush_denormal(False)
    else:
        print("flush-to-zero is not supported on this CPU: its row is left out")
    return timings


def _compiled_pass(E: torch.Tensor, d: int, repeats: int) -> dict[str, float]:
    """The exponent product, clamp and exp through torch.compile, copied into ``E``, in ms."""
    generator = torch.Generator().manual_seed(4)
    left = torch.randn(len(E), d + 2, generator=generator) * 0.3
    right = torch.randn(E.shape[1], d + 2, generator=generator) * 0.3
    fused = torch.compile(lambda a, b, out: out.copy_(torch.mm(a, b.T).clamp(FLOOR, CAP).exp()))
    start = time.perf_counter()
    fused(left, right, E)
    name = f"product, clamp, exp through torch.compile (compiled in {time.perf_counter() - start:.1f} s)"
    return {name: _median_ms(lambda: fused(left, right, E), repeats)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=60000)
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--compile", action="store_true", help="also time the product, clamp and exp compiled")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    library_step, floor_step, E = exact_steps(args.n, args.d, torch.device("cpu"))
    steps = _steps(library_step, floor_step, args.repeats)
    print(f"n = {args.n:,}, d = {args.d}, a step of {BATCH} anchors in blocks of at most {len(E)}\n")
    print("| one step | ms | / pair floor |\n| --- | --- | --- |")
    for name, ms in steps.items():
        print(f"| {name} | {ms:.1f} | {ms / steps['pair floor']:.2f}x |")
    passes = _block_passes(E, args.d, args.repeats) | _exp_below_range(E, args.repeats)
    if args.compile:
        passes |= _compiled_pass(E, args.d, args.repeats)
    print(f"\n| one block's pass ({len(E)} x n) | ms |\n| --- | --- |")
    for name, ms in passes.items():
        print(f"| {name} | {ms:.2f} |")


if __name__ == "__main__":
    main()
