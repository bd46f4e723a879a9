"""One exact training epoch against its hardware floor, timed in turn in one process.

An exact epoch of linear NCA (neighbours from every training point, minibatches of 1024
anchors, Adam) does, per block of anchors, three matrix products and one exp over the
(block x n) pairs. This script times, on the same data and map and alternately so a slow
patch of the machine falls on all alike:

- ``epoch``: one epoch of the library (``training.minibatch.MinibatchEpochs`` on a
  ``Problem``, as ``NCA`` builds it), objective f;
- ``pair floor``: just those three products and one exp per block of
  1024 anchors (``mm`` into one reused buffer, ``exp_``, ``E @ Z``, and ``Z_anchor.T @ E``,
  the transpose of E^T Z_anchor, up to twice as fast on CPUs as that tall product),
  nothing else;
- ``encoder``: the two products every minibatch step also needs for a linear map over all
  n points (``X @ A.T`` to embed them, G^T X for the gradient in A, summed in blocks as
  ``LinearEncoder`` does), once per step;
- ``fresh floor``: the pair floor written naively, a new (block x n) matrix per block.

It prints a Markdown table of seconds (median of ``--repeats``, each repeat listed) and the
ratios epoch / pair floor and epoch / (pair floor + encoder), and (pair floor + encoder) /
pair floor: the least an exact minibatch epoch can reach against the pair floor alone,
since every step embeds all n inputs and takes the gradient in A over them (by flops
4 n D d a step against the pairs' 6 b n d, 2 D / (3 b) of the floor: half of it for MNIST
and b = 1024).

    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/exact_epoch.py            # all 60k
    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/exact_epoch.py --n 30000
    NCA_DATA_DIR=/path/to/data python benchmarks/exact_epoch.py --device cuda   # on a GPU
    NCA_DATA_DIR=/path/to/data python benchmarks/exact_epoch.py --device cuda --tf32 --n 1000000

Beyond 60,000 the images are ``mnist-deformed``'s: MNIST and its deformed copies.

On a GPU every timing waits for the device (``torch.cuda.synchronize``) before reading the
clock, and float32 products stay float32 (PyTorch's default) unless ``--tf32`` lets the
epoch and the floors alike use TF32.

``--count-recomputed`` also counts the anchors the engine recomputes because its fused
pass cannot keep their p_i in float32 (with ``--engines``, each commit's engine).

``--engines REV [REV ...]`` times the library as it stood at each commit, one after another
on one machine, each in a fresh process of this script with that commit's ``nca_core``
(``git archive``) first on ``PYTHONPATH``, and prints one row per engine: the epoch, the
floors and the anchors recomputed, with the figures of all engines in one table:

    NCA_DATA_DIR=/path/to/data python benchmarks/exact_epoch.py --device cuda --repeats 1 --n 1000000 \
        --count-recomputed --engines 391f4ab 03e11d5

The table is kept in results/exact_epoch.json (``_results``) under the device and n
("engines-" before them for ``--engines``).
``quick()`` (``--quick``, and ``make bench``) times one repeat on all 60,000 MNIST images.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import _results
import numpy as np
import torch
from _results import Table, key, machine, print_quick

from nca_core import datasets
from nca_core.config.plan import make_plan
from nca_core.config.rules import DataShape
from nca_core.training.encoders import LinearEncoder, _summed_in_blocks
from nca_core.training.minibatch import MinibatchEpochs
from nca_core.training.problem import Problem
from nca_core.util.device import resolve_device

BATCH = 1024
# A guard against regressions: an exact epoch within this many times the pairs' floor plus
# the encoder's two products, which every exact step needs too (the pairs' floor alone
# cannot be reached: the least reachable ratio is printed beside it).
TARGET = 1.5


def _mnist(n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The first n MNIST training images; beyond 60,000, MNIST and its deformed copies."""
    data = datasets.load("mnist-deformed", download=False, n_train=n, seed=0) if n > 60000 else datasets.load("mnist", download=False)
    X = torch.as_tensor(np.asarray(data.X_train[:n], dtype=np.float32))
    if float(X.max()) > 1.5:
        X /= 255.0
    return X.to(device), torch.as_tensor(np.asarray(data.y_train[:n])).long().to(device)


def _clock(device: torch.device) -> float:
    """perf_counter once the device has finished what was queued (GPUs run asynchronously)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


def _start_map(X: torch.Tensor, d: int) -> torch.Tensor:
    """A random map scaled so that neighbour distances are of order one, as after PCA."""
    A = torch.randn(d, X.shape[1], generator=torch.Generator().manual_seed(0)).to(X.device)
    scale = (X[:2000] @ A.T).std()
    return A / (scale * 2.0)


def _epoch(X, y, A) -> float:
    problem = Problem.sorted_by_class(LinearEncoder(A.clone()), X, y)
    shape = DataShape(len(X), X.shape[1], int(y.max()) + 1)
    plan = make_plan({"optimizer": "adam", "learning_rate": 0.003, "batch_size": BATCH, "neighbors": "all",
                      "n_components": A.shape[0], "device": str(X.device)}, shape)  # fmt: skip
    epochs = MinibatchEpochs(problem, plan, torch.Generator().manual_seed(0))
    start = _clock(X.device)
    epochs.run(1)
    return _clock(X.device) - start


def _pair_floor(X, A, fresh: bool = False) -> float:
    """Three products and one exp per block of BATCH anchors, over all pairs."""
    Z = X @ A.T
    n = len(Z)
    buffer = torch.empty(BATCH * n, device=X.device)
    start = _clock(X.device)
    for lo in range(0, n, BATCH):
        Z_anchor = Z[lo : lo + BATCH]
        pair_floor_block(Z_anchor, Z, None if fresh else buffer[: len(Z_anchor) * n].view(len(Z_anchor), n))
    return _clock(X.device) - start


def pair_floor_block(Z_anchor: torch.Tensor, Z: torch.Tensor, out: torch.Tensor | None) -> None:
    """The floor's arithmetic for one block of anchors: the exponent product (into ``out``
    when given), one exp, and the two products of the sums and the references' gradient."""
    E = torch.mm(Z_anchor, Z.T, out=out)
    E.exp_()
    E @ Z
    Z_anchor.T @ E  # (E^T Z_anchor)^T: a wide, short result, the faster layout on CPUs


def _encoder(X, A) -> float:
    """Embedding all points and the gradient in A, once per minibatch step."""
    G = torch.randn(len(X), A.shape[0], device=X.device)
    start = _clock(X.device)
    for _ in range(0, len(X), BATCH):
        X @ A.T
        _summed_in_blocks(G, X)
    return _clock(X.device) - start


def profile(n: int, d: int, device: str, rows: int = 25) -> str:
    """torch.profiler's table of one exact epoch (after one untimed epoch), by total time."""
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as profiled

    X, y = _mnist(n, resolve_device(device))
    A = _start_map(X, d)
    _epoch(X, y, A)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if X.device.type == "cuda" else [])
    with profiled(activities=activities) as trace:
        _epoch(X, y, A)
    by = "device_time_total" if X.device.type == "cuda" else "cpu_time_total"
    return trace.key_averages().table(sort_by=by, row_limit=rows)


def measure(n: int, d: int, repeats: int, device: str = "cpu", report=None) -> dict[str, list[float]]:
    """Seconds of each measure, ``repeats`` times in turn; ``report(name, seconds)`` hears
    each as it is taken (a long run on a million points says how far it got)."""
    X, y = _mnist(n, resolve_device(device))
    A = _start_map(X, d)
    measures = {
        "epoch": lambda: _epoch(X, y, A),
        "pair floor": lambda: _pair_floor(X, A),
        "encoder": lambda: _encoder(X, A),
        "fresh floor": lambda: _pair_floor(X, A, fresh=True),
    }
    timings: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(repeats):
        for name, timed in measures.items():
            timings[name].append(timed())
            if report is not None:
                report(name, timings[name][-1])
    return timings


def _ratios(timings) -> tuple[float, float, float]:
    """epoch / pair floor, epoch / (pair floor + encoder), (pair floor + encoder) / pair floor."""
    median = {name: statistics.median(t) for name, t in timings.items()}
    floor, with_encoder = median["pair floor"], median["pair floor"] + median["encoder"]
    return median["epoch"] / floor, median["epoch"] / with_encoder, with_encoder / floor


def quick() -> list[dict]:
    """The exact-epoch ratio on all 60,000 MNIST images (one repeat), the size the target is
    set for (on fewer images the fixed costs of a step weigh more); nothing without MNIST."""
    try:
        timings = measure(60000, 32, 1)
    except datasets.DatasetError:
        return []
    pair, with_encoder, least = _ratios(timings)
    figures = ", ".join(f"{name} {t[0]:.2f} s" for name, t in timings.items())
    return [
        {
            "measure": "exact epoch / (pair floor + encoder products) (MNIST 60k, d=32, batch 1024)",
            "ratio": with_encoder, "value": figures, "target": f"<= {TARGET}x", "met": with_encoder <= TARGET,
        },
        {
            "measure": "exact epoch / pair floor",
            "ratio": pair, "value": "", "target": "", "met": None,
        },
        {
            "measure": "(pair floor + encoder products) / pair floor: the least reachable",
            "ratio": least, "value": "", "target": "", "met": None,
        },
    ]  # fmt: skip


ENGINE_COLUMNS = ["engine", "epoch (s)", "pair floor (s)", "encoder (s)", "epoch / floor", "anchors recomputed"]


def export_engine(rev: str, dest: Path) -> Path:
    """``nca_core`` as it stood at commit ``rev``, written under ``dest``: a folder to put
    first on ``PYTHONPATH``."""
    archive = subprocess.run(["git", "archive", rev, "nca_core"], cwd=_results.REPO, capture_output=True,
                             check=True).stdout  # fmt: skip
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    return dest


def engine_timings(rev: str, args: argparse.Namespace) -> dict:
    """One engine's timings, in a fresh process of this script with ``nca_core`` at ``rev``:
    {"timings": {measure: [seconds]}, "recomputed": anchors or None}."""
    with tempfile.TemporaryDirectory() as folder:
        tree, out = export_engine(rev, Path(folder) / "tree"), Path(folder) / "timings.json"
        options = ["--n", str(args.n), "--d", str(args.d), "--repeats", str(args.repeats), "--device", args.device]
        options += ["--tf32"] * args.tf32 + ["--count-recomputed"] * args.count_recomputed
        paths = [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])]
        subprocess.run([sys.executable, __file__, *options, "--timings-json", str(out)], check=True,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)})  # fmt: skip
        found = json.loads(out.read_text())
        if not Path(found["library"]).resolve().is_relative_to(tree.resolve()):
            raise RuntimeError(f"the engine of {rev} was not the one imported: {found['library']}")
    return found


def engines_table(args: argparse.Namespace, timings_of=engine_timings) -> Table:
    """One row per engine of ``args.engines``, timed in turn: medians, epoch / pair floor
    and the anchors recomputed ("-" without ``--count-recomputed``)."""
    device = str(resolve_device(args.device))
    table = Table("exact_epoch", key("engines", device.split(":")[0], args.n, "tf32" if args.tf32 else None),
                  ENGINE_COLUMNS, device=device)  # fmt: skip
    for rev in args.engines:
        found = timings_of(rev, args)
        median = {name: statistics.median(t) for name, t in found["timings"].items()}
        recomputed = "-" if found["recomputed"] is None else f"{found['recomputed']:,}"
        table.add(rev, *(f"{median[name]:.2f}" for name in ("epoch", "pair floor", "encoder")),
                  f"{median['epoch'] / median['pair floor']:.2f}x", recomputed)  # fmt: skip
    images = "MNIST" if args.n <= 60000 else "mnist-deformed"
    each = "one epoch each" if args.repeats == 1 else f"the median of {args.repeats} epochs each"
    tf32 = ", TF32 products" if args.tf32 else ""
    table.note(f"{images} n = {args.n:,}, d = {args.d}, blocks of {BATCH} anchors{tf32}; {each}, in this order, "
               "on one machine")  # fmt: skip
    table.save()
    return table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=60000, help="training images (default all 60,000)")
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu", help='"cpu" (default), "cuda" or "auto"')
    parser.add_argument("--profile", action="store_true", help="print torch.profiler's table of one epoch instead")
    parser.add_argument("--tf32", action="store_true", help="let float32 products use TF32 on a GPU (epoch and floor alike)")
    parser.add_argument(
        "--count-recomputed", action="store_true", help="count the far anchors the engine recomputes (see below)"
    )
    parser.add_argument("--quick", action="store_true", help="quick(): one repeat on MNIST; kept nowhere")
    parser.add_argument("--engines", nargs="+", metavar="REV",
                        help="time the library at each of these commits in turn, one table (see above)")  # fmt: skip
    parser.add_argument("--timings-json", help=argparse.SUPPRESS)  # --engines' processes: timings to this file
    args = parser.parse_args(argv)
    if args.quick:
        print_quick("exact_epoch", quick())
        return
    if args.engines:
        engines_table(args)
        return
    if args.tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
    if args.profile:
        print(profile(args.n, args.d, args.device))
        return
    with counting_recomputed_passes() if args.count_recomputed else contextlib.nullcontext() as recomputed:
        timings = measure(args.n, args.d, args.repeats, args.device, lambda name, t: print(f"{name}: {t:.2f} s", flush=True))
    if args.timings_json:
        import nca_core

        found = {"timings": timings, "recomputed": None if recomputed is None else sum(recomputed),
                 "library": nca_core.__file__}  # fmt: skip
        Path(args.timings_json).write_text(json.dumps(found))
        return
    device = str(resolve_device(args.device))
    tf32 = "; TF32 products" if args.tf32 else ""
    print(f"machine: {machine(device)}{tf32}")
    images = "MNIST" if args.n <= 60000 else "mnist-deformed"
    table = Table("exact_epoch", key(device.split(":")[0], args.n, "tf32" if args.tf32 else None),
                  ["measure", "median s", "each repeat (s)"], formats={"median s": "{:.2f}"}, device=device)  # fmt: skip
    table.notes.append(f"{images} n = {args.n:,}, d = {args.d}, blocks of {BATCH} anchors{tf32}")
    for name, t in timings.items():
        table.add(name, statistics.median(t), ", ".join(f"{s:.2f}" for s in t))
    print(f"\n{table.notes[0]}")
    pair, with_encoder, least = _ratios(timings)
    table.note(f"epoch / (pair floor + encoder): {with_encoder:.2f}x (target <= {TARGET}x)")
    table.note(f"epoch / pair floor: {pair:.2f}x")
    table.note(f"(pair floor + encoder) / pair floor: {least:.2f}x, the least an exact minibatch epoch can reach")
    if recomputed is not None:
        table.note(f"far anchors recomputed by the shifted path of weights, in the epochs of all repeats: {sum(recomputed):,}")
    table.save()


@contextlib.contextmanager
def counting_recomputed_passes():
    """Within: the rows of each pass in which ``objective.gaussian`` recomputes far anchors
    through the shifted path of ``weights`` (anchors its fused pass cannot keep in float32),
    appended to the list yielded."""
    from nca_core.objective import gaussian as blocks

    passes, recompute = [], blocks.per_anchor_terms_and_weights

    def counted(log_k, mates, objective):
        passes.append(len(log_k))
        return recompute(log_k, mates, objective)

    blocks.per_anchor_terms_and_weights = counted
    try:
        yield passes
    finally:
        blocks.per_anchor_terms_and_weights = recompute


if __name__ == "__main__":
    main()
