"""The fused Triton schedule's exact epoch on a CUDA device, beside the library's
GaussianSchedule, the pair floor and the arithmetic bound.

An exact epoch here is one ``Schedule.sums`` of f with every point an anchor against every
point (n^2 pairs): the objective and its gradient in the embedding, what the exact engine
computes between the encoder's products. On one synthetic embedding sorted by class (10
classes, d = 32, scaled so that the median distance to the nearest neighbour is 1, as
after a start map; values do not change the kernels' work), at n = 60,000 (MNIST's size)
and 1,000,000, it times in turn:

- ``fused``: ``objective.fused.FusedSchedule`` (``--precision``, default ieee: float32 on
  the CUDA cores), after one untimed call that compiles the kernels;
- ``gaussian``: ``objective.engine.GaussianSchedule`` in the blocks training takes on the
  device (``util.device.block_elements``), float32 products without TF32;
- ``pair floor``: the logits' products alone, ``Z[block] @ Z.T`` into one reused buffer
  over all anchors (2 d n^2 flops), without TF32;
- ``bound``: the arithmetic at the device's peak: 6 d n^2 flops (the logits, the sums and
  the references' gradient) at its float32 FMA rate, or n^2 exps at its special-function
  rate, whichever takes longer. Peaks from the device's SMs and clock (``--peak-tflops``
  overrides the FMA rate).

It prints the seconds (median of ``--repeats``) and the ratios fused / pair floor,
fused / bound and gaussian / fused, and how far the fused gradient is from the
GaussianSchedule's (largest difference over the largest entry) at the first size.

    python benchmarks/fused_epoch.py            # 60k and 1M, 3 repeats
    python benchmarks/fused_epoch.py --quick    # 60k, one repeat
    python benchmarks/fused_epoch.py --precision tf32x3

Without a CUDA device it says so and exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from _results import Table, key

from nca_core.objective.engine import DEFAULT_BLOCK_ELEMENTS, GaussianSchedule
from nca_core.objective.fused import FusedSchedule
from nca_core.util.device import block_elements

CLASSES = 10
# Float32 FMA lanes per SM by compute capability major version (the CUDA programming
# guide's throughput table; 8.0, the A100, has 64); special-function (ex2) results per SM
# per clock: 16 on every architecture listed here.
FMA_LANES = {7: 64, 8: 128, 9: 128, 10: 128, 12: 128}
EXPS_PER_SM_CLOCK = 16


def embedding(n: int, d: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """n points in 10 Gaussian classes, sorted by class, nearest-neighbour distances near 1."""
    g = torch.Generator(device="cpu").manual_seed(0)
    y = torch.sort(torch.randint(0, CLASSES, (n,), generator=g)).values
    Z = (torch.randn(CLASSES, d, generator=g) * 2.0)[y] + torch.randn(n, d, generator=g)
    Z, y = Z.to(device), y.to(device)
    sample = Z[torch.randperm(n, generator=g)[:256].to(device)]
    nearest = torch.cat([torch.cdist(part, Z).kthvalue(2, dim=1).values for part in sample.split(32)])
    return (Z / nearest.median()).contiguous(), y


def clock() -> float:
    torch.cuda.synchronize()
    return time.perf_counter()


def timed(fn) -> float:
    start = clock()
    fn()
    return clock() - start


def pair_floor(Z: torch.Tensor) -> float:
    """Seconds of Z[block] @ Z.T over all anchors, into a buffer of at most 2^28 entries."""
    n = len(Z)
    rows = max(1, (1 << 28) // n)
    buffer = torch.empty(rows * n, device=Z.device)

    def products():
        for lo in range(0, n, rows):
            block = Z[lo : lo + rows]
            torch.mm(block, Z.T, out=buffer[: len(block) * n].view(len(block), n))

    return timed(products)


def bound(n: int, d: int, peak_tflops: float | None) -> tuple[float, str]:
    """Seconds of 6 d n^2 flops at the FMA peak or n^2 exps, whichever is longer, and the peaks."""
    props = torch.cuda.get_device_properties(0)
    hz = props.clock_rate * 1e3
    flops = (
        peak_tflops * 1e12
        if peak_tflops
        else props.multi_processor_count * FMA_LANES.get(props.major, 128) * 2 * hz
    )
    exps = props.multi_processor_count * EXPS_PER_SM_CLOCK * hz
    peaks = f"{flops / 1e12:.1f} TFLOP/s float32 FMA, {exps / 1e12:.2f} T exp/s"
    return max(6.0 * d * n * n / flops, n * n / exps), peaks


def measure(n: int, d: int, repeats: int, precision: str, with_gaussian: bool) -> dict[str, list[float]]:
    Z, y = embedding(n, d, torch.device("cuda"))
    anchors = torch.arange(n, device=Z.device)
    fused = FusedSchedule("f", precision=precision)
    gaussian = GaussianSchedule("f", block_elements(DEFAULT_BLOCK_ELEMENTS, Z.device))
    fused.sums(Z, y, anchors[: min(n, 4096)], None)  # compiles the kernels (same specialisation)
    runs = {
        "fused": lambda: timed(lambda: fused.sums(Z, y, anchors, None)),
        "pair floor": lambda: pair_floor(Z),
    }
    if with_gaussian:
        runs["gaussian"] = lambda: timed(lambda: gaussian.sums(Z, y, anchors, None))
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            times[name].append(run())
            print(f"n={n:,} {name}: {times[name][-1]:.3f} s", flush=True)
    return times


def agreement(n: int, d: int, precision: str) -> float:
    """Largest |fused - GaussianSchedule| over the largest entry of the gradient."""
    Z, y = embedding(n, d, torch.device("cuda"))
    anchors = torch.arange(n, device=Z.device)
    gaussian = GaussianSchedule("f", block_elements(DEFAULT_BLOCK_ELEMENTS, Z.device))
    want = gaussian.sums(Z, y, anchors, None)[0]
    got = FusedSchedule("f", precision=precision).sums(Z, y, anchors, None)[0]
    return float((got - want).abs().max() / want.abs().max())


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[60000, 1000000])
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--precision", default="ieee", help='tl.dot input precision: "ieee" (default) or "tf32x3"'
    )
    parser.add_argument(
        "--peak-tflops", type=float, help="the device's float32 FMA peak, if not its SMs x clock"
    )
    parser.add_argument(
        "--no-gaussian-above", type=int, default=1000000, help="skip GaussianSchedule beyond this n"
    )
    parser.add_argument("--quick", action="store_true", help="60,000 points, one repeat")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("fused_epoch.py needs a CUDA device (the fused schedule is Triton on a GPU); nothing measured.")
        return
    if args.quick:
        args.sizes, args.repeats = [60000], 1
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"device: {torch.cuda.get_device_name()}, precision {args.precision}")
    print(
        f"fused / gaussian gradient at n={args.sizes[0]:,}: {agreement(args.sizes[0], args.d, args.precision):.2e} of its largest entry"
    )
    timings = [(n, measure(n, args.d, args.repeats, args.precision, n <= args.no_gaussian_above)) for n in args.sizes]
    table = Table(
        "fused_epoch", key("epoch", args.precision if args.precision != "ieee" else None),
        ["n", "fused s", "gaussian s", "pair floor s", "bound s", "fused / floor", "fused / bound", "gaussian / fused"],
        title=f"bound: {bound(1, args.d, args.peak_tflops)[1]}", device="cuda", keep=not args.quick,
    )  # fmt: skip
    for n, times in timings:
        table.add(*table_row(n, args.d, times, args.peak_tflops))
    table.save()


def table_row(n: int, d: int, times: dict[str, list[float]], peak_tflops: float | None) -> list[str]:
    median = {name: statistics.median(t) for name, t in times.items()}
    fused, floor, least = median["fused"], median["pair floor"], bound(n, d, peak_tflops)[0]
    gaussian = median.get("gaussian")
    return [
        f"{n:,}", f"{fused:.3f}", "" if gaussian is None else f"{gaussian:.3f}", f"{floor:.3f}", f"{least:.3f}",
        f"{fused / floor:.2f}", f"{fused / least:.2f}", "" if gaussian is None else f"{gaussian / fused:.2f}",
    ]  # fmt: skip


if __name__ == "__main__":
    main()
