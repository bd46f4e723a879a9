"""What ``NCA(encoder="mlp")`` gets by default, measured: the preset and its candidates.

Each row fits ``NCA(n_components=d, encoder="mlp", image_shape=..., random_state=seed)``
with nothing else set, or with one candidate change (``--candidates``), on a dataset's full
training set, and reports the 5-NN test error (every training image projected as a
reference) for each seed, their mean, and the training time. The defaults (``config.plan.make_plan``,
what "auto" means for a network) are chosen from these rows.

    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/network_defaults.py
    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/network_defaults.py --dims 2 30 --seeds 0 1 2
    python benchmarks/network_defaults.py --quick      # digits, d = 30, seed 0, the defaults: seconds

The table is kept in results/network_defaults.json (``_results``), under a key naming the
dataset, dimensions, input scale and device.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import numpy as np
import torch
from _results import Table, key, machine

from nca_core import NCA, datasets, knn_predict
from nca_core.config.rules import DataShape

SHOWN = ("kernel", "objective", "neighbors", "learning_rate_schedule", "shift", "max_iter", "batch_size", "learning_rate")

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
}


def five_nn_error(model: NCA, data) -> float:
    Z_train = model.transform(data.X_train).astype(np.float32)
    Z_test = model.transform(data.X_test).astype(np.float32)
    return float(np.mean(knn_predict(Z_test, Z_train, data.y_train, k=5, device="cpu") != data.y_test))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="usps")
    parser.add_argument("--dims", nargs="+", type=int, default=[30])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--candidates", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES))
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every input by this (how far from unit scale)")
    parser.add_argument("--quick", action="store_true", help="digits, d = 30, seed 0, the defaults; kept nowhere")
    args = parser.parse_args()
    if args.quick:
        args.dataset, args.dims, args.seeds, args.candidates = "digits", [30], [0], ["defaults"]
    device = "cuda" if torch.cuda.is_available() else "cpu"  # where NCA's "auto" trains
    data = datasets.load(args.dataset, download=False)
    if args.scale != 1.0:
        data = dataclasses.replace(data, X_train=data.X_train * args.scale, X_test=data.X_test * args.scale)
    print(f"machine: {machine()}\n")
    print(f"{args.dataset}: {len(data.y_train):,} training, {len(data.y_test):,} test images, inputs x {args.scale:g}\n")
    scale = None if args.scale == 1.0 else f"x{args.scale:g}"
    table = Table("network_defaults", key(args.dataset, [f"d{d}" for d in args.dims], scale, device),
                  ["data", "d", "settings", "resolved", "5-NN test error per seed", "mean", "train time (s) per seed"],
                  device=device, keep=not args.quick)  # fmt: skip
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
                    resolved = ", ".join(f"{k}={settings[k]}" for k in SHOWN)
            table.add(args.dataset, d, name, resolved, ", ".join(f"{e:.2%}" for e in errors),
                      f"{statistics.mean(errors):.2%}", ", ".join(f"{s:.0f}" for s in seconds))  # fmt: skip
    table.save()


if __name__ == "__main__":
    main()
