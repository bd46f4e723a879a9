"""Training through the fused Triton kernels on a CUDA device, beside the blocked schedule.

The exact engine takes ``objective.fused.FusedSchedule`` for float32 embeddings on a CUDA
device when ``fused.FUSED_ON_CUDA`` says so (NCA_FUSED=1), else ``GaussianSchedule``'s
blocks ("blocked"). This script sets that switch itself, so that each measure runs under
both engines in one process, on the same data, one after the other; each row counts the
schedules' calls it made, so it says which one ran, and names its device
(``torch.cuda.get_device_name``).

- ``epoch``: one exact training epoch (``training.minibatch.MinibatchEpochs``, objective f,
  d = 32, batches of 1024, Adam: ``exact_epoch._epoch``) under each engine, beside the pair
  floor (three products and one exp per block of anchors: ``exact_epoch._pair_floor``), the
  encoder's two products a step, and the arithmetic bound (6 d n^2 flops at the float32 FMA
  peak, or n^2 exps: ``fused_epoch.bound``). MNIST's 60,000 images, or beyond that MNIST's
  images repeated with pixel noise of sd 0.1 (``training_images``: a million of them in
  seconds, where ``mnist-deformed`` takes minutes to draw).
- ``fit``: ``NCA(n_components=32, random_state=0).fit`` on all of MNIST under each engine:
  seconds, epochs and 5-NN test error.
- ``million``: the same defaults on a million points (``training_images``), under the fused
  engine alone: there the defaults take neighbours from nearest points, whose steps walk no
  exact schedule (the start's objective does), so the blocked run would repeat it.
- ``network``: the app's MNIST network run (``runs.run.recommended_config(mnist,
  encoder="mlp")``: ``LIVE_NETWORK``), streamed as the Train page streams it, under each
  engine: seconds from Train to the first test 5-NN of 90% (on the page's 2,000-image
  sample) and to the run's end.

    NCA_DATA_DIR=/path/to/data python benchmarks/gpu_training.py epoch --n 1000000
    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/gpu_training.py fit --quick

``--quick`` runs a small part of each on the device there is (on a CPU the engine takes no
fused kernels, and the fused rows say so) and keeps nothing. Tables are kept in
results/gpu_training.json (``_results``) under the measure, the device and n.
``gpu_training.sh`` runs them all, with the compiled kernels' tests, in one call.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import statistics
import time

import numpy as np
import torch
from _results import Table, device_name, key, machine
from exact_epoch import _encoder, _epoch, _mnist, _pair_floor, _start_map
from fused_epoch import bound

from nca_core import NCA, datasets
from nca_core.objective import engine, fused
from nca_core.runs.run import Run, recommended_config
from nca_core.search.knn import knn_accuracy

MNIST = 60000
ENGINES = {"fused": True, "blocked": False}
# Frames a streamed run takes per epoch on the Train page for a set of 10,000 points
# (app_pages.engine.pacing.frames_per_epoch).
PAGE_FRAMES = 4


@contextlib.contextmanager
def schedules(takes_fused: bool):
    """The engine with NCA_FUSED=1 (``takes_fused``) or without, whatever the environment
    says; yields a Counter of the calls each schedule gets meanwhile ("FusedSchedule", ...)."""
    calls: collections.Counter = collections.Counter()
    saved_switch, saved = fused.FUSED_ON_CUDA, []
    fused.FUSED_ON_CUDA = takes_fused
    for cls in (engine.FusedSchedule, engine.GaussianSchedule, engine.KernelSchedule):
        for name in ("sums", "value_sum"):
            method = getattr(cls, name)
            saved.append((cls, name, method))
            setattr(cls, name, _counted(method, cls.__name__, calls))
    try:
        yield calls
    finally:
        fused.FUSED_ON_CUDA = saved_switch
        for cls, name, method in saved:
            setattr(cls, name, method)


def _counted(method, name: str, calls: collections.Counter):
    def counted(*args, **kwargs):
        calls[name] += 1
        return method(*args, **kwargs)

    return counted


def said(calls: collections.Counter) -> str:
    """The schedules' calls in words: "FusedSchedule 59"."""
    return ", ".join(f"{name} {count}" for name, count in sorted(calls.items())) or "none"


def clock(device: torch.device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter()


def training_images(n: int, base: int = MNIST, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The first n of MNIST's training images (pixels in [0, 1], float32); beyond ``base``
    the first ``base`` repeat, each copy after the first with Gaussian pixel noise of sd 0.1."""
    data = datasets.load("mnist", download=False)
    if n <= base:
        return data.X_train[:n], data.y_train[:n]
    rows = np.arange(n) % base
    X = data.X_train[rows]
    rng = np.random.default_rng(seed)
    for start in range(base, n, base):
        part = X[start : start + base]
        part += rng.standard_normal(part.shape, dtype=np.float32) * np.float32(0.1)
    return X, data.y_train[rows]


def inputs(n: int, device: torch.device, base: int = MNIST) -> tuple[torch.Tensor, torch.Tensor]:
    if n <= base:
        return _mnist(n, device)
    X, y = training_images(n, base)
    return torch.as_tensor(X).to(device), torch.as_tensor(y).long().to(device)


def epoch_measures(X: torch.Tensor, y: torch.Tensor, A: torch.Tensor) -> dict:
    """name -> () -> (seconds, calls): an epoch under each engine, the floor, the encoder."""

    def under(takes_fused: bool):
        with schedules(takes_fused) as calls:
            return _epoch(X, y, A), calls

    measures = {name: (lambda takes_fused=takes_fused: under(takes_fused)) for name, takes_fused in ENGINES.items()}
    measures["pair floor"] = lambda: (_pair_floor(X, A), None)
    measures["encoder"] = lambda: (_encoder(X, A), None)
    return measures


def epoch(n: int, d: int, repeats: int, device: torch.device, keep: bool, base: int = MNIST) -> None:
    """One exact epoch under each engine, beside the pair floor, the encoder and the bound,
    on n points (``training_images``)."""
    X, y = inputs(n, device, base)
    A = _start_map(X, d)
    with schedules(True):  # compiles the kernels and warms the device: untimed
        _epoch(X[: min(n, 8192)], y[: min(n, 8192)], A)
    times: dict[str, list[float]] = collections.defaultdict(list)
    calls = {}
    for _ in range(repeats):
        for name, measure in epoch_measures(X, y, A).items():
            seconds, calls[name] = measure()
            times[name].append(seconds)
            print(f"n={n:,} {name}: {seconds:.3f} s", flush=True)
    least = bound(n, d, None)[0] if device.type == "cuda" else None
    median = {name: statistics.median(t) for name, t in times.items()}
    table = Table("gpu_training", key("epoch", device.type, n), ["measure", "device", "median s", "each repeat (s)",
                  "/ pair floor", "/ bound", "schedule calls"], formats={"median s": "{:.3f}"}, device=str(device),
                  keep=keep)  # fmt: skip
    images = "MNIST" if n <= base else f"MNIST's first {base:,} and noisy copies"
    table.notes.append(f"{images}, n = {n:,}, d = {d}, batches of 1024")
    for name, seconds in median.items():
        table.add(name, device_name(str(device)), seconds, ", ".join(f"{s:.3f}" for s in times[name]),
                  f"{seconds / median['pair floor']:.2f}x", "-" if least is None else f"{seconds / least:.2f}x",
                  "-" if calls[name] is None else said(calls[name]))  # fmt: skip
    if least is not None:
        table.note(f"bound: {least:.3f} s ({bound(n, d, None)[1]}: 6 d n^2 flops or n^2 exps)")
    floor = median["pair floor"] + median["encoder"]
    table.note(f"epoch / (pair floor + encoder): fused {median['fused'] / floor:.2f}x, blocked {median['blocked'] / floor:.2f}x")
    table.note(f"blocked / fused: {median['blocked'] / median['fused']:.2f}x")
    table.save()


def fitted(X, y, X_test, y_test, takes_fused: bool, device: torch.device, **params) -> dict:
    """``NCA(n_components=32, random_state=0, **params).fit`` on ``device`` under one
    engine: seconds, epochs, 5-NN test error, the schedules' calls."""
    with schedules(takes_fused) as calls:
        start = clock(device)
        model = NCA(n_components=32, random_state=0, device=str(device), **params).fit(X, y)
        seconds = clock(device) - start
    error = 1 - knn_accuracy(model.transform(X), y, model.transform(X_test), y_test, 5)
    return {"seconds": seconds, "epochs": model.n_iter_, "error": error, "calls": said(calls), "device": model.device_}


def fit(n: int, device: torch.device, engines: dict, keep: bool, base: int = MNIST, **params) -> None:
    """The defaults' fit on n points (``training_images``) under each of ``engines``, after
    an untimed small one."""
    X, y = training_images(n, base)
    test = datasets.load("mnist", download=False)
    X_test, y_test = test.X_test, test.y_test
    fitted(X[:4096], y[:4096], X_test[:100], y_test[:100], True, device, max_iter=1)
    table = Table("gpu_training", key("fit", device.type, n), ["engine", "device", "fit s", "epochs", "5-NN test error",
                  "schedule calls"], formats={"fit s": "{:.2f}", "5-NN test error": "{:.2%}"}, device=str(device),
                  keep=keep)  # fmt: skip
    images = "MNIST" if n <= base else f"MNIST's first {base:,} and noisy copies of its"
    table.notes.append(f"NCA(n_components=32, random_state=0).fit on {n:,} {images} images{_changed(params)}; "
                       "5-NN error on MNIST's 10,000 test images")  # fmt: skip
    for name, takes_fused in engines.items():
        got = fitted(X, y, X_test, y_test, takes_fused, device, **params)
        table.add(name, device_name(got["device"]), got["seconds"], got["epochs"], got["error"], got["calls"])
        table.save()


def _changed(params: dict) -> str:
    return f" and {params}" if params else ", the defaults"


def network(device: torch.device, keep: bool, quick: bool) -> None:
    """The app's MNIST network run under each engine: seconds to 90% test 5-NN and to the end."""
    data = datasets.load("mnist", download=False)
    config = recommended_config(data, 2, encoder="mlp").replace(device=str(device))
    if quick:
        config = config.replace(train_size=2000, max_iter=2)
    table = Table("gpu_training", key("network", device.type), ["engine", "device", "to 90% test 5-NN (s)", "whole run (s)",
                  "epochs", "last test 5-NN", "schedule calls"], formats={"whole run (s)": "{:.2f}"},
                  device=str(device), keep=keep)  # fmt: skip
    table.notes.append(f"the app's MNIST network: {config.train_size:,} images, {config.max_iter} epochs, "
                       f"hidden {config.hidden_sizes}, d = 2; test 5-NN on 2,000 test images after each epoch")  # fmt: skip
    for name, takes_fused in ENGINES.items():
        with schedules(takes_fused) as calls:
            start, ninety, last = clock(device), None, None
            run = Run(config, data)
            for snap in run.stream(frames_per_epoch=PAGE_FRAMES):
                if snap.test_accuracy is not None:
                    last = snap
                    if ninety is None and snap.test_accuracy >= 0.9:
                        ninety = clock(device) - start
            whole = clock(device) - start
        table.add(name, device_name(run.model.device_), "not reached" if ninety is None else f"{ninety:.2f}", whole,
                  last.epoch, f"{last.test_accuracy:.2%}", said(calls))  # fmt: skip
        table.save()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("measure", choices=["epoch", "fit", "million", "network"])
    parser.add_argument("--n", type=int, default=MNIST, help="points of the exact epoch (default MNIST's 60,000)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--quick", action="store_true", help="a small part of each, on any device; kept nowhere")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"machine: {machine(str(device))}", flush=True)
    keep = not args.quick
    if args.measure == "epoch" and args.quick:  # 4,096 images, or noisy copies of 2,048 beyond MNIST
        epoch(4096, 32, 1, device, keep, base=2048 if args.n > MNIST else MNIST)
    elif args.measure == "epoch":
        epoch(args.n, 32, args.repeats, device, keep)
    elif args.measure == "fit":
        fit(5000 if args.quick else MNIST, device, ENGINES, keep, **({"max_iter": 1} if args.quick else {}))
    elif args.measure == "million" and args.quick:  # a few noisy copies of 2,000 images
        fit(4000, device, {"fused": True}, keep, base=2000, max_iter=1)
    elif args.measure == "million":
        fit(1_000_000, device, {"fused": True}, keep)
    else:
        network(device, keep, args.quick)


if __name__ == "__main__":
    main()
