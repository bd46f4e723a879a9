"""Where a GPU exact step's time goes at a million references: the engine's blocks, profiled,
and its skinny products (few output rows and columns, a huge inner dimension) timed alone.

One minibatch step of 1,024 anchors against n synthetic class-sorted points (10 classes,
d = 32, distances of order one) through ``gaussian.GaussianBlocks``, in the GPU's blocks
(``util.device.block_elements``), against the pair floor of the same step (three products
and one exp over the same pairs). Then each product shape of a block timed on its own.

    python benchmarks/block_shapes.py --n 1000000          # on a machine with a GPU

``--far`` instead times exact epochs of ``exact_epoch.py`` on ``--n`` images of
mnist-deformed in one process, after one untimed epoch: the far anchors' recomputation
taking 2^22 pairs a pass (as it did before it took a share of the block) and the engine's
own size, in turn, the order alternating between repeats; and counts the anchors it
recomputed and its passes. Since the engine shifts each anchor's kernel values by its
nearest class mate, only anchors with a point of another class far nearer than any class
mate are recomputed (before, on a map that grows over many steps, more and more anchors
were too far from all their neighbours for unshifted float32 values).

    NCA_DATA_DIR=/path/to/data python benchmarks/block_shapes.py --far --n 250000
    NCA_DATA_DIR=/path/to/data python benchmarks/block_shapes.py --far --device cpu --quick   # MNIST, once

The tables are kept in results/block_shapes.json (``_results``): "step-<n>" and
"far-<n>-<device>".
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import torch
from _results import Table, key
from exact_epoch import (
    BATCH,
    _epoch,
    _mnist,
    _pair_floor,
    _start_map,
    counting_recomputed_passes,
    pair_floor_block,
)

from nca_core.objective.engine import DEFAULT_BLOCK_ELEMENTS
from nca_core.objective.gaussian import GaussianBlocks
from nca_core.objective.workspace import Workspace
from nca_core.util.device import block_elements

CLASSES = 10


def _sorted_labels(n: int, device: torch.device) -> torch.Tensor:
    generator = torch.Generator(device=device).manual_seed(0)
    return torch.sort(torch.randint(CLASSES, (n,), device=device, generator=generator)).values


def exact_steps(n: int, d: int, device: torch.device) -> tuple[Callable[[], None], Callable[[], None], torch.Tensor]:
    """One exact step of ``BATCH`` class-sorted anchors against n synthetic class-sorted
    points (``CLASSES`` classes, distances of order one), as the library takes it
    (``GaussianBlocks`` in the device's blocks) and as the pair floor (``exact_epoch``'s
    arithmetic in the same blocks). Returns the two steps and the (rows, n) block matrix
    both write into."""
    generator = torch.Generator(device=device).manual_seed(1)
    y = _sorted_labels(n, device)
    Z = torch.randn(n, d, device=device, generator=generator) * 0.3
    rows = min(BATCH, max(1, block_elements(DEFAULT_BLOCK_ELEMENTS, device) // n))
    workspace = Workspace()
    block = workspace.matrix(rows, n, Z, "pairs")  # the library's own block buffer
    anchors = torch.randperm(n, device=device, generator=generator)[:BATCH]
    anchors = anchors[torch.argsort(y[anchors], stable=True)]

    def library_step():
        blocks = GaussianBlocks(Z, y, "f", workspace)
        for start in range(0, BATCH, rows):
            a = anchors[start : start + rows]
            blocks.block(Z[a], y[a], a)
        blocks.reference_gradient()

    def floor_step():
        for start in range(0, BATCH, rows):
            Z_anchor = Z[anchors[start : start + rows]]
            pair_floor_block(Z_anchor, Z, block[: len(Z_anchor)])

    return library_step, floor_step, block


def _timed(work, device, repeats: int = 3) -> float:
    work()
    torch.cuda.synchronize(device)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


def far_epochs(n: int, device: str = "cuda", repeats: int = 2, keep: bool = True) -> None:
    """Exact epochs with the recomputation's old pass size and the engine's own, in turn
    (the order alternating between repeats), after one untimed epoch."""
    from nca_core.objective import gaussian as blocks

    X, y = _mnist(n, torch.device(device))
    A = _start_map(X, 32)
    share = blocks._REDO_SHARE
    # a share so small that every pass takes the least, 2^22 pairs; then the engine's own
    sizes = {"2^22 pairs a pass (before)": 1 << 40, "an eighth of the block": share}
    with counting_recomputed_passes() as passes:
        try:
            _epoch(X, y, A)  # untimed: the device's first epoch also pays for its start
            table = Table("block_shapes", key("far", n, torch.device(device).type), ["far anchors' passes", "epoch (s)",
                          "far anchors", "passes"], formats={"epoch (s)": "{:.2f}"}, device=device, keep=keep)  # fmt: skip
            table.notes.append(f"n = {n:,}; pair floor {_pair_floor(X, A):.2f} s")
            print(f"{table.notes[0]}\n")
            for repeat in range(repeats):
                for label in list(sizes)[:: 1 if repeat % 2 == 0 else -1]:
                    blocks._REDO_SHARE = sizes[label]
                    passes.clear()
                    seconds = _epoch(X, y, A)
                    table.add(label, seconds, f"{sum(passes):,} of {n:,}", f"{len(passes):,}")
            table.save()
        finally:
            blocks._REDO_SHARE = share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--far", action="store_true", help="time exact epochs on mnist-deformed instead (see above)")
    parser.add_argument("--device", default="cuda", help="for --far: cuda (default) or cpu")
    parser.add_argument("--quick", action="store_true", help="MNIST's 60,000 images (--far), one repeat; kept nowhere")
    args = parser.parse_args()
    if args.far:
        far_epochs(60000 if args.quick else args.n, args.device, 1 if args.quick else 2, keep=not args.quick)
        return
    device = torch.device("cuda")
    n, d = args.n, args.d
    library_step, floor_step, block = exact_steps(n, d, device)
    rows = len(block)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; n = {n:,}, blocks of {rows} anchors")
    step, floor = _timed(library_step, device), _timed(floor_step, device)
    print(f"one step: engine {1000 * step:.1f} ms, pair floor {1000 * floor:.1f} ms, {step / floor:.1f}x")
    table = Table("block_shapes", key("step", n), ["product", "ms"], formats={"ms": "{:.2f}"}, device="cuda",
                  keep=not args.quick)  # fmt: skip
    table.notes.append(f"one step of {BATCH} anchors against n = {n:,}: engine {1000 * step:.1f} ms, "
                       f"pair floor {1000 * floor:.1f} ms, {step / floor:.1f}x")  # fmt: skip

    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as trace:
        library_step()
        torch.cuda.synchronize(device)
    print(trace.key_averages().table(sort_by="device_time_total", row_limit=14, max_name_column_width=70))

    E = block.uniform_()
    bounds = [0, *torch.bincount(_sorted_labels(n, device), minlength=CLASSES).cumsum(0).tolist()]
    R33 = torch.randn(n, d + 1, device=device)
    R40 = torch.randn(n, 40, device=device)
    lo, hi = bounds[3], bounds[4]  # one class's references, its start not aligned
    few = rows // 10
    shapes = {
        f"E ({rows} x n) @ R (n x {d + 1})": lambda: E @ R33,
        f"E ({rows} x n) @ R padded (n x 40)": lambda: E @ R40,
        f"E[:{few}, class] @ R[class] ({few} x {hi - lo} x {d + 1}), start {lo}": lambda: E[:few, lo:hi] @ R33[lo:hi],
        f"the same, {hi - lo} columns from 0": lambda: E[:few, : hi - lo] @ R33[: hi - lo],
        f"E.T ({rows} rows) @ anchors, out (n x {d + 1})": lambda: E.T @ R33[:rows],
        f"anchors.T @ E, out ({d + 1} x n), the pair floor's layout": lambda: R33[:rows].T @ E,
        "exp_ over the block": lambda: E.clamp_(max=0.0).exp_(),
    }
    for name, work in shapes.items():
        table.add(name, 1000 * _timed(work, device))
    table.save()


if __name__ == "__main__":
    main()
