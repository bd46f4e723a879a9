"""What ``NCA(encoder="mlp")`` gets by default, measured: the preset and its candidates.

Each row fits ``NCA(n_components=d, encoder="mlp", image_shape=..., random_state=seed)``
with nothing else set, or with one candidate change (``--candidates``), on a dataset's full
training set, and reports the 5-NN test error (every training image projected as a
reference) for each seed, their mean, and the training time. The defaults (``config.plan.make_plan``,
what "auto" means for a network) are chosen from these rows.

    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/network_defaults.py
    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/network_defaults.py --dims 2 30 --seeds 0 1 2
    python benchmarks/network_defaults.py --quick      # digits, d = 30, seed 0, the defaults: seconds
    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/network_defaults.py --suite cpu   # hours

The table is kept in results/network_defaults.json (``_results``), under a key naming the
dataset, dimensions, input scale and device. ``--suite cpu`` runs every run of RESULTS.md's
table of the defaults and their candidates (``SUITES``) and prints and keeps it as that one
table, under "cpu". ``--suite digits-scaled`` does the same for the table behind the warning
about inputs far from unit scale (``SCALES``): digits with every input multiplied by 1, 2
and 4 (seconds).
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import statistics
import time

import numpy as np
import torch
from _results import Table, key, machine

from nca_core import NCA, datasets, knn_predict
from nca_core.config.rules import DataShape

# What the "resolved" column shows of the settings a fit resolves "auto" to: the ones the
# candidates change.
SHOWN = ("objective", "max_iter", "batch_size", "learning_rate")
RESOLVED = "resolved (objective, epochs, batch, step)"
NAMES = {"usps": "USPS", "mnist": "MNIST"}  # a dataset as the table names it

CANDIDATES = {
    "defaults": {},
    "objective=mcml": {"objective": "mcml"},
    "objective=g": {"objective": "g"},
    "bank_momentum=0": {"bank_momentum": 0.0},
    "objective=mcml, bank_momentum=0": {"objective": "mcml", "bank_momentum": 0.0},
    "max_iter=40": {"max_iter": 40},
    "objective=mcml, max_iter=40": {"objective": "mcml", "max_iter": 40},
    "batch_size=256, max_iter=12": {"batch_size": 256, "max_iter": 12},
    "objective=mcml, learning_rate=0.001": {"objective": "mcml", "learning_rate": 0.001},
    "objective=mcml, learning_rate=0.003": {"objective": "mcml", "learning_rate": 0.003},
    # The defaults before MCML at step 0.001 became the preset of a wide map of a small set:
    # objective g at step 0.003 in batches of 256, here for 40 epochs.
    "old defaults, max_iter=40": {"objective": "g", "learning_rate": 0.003, "batch_size": 256, "max_iter": 40},
    "old defaults, objective=mcml, max_iter=40": {
        "objective": "mcml", "learning_rate": 0.003, "batch_size": 256, "max_iter": 40,
    },
    "old defaults, objective=mcml, max_iter=40, learning_rate=0.001": {
        "objective": "mcml", "learning_rate": 0.001, "batch_size": 256, "max_iter": 40,
    },
}  # fmt: skip
# The runs that make RESULTS.md's table of the defaults, in its row order (``--suite``).
SUITES = {
    "cpu": [
        "--dims 30 --candidates 'old defaults, max_iter=40' 'old defaults, objective=mcml, max_iter=40' "
        "'old defaults, objective=mcml, max_iter=40, learning_rate=0.001' defaults",
        "--dims 2 --candidates 'old defaults, max_iter=40' defaults",
        "--dataset digits --dims 30 --candidates defaults objective=g 'objective=mcml, learning_rate=0.003'",
        "--dataset mnist --dims 30 --seeds 0 --candidates defaults",
    ],
}
COLUMNS = ["data", "d", "settings", RESOLVED, "5-NN test error per seed", "mean", "train time (s) per seed"]
# "digits-scaled": why a network warns about inputs far from unit scale. Digits at d = 30
# with every input multiplied by each factor, the defaults against objective g.
SCALES = (1, 2, 4)
SCALED = "digits-scaled"
SCALED_RUN = "--dataset digits --dims 30 --candidates defaults objective=g --scale {scale}"
SCALED_COLUMNS = ["inputs", "largest feature std", "defaults (MCML, 0.001)", "objective=g (0.003)"]
SCALED_NOTE = "5-NN test error per seed (0, 1, 2), digits at d = 30, every input multiplied by the factor shown."


def five_nn_error(model: NCA, data) -> float:
    Z_train = model.transform(data.X_train).astype(np.float32)
    Z_test = model.transform(data.X_test).astype(np.float32)
    return float(np.mean(knn_predict(Z_test, Z_train, data.y_train, k=5, device="cpu") != data.y_test))


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="usps")
    parser.add_argument("--dims", nargs="+", type=int, default=[30])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES))
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every input by this (how far from unit scale)")
    parser.add_argument("--quick", action="store_true", help="digits, d = 30, seed 0, the defaults; kept nowhere")
    parser.add_argument("--suite", choices=[*SUITES, SCALED],
                        help="every run of this RESULTS.md table, printed and kept as that one table")  # fmt: skip
    return parser


def load(args: argparse.Namespace):
    data = datasets.load(args.dataset, download=False)
    if args.scale != 1.0:
        data = dataclasses.replace(data, X_train=data.X_train * args.scale, X_test=data.X_test * args.scale)
    return data


def rows(args: argparse.Namespace, data):
    """Fit each d, candidate and seed of ``args`` in turn; yield each candidate's cells."""
    for d in args.dims:
        for name in args.candidates:
            errors, seconds, resolved = [], [], ""
            for seed in args.seeds:
                model = NCA(d, encoder="mlp", image_shape=data.image_shape, random_state=seed, **CANDIDATES[name])
                start = time.perf_counter()
                model.fit(data.X_train, data.y_train)
                seconds.append(time.perf_counter() - start)
                errors.append(five_nn_error(model, data))
                if not resolved:
                    settings = model.plan(DataShape(len(data.y_train), data.n_features, data.n_classes)).settings
                    resolved = ", ".join(str(settings[k]) for k in SHOWN)
            yield [NAMES.get(args.dataset, args.dataset), d, name, resolved, ", ".join(f"{e:.2%}" for e in errors),
                   f"{statistics.mean(errors):.2%}", ", ".join(f"{s:.0f}" for s in seconds)]  # fmt: skip


def scaled_table(device: str) -> None:
    """The digits-scaled table: a row per input scale (``SCALES``), each candidate's error
    per seed, and the largest feature standard deviation the scale gives."""
    table = Table("network_defaults", SCALED, SCALED_COLUMNS, device=device)
    for scale in SCALES:
        run = make_parser().parse_args(shlex.split(SCALED_RUN.format(scale=scale)))
        data = load(run)
        errors = [cells[4] for cells in rows(run, data)]  # one per candidate, in SCALED_RUN's order
        largest = float(np.std(np.asarray(data.X_train, dtype=np.float64), axis=0).max())
        pixels = f"digits' pixels, {np.min(data.X_train):g} to {np.max(data.X_train):g}"
        table.add(pixels if scale == 1 else f"x {scale}", f"{largest:.1f}", *errors)
    table.note(SCALED_NOTE)
    table.save()


def main(argv=None) -> None:
    args = make_parser().parse_args(argv)
    if args.quick:
        args.dataset, args.dims, args.seeds, args.candidates = "digits", [30], [0], ["defaults"]
    device = "cuda" if torch.cuda.is_available() else "cpu"  # where NCA's "auto" trains
    print(f"machine: {machine()}\n")
    if args.suite == SCALED:
        scaled_table(device)
        return
    if args.suite:
        table = Table("network_defaults", args.suite, COLUMNS, device=device)
        for options in SUITES[args.suite]:
            run = make_parser().parse_args(shlex.split(options))
            for cells in rows(run, load(run)):
                table.add(*cells)
        table.save()
        return
    data = load(args)
    print(f"{args.dataset}: {len(data.y_train):,} training, {len(data.y_test):,} test images, inputs x {args.scale:g}\n")
    scale = None if args.scale == 1.0 else f"x{args.scale:g}"
    table = Table("network_defaults", key(args.dataset, [f"d{d}" for d in args.dims], scale, device), COLUMNS,
                  device=device, keep=not args.quick)  # fmt: skip
    for cells in rows(args, data):
        table.add(*cells)
    table.save()


if __name__ == "__main__":
    main()
