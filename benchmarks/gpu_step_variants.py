"""The exact engine's step written other ways beside the library's, timed on a GPU.

On a GPU the exact epoch spends its time on the CPU's side: launching work from Python
and waiting for the device. These variants tell the two apart: with the waits taken out
of the library's step, the launches cost little. This script times one pass of the
objective f and its gradient in the embedding over all anchors, in steps of 1024 class-sorted anchors
against all n points (what an exact epoch does between the encoder's products), several ways
on the same Z:

- ``library``: ``objective.engine.loss_gradient``, as training calls it, in the blocks
  training takes on the device (``util.device.block_elements``): a product per class for
  the class-mate sums;
- ``masked``: every step the same shapes: the class-mate sums as one product with the
  kernel values masked to the anchor's class, and no reading back from the device
  (anchors far from every neighbour are counted, not redone);
- ``masked graph`` (CUDA only): the masked step captured once as a CUDA graph and replayed;
- ``masked compiled`` (CUDA only, with ``--compile``): the masked step through
  ``torch.compile``, which fuses its elementwise passes (the clamp, exp, mask and scales).

Each variant's gradient of the first step is checked against the library's (largest
difference over the largest entry, printed), then each pass is timed in turn with the pair
floor of ``exact_epoch.py`` (three products and one exp per step).

    NCA_DATA_DIR=/path/to/data python benchmarks/gpu_step_variants.py --device cuda
    NCA_DATA_DIR=/path/to/data python benchmarks/gpu_step_variants.py --device cuda --n 1000000
    NCA_DATA_DIR=/path/to/data python benchmarks/gpu_step_variants.py --quick   # 10,000 images, once

The table is kept in results/gpu_step_variants.json (``_results``) under the device and n.
"""

from __future__ import annotations

import argparse
import math
import statistics

import torch
from _results import Table, key, machine
from exact_epoch import BATCH, _clock, _mnist, _pair_floor, _start_map

from nca_core.objective.engine import DEFAULT_BLOCK_ELEMENTS, loss_gradient
from nca_core.objective.weights import anchor_scales, far, floor_exponent
from nca_core.objective.workspace import Workspace
from nca_core.util.device import block_elements, resolve_device


class MaskedSteps:
    """Steps of f's gradient over Z (sorted by class) with the same shapes every step."""

    def __init__(self, Z: torch.Tensor, y: torch.Tensor, batch: int):
        n = len(Z)
        self.y, self.batch = y, batch
        self.Z = Z - Z.mean(0)
        ones = torch.ones(n, 1, dtype=Z.dtype, device=Z.device)
        self.R = torch.cat([self.Z, ones], 1)
        self.right = torch.cat([2.0 * self.Z, -ones, -(self.Z * self.Z).sum(1, keepdim=True)], 1)
        self.floor = floor_exponent(Z.dtype)
        self.rows = torch.arange(batch, device=Z.device)
        self.zero = torch.zeros((), dtype=Z.dtype, device=Z.device)  # no host copy in a graph

    def gradient(self, anchors: torch.Tensor, count: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """d(-mean f)/dZ (n, d) for these anchors, the sum of their terms, and how many are far."""
        d = self.Z.shape[1]
        Z_anchor, y_anchor = self.Z[anchors], self.y[anchors]
        ones = torch.ones(len(anchors), 1, dtype=self.Z.dtype, device=self.Z.device)
        left = torch.cat([Z_anchor, (Z_anchor * Z_anchor).sum(1, keepdim=True), ones], 1)
        E = (left @ self.right.T).clamp_(min=self.floor, max=0.0).exp_()
        E.index_put_((self.rows[: len(anchors)], anchors), self.zero)
        E_same = E * (y_anchor[:, None] == self.y[None, :])
        every, same = E @ self.R, E_same @ self.R
        far_rows = (far(same[:, d], len(self.Z)) | far(every[:, d], len(self.Z))).sum()
        terms, scale_same, scale_all = anchor_scales(
            torch.log(same[:, d]), torch.log(every[:, d]), 0.0, 0.0, "f"
        )
        grad_anchor = 2.0 * (scale_same * same[:, :d] - scale_all * every[:, :d])
        A = torch.cat([Z_anchor, ones], 1)
        back = torch.addmm((scale_same * A).T @ E_same, (scale_all * A).T, E, alpha=-1.0)
        grad = 2.0 * (back[:d].T - back[d][:, None] * self.Z)
        return grad.index_add_(0, anchors, grad_anchor).div_(-count), terms.sum(), far_rows


class GraphSteps:
    """``MaskedSteps.gradient`` for full steps captured as one CUDA graph, replayed per step."""

    def __init__(self, steps: MaskedSteps, count: int):
        self.steps, self.count = steps, count
        self.anchors = torch.arange(steps.batch, device=steps.Z.device)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):  # warm-up before capture, as CUDA graphs require
                steps.gradient(self.anchors, count)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.out = steps.gradient(self.anchors, count)

    def gradient(self, anchors: torch.Tensor, count: int):
        if len(anchors) != len(self.anchors):  # the last, shorter step: not captured
            return self.steps.gradient(anchors, count)
        self.anchors.copy_(anchors)
        self.graph.replay()
        return self.out


def _compiled(masked: MaskedSteps, steps, device):
    """``masked.gradient`` through torch.compile, warmed on every step's shape; None if it fails."""
    try:
        gradient = torch.compile(masked.gradient, dynamic=False)
        start = _clock(device)
        timed_pass(gradient, steps, device)
        print(f"masked compiled: compiled and warmed in {_clock(device) - start:.1f} s")
        return gradient
    except Exception as error:  # a benchmark's optional row: say why it is missing
        print(f"masked compiled: not available ({type(error).__name__}: {str(error)[:300]})")
        return None


def library_gradient(Z, y, workspace):
    """The engine's gradient in the blocks training takes on Z's device."""
    size = block_elements(DEFAULT_BLOCK_ELEMENTS, Z.device)

    def gradient(anchors: torch.Tensor, count: int):
        grad, _, value = loss_gradient(
            Z, y, anchors, "f", count=count, workspace=workspace, block_elements=size
        )
        return grad, value
    return gradient


def steps_of(n: int, device: torch.device) -> list[torch.Tensor]:
    """A random order of all n anchors in steps of BATCH, each sorted (Z is sorted by class)."""
    order = torch.randperm(n, generator=torch.Generator().manual_seed(0)).to(device)
    return [step.sort().values for step in order.split(BATCH)]


def timed_pass(gradient, steps, device) -> float:
    start = _clock(device)
    for anchors in steps:
        gradient(anchors, len(anchors))
    return _clock(device) - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60000)
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--compile", action="store_true", help="add the torch.compile variant")
    parser.add_argument("--quick", action="store_true", help="10,000 images, one repeat; kept nowhere")
    args = parser.parse_args()
    if args.quick:
        args.n, args.repeats = 10000, 1
    device = resolve_device(args.device)
    X, y = _mnist(args.n, device)
    y, order = y.sort(stable=True)
    X = X[order]
    A = _start_map(X, args.d)
    Z = X @ A.T
    steps = steps_of(args.n, device)
    masked = MaskedSteps(Z, y, BATCH)
    variants = {"library": library_gradient(Z, y, Workspace()), "masked": masked.gradient}
    if device.type == "cuda":
        variants["masked graph"] = GraphSteps(masked, BATCH).gradient
        if args.compile:
            compiled = _compiled(masked, steps, device)
            if compiled is not None:
                variants["masked compiled"] = compiled
    first = steps[0]
    reference, _ = variants["library"](first, len(first))
    scale = float(reference.abs().max())
    differences = {"library": 0.0}
    for name in list(variants)[1:]:
        grad, *rest = variants[name](first, len(first))
        differences[name] = float((grad - reference).abs().max()) / scale
        far = f"; far anchors {int(rest[1])}" if len(rest) == 2 else ""
        print(f"{name}: first step's gradient against the library's: {differences[name]:.2e}{far}")
    timings = {name: [] for name in [*variants, "pair floor"]}
    for _ in range(args.repeats):
        for name, gradient in variants.items():
            timings[name].append(timed_pass(gradient, steps, device))
        timings["pair floor"].append(_pair_floor(X, A))
    floor = statistics.median(timings["pair floor"])
    print(f"\nmachine: {machine(str(device))}")
    table = Table("gpu_step_variants", key(device.type, args.n, "compiled" if args.compile else None),
                  ["variant", "pass (s), median", "each (s)", "/ pair floor", "gradient difference"],
                  formats={"pass (s), median": "{:.3f}"}, device=str(device), keep=not args.quick)  # fmt: skip
    table.notes.append(f"{'MNIST' if args.n <= 60000 else 'mnist-deformed'} n = {args.n:,}, d = {args.d}, "
                       f"steps of {BATCH} anchors, objective f")  # fmt: skip
    for name, times in timings.items():
        median = statistics.median(times)
        difference = f"{differences[name]:.1e}" if name in differences else ""
        table.add(name, median, ", ".join(f"{t:.3f}" for t in times), f"{median / floor:.2f}x", difference)
    print(f"\n{table.notes[0]}")
    table.save()
    if any(not math.isfinite(v) or v > 1e-3 for v in differences.values()):
        raise SystemExit("a variant's gradient differs from the library's by more than 1e-3")


if __name__ == "__main__":
    main()
