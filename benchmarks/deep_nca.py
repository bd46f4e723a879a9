"""Linear and deep NCA on USPS and MNIST: 5-NN test error in 2 and 30 dimensions.

For each dataset and dimension d, trains linear NCA, deep Gaussian NCA (dG-NCA), deep
Student-t NCA (dt-NCA) and dt-MCML (Min et al., 2010) on the full training set, then
measures 5-NN test error with every training image projected as a reference. A second
table sets the memory bank (Wu et al., 2018) against batch-only neighbours at a small
batch size. The paper's published numbers are printed beside ours. Each run stops at
its epoch count or its time budget, whichever comes first.

    NCA_DATA_DIR=../shared/data python benchmarks/deep_nca.py [--datasets usps mnist]
        [--dims 2 30] [--minutes 15] [--tables methods bank] [--seeds 0 1 2]
    python benchmarks/deep_nca.py --datasets usps --dims 30 --methods dt-NCA --set dof=1
    python benchmarks/deep_nca.py --datasets usps --shift 0 --set learning_rate_schedule=constant
    python benchmarks/deep_nca.py --quick     # one epoch of dt-NCA on USPS at d = 2: seconds

Each table is kept in results/deep_nca.json (``_results``), under a key naming the options
that set the run apart from the defaults.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np
from _results import Table, key, machine

from nca_core import NCA, RandomShift, datasets, knn_predict
from nca_core.config.rules import image_shift

HIDDEN = (500, 500)
# Deep runs take the library's defaults for a network: objective g for the NCA variants and a
# cosine step-size decay ("auto"), and images shifted by ``rules.image_shift`` (``--shift``).
DEEP = {
    "encoder": "mlp",
    "hidden_sizes": HIDDEN,
    "optimizer": "adam",
    "neighbors": "memory",
    "bank_momentum": 0.0,
}
METHODS = {
    "linear NCA": {"optimizer": "adam", "batch_size": 1024, "learning_rate": 0.003},
    "dG-NCA": {**DEEP, "kernel": "gaussian"},
    "dt-NCA": {**DEEP, "kernel": "student-t"},
    "dt-MCML": {**DEEP, "kernel": "student-t", "objective": "mcml"},
}
DEEP_SETTINGS = {"batch_size": 256, "learning_rate": 0.003}
EPOCHS = {"usps": 40, "mnist": 12}
# Min et al. (2010), Table 1 (MNIST, 5-NN test error, %; RBM-pretrained D-500-500-2000-d).
PAPER = {
    ("mnist", 2): {"dG-NCA": 7.95, "dt-NCA": 3.48, "dt-MCML": 2.03},
    ("mnist", 30): {"dG-NCA": 1.11, "dt-NCA": 0.92},
}


def test_error(model, data) -> float:
    Z_train = model.transform(data.X_train).astype(np.float32)
    Z_test = model.transform(data.X_test).astype(np.float32)
    return float(np.mean(knn_predict(Z_test, Z_train, data.y_train, k=5, device="cpu") != data.y_test))


def run(
    data, d: int, params: dict, epochs: int, budget_seconds: float, every: int | None = None, seed: int = 0,
    shift: int = 0,
) -> dict:  # fmt: skip
    """Train until ``epochs`` or the time budget; return error, epochs and seconds.

    With ``every``, also print leave-one-out (10,000 training points) and test 5-NN error
    at the start and every that many epochs: a gap between them is overfitting. Their
    seconds then include those measurements. ``shift``: pixels the training images move by.
    """
    augment = RandomShift(data.image_shape, shift) if shift else None
    model = NCA(d, random_state=seed, device="cpu", max_iter=epochs, tol=0, augment=augment, **params)
    start = time.perf_counter()
    epoch = 0
    test = (data.X_test, data.y_test) if every else (None, None)
    for snap in model.fit_iter(data.X_train, data.y_train, *test, display_size=0, eval_every=every):
        epoch = snap.epoch
        if snap.train_accuracy is not None:
            print(f"    epoch {epoch}: leave-one-out error {1 - snap.train_accuracy:.2%}, "
                  f"test error {1 - snap.test_accuracy:.2%}", flush=True)  # fmt: skip
        if snap.elapsed > budget_seconds:
            break
    seconds = time.perf_counter() - start
    return {"error": test_error(model, data), "epochs": epoch, "seconds": seconds, "dof": model.dof_}


def parse_overrides(pairs: list[str]) -> dict:
    """``["dof=1", "objective=g", "hidden_sizes=256,256"]`` as NCA keyword arguments
    (numbers parsed; a comma makes a tuple of ints: "hidden_sizes=256," is one layer)."""
    overrides = {}
    for pair in pairs:
        key, _, text = pair.partition("=")
        if "," in text:
            overrides[key] = tuple(int(part) for part in text.split(",") if part)
            continue
        for kind in (int, float):
            try:
                overrides[key] = kind(text)
                break
            except ValueError:
                continue
        else:
            overrides[key] = text
    return overrides


def results_table(
    names, dims, budget, methods=tuple(METHODS), overrides=None, epochs=None, every=None, seeds=(0,),
    shift=None, table_key="methods", keep=True,
) -> list[dict]:  # fmt: skip
    """One row per dataset, d, method and seed. Deep methods shift images by ``shift``
    pixels (None: the library's ``rules.image_shift`` for the dataset); linear NCA never."""
    overrides = overrides or {}
    note = f" (deep methods with {overrides})" if overrides else ""
    table = Table("deep_nca", table_key, ["dataset", "d", "method", "seed", "shift", "epochs", "train time (s)",
                  "5-NN test error", "paper (Min et al. 2010)"], title=f"## Linear and deep NCA: 5-NN test error{note}",
                  keep=keep)  # fmt: skip
    rows = []
    for name in names:
        data = datasets.load(name, download=False)
        for d, method, seed in itertools.product(dims, methods, seeds):
            params = METHODS[method]
            deep = params.get("encoder") == "mlp"
            settings = {**params, **(DEEP_SETTINGS if deep else {}), **(overrides if deep else {})}
            pixels = (image_shift(data.image_shape) if shift is None else shift) if deep else 0
            result = run(data, d, settings, epochs or EPOCHS[name], budget, every, seed, pixels)
            paper = PAPER.get((name, d), {}).get(method)
            paper_text = f"{paper:.2f}%" if paper is not None else "-"
            table.add(name, d, method, seed, pixels, result["epochs"], f"{result['seconds']:.0f}",
                      f"{result['error']:.2%}", paper_text)  # fmt: skip
            rows.append(
                {
                    "dataset": name,
                    "d": d,
                    "method": method,
                    "seed": seed,
                    "shift": pixels,
                    **overrides,
                    **result,
                }
            )
    table.save()
    return rows


def bank_table(names, budget, d: int = 2, batch_size: int = 128, keep: bool = True) -> list[dict]:
    print()
    table = Table("deep_nca", "bank-" + "-".join(names), ["dataset", "neighbours", "epochs", "train time (s)",
                  "5-NN test error"], title=f"## Memory bank against batch-only neighbours (dt-NCA, d={d}, batch {batch_size})",
                  keep=keep)  # fmt: skip
    rows = []
    for name in names:
        data = datasets.load(name, download=False)
        for neighbors in ("memory", "batch"):
            params = {**METHODS["dt-NCA"], "neighbors": neighbors, "batch_size": batch_size}
            params["learning_rate"] = DEEP_SETTINGS["learning_rate"]
            result = run(data, d, params, EPOCHS[name], budget)
            table.add(name, neighbors, result["epochs"], f"{result['seconds']:.0f}", f"{result['error']:.2%}")
            rows.append({"dataset": name, "neighbors": neighbors, **result})
    table.save()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datasets", nargs="+", default=["usps", "mnist"], choices=sorted(EPOCHS))
    parser.add_argument("--dims", nargs="+", type=int, default=[2, 30])
    parser.add_argument("--minutes", type=float, default=15.0, help="time budget per run")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument(
        "--tables",
        nargs="+",
        default=["methods", "bank"],
        choices=["methods", "bank"],
        help="which tables to run",
    )
    parser.add_argument(
        "--set",
        nargs="*",
        action="extend",  # --set a=1 --set b=2 keeps both
        default=[],
        metavar="KEY=VALUE",
        help="override an NCA parameter of every deep method, e.g. dof=1 objective=g",
    )
    parser.add_argument("--epochs", type=int, help="epochs for every run (default: per dataset, EPOCHS)")
    parser.add_argument("--every", type=int, help="print leave-one-out and test error every this many epochs")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="random_state of each run")
    parser.add_argument(
        "--shift",
        type=int,
        help="pixels deep methods shift training images by (default: the library's; 0: off)",
    )
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--quick", action="store_true", help="one epoch of dt-NCA on USPS at d = 2; kept nowhere")
    args = parser.parse_args()
    if args.quick:
        args.datasets, args.dims, args.methods, args.tables, args.epochs = ["usps"], [2], ["dt-NCA"], ["methods"], 1
    overrides = parse_overrides(args.set)
    hidden = overrides.get("hidden_sizes", HIDDEN)
    print(f"machine: {machine()}; hidden layers {hidden}\n")
    rows = []
    if "methods" in args.tables:
        defaults = parser.parse_args([])
        apart = [name for name in ("datasets", "dims", "methods", "set", "epochs", "seeds", "shift")
                 if getattr(args, name) != getattr(defaults, name)]  # fmt: skip
        table_key = key("methods", *(f"{name}={getattr(args, name)}" for name in apart))
        rows += results_table(
            args.datasets,
            args.dims,
            args.minutes * 60,
            args.methods,
            overrides,
            args.epochs,
            args.every,
            args.seeds,
            args.shift,
            table_key,
            keep=not args.quick,
        )
    if "bank" in args.tables:
        rows += bank_table(args.datasets, args.minutes * 60, keep=not args.quick)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)


if __name__ == "__main__":
    main()
