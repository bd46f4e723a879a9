"""Linear and deep NCA on USPS and MNIST: 5-NN test error in 2 and 30 dimensions.

For each dataset and dimension d, trains linear NCA, deep Gaussian NCA (dG-NCA), deep
Student-t NCA (dt-NCA) and dt-MCML (Min et al., 2010) on the full training set, then
measures 5-NN test error with every training image projected as a reference. A second
table sets the memory bank (Wu et al., 2018) against batch-only neighbours at a small
batch size. The paper's published numbers are printed beside ours. Each run stops at
its epoch count or its time budget, whichever comes first.

    NCA_DATA_DIR=/path/to/data python benchmarks/deep_nca.py [--datasets usps mnist]
        [--dims 2 30] [--minutes 15] [--tables methods bank] [--seeds 0 1 2]
    python benchmarks/deep_nca.py --datasets usps --dims 30 --methods dt-NCA --set dof=1
    python benchmarks/deep_nca.py --datasets usps --shift 0 --set learning_rate_schedule=constant
    python benchmarks/deep_nca.py --quick     # one epoch of dt-NCA on USPS at d = 2: seconds
    NCA_DATA_DIR=/path/to/data python benchmarks/deep_nca.py --suite methods   # hours

Each table is kept in results/deep_nca.json (``_results``), under a key naming the options
that set the run apart from the defaults. ``--suite NAME`` runs every run of one of
RESULTS.md's tables (``SUITES``, ``CHANGES``: "methods", "longer", "usps-30-changes") and
prints and keeps that one table under NAME, its rows in the page's order.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shlex
import statistics
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


COLUMNS = ["dataset", "d", "method", "seed", "shift", "epochs", "train time (s)", "5-NN test error",
           "paper (Min et al. 2010)"]  # fmt: skip
# The runs that make each of RESULTS.md's method tables, in its row order (``--suite``).
SUITES = {
    "methods": [
        "--datasets usps",
        "--datasets mnist --dims 2 --methods dG-NCA --seeds 0 1 2",
        "--datasets mnist --dims 2 --methods dt-NCA dt-MCML",
        "--datasets mnist --dims 30 --methods dG-NCA dt-NCA dt-MCML",
    ],
    # Past "methods"' 12 epochs; each cap is above its epochs at up to 90 s per MNIST epoch (a
    # 2-core CPU), so the epochs column, not the cap, ends each run.
    "longer": [
        "--datasets mnist --dims 2 --methods dt-MCML --epochs 16 --minutes 30",
        "--datasets mnist --dims 2 --methods dt-MCML --epochs 20 --minutes 35",
        "--datasets mnist --dims 30 --methods dt-NCA --epochs 24 --minutes 40",
    ],
}
# "usps-30-changes": dt-MCML on USPS at d = 30 over three seeds, one setting changed at a
# time; a row per change, its options added to CHANGES_BASE.
CHANGES_BASE = "--datasets usps --dims 30 --methods dt-MCML --seeds 0 1 2"
CHANGES = {
    "none: shift 1, cosine decay, batch 256, memory bank, 500-500": "",
    "constant step": "--set learning_rate_schedule=constant",
    "no shift": "--shift 0",
    "no shift, constant step": "--shift 0 --set learning_rate_schedule=constant",
    "batch 128": "--set batch_size=128",
    "batch 512": "--set batch_size=512",
    "batch 1024": "--set batch_size=1024",
    'batch-only neighbours (`neighbors="batch"`)': "--set neighbors=batch",
    "the paper's 500-500-2000 network": "--set hidden_sizes=500,500,2000",
}
CHANGES_NOTE = "dt-MCML on USPS at d = 30, 40 epochs, one setting changed at a time; 5-NN test error per seed and their mean."


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


def method_rows(names, dims, budget, methods=tuple(METHODS), overrides=None, epochs=None, every=None, seeds=(0,),
                shift=None):  # fmt: skip
    """Train each dataset, d, method and seed in turn; yield its cells (``COLUMNS``) and
    its record. Deep methods shift images by ``shift`` pixels (None: the library's
    ``rules.image_shift`` for the dataset); linear NCA never."""
    overrides = overrides or {}
    for name in names:
        data = datasets.load(name, download=False)
        for d, method, seed in itertools.product(dims, methods, seeds):
            params = METHODS[method]
            deep = params.get("encoder") == "mlp"
            settings = {**params, **(DEEP_SETTINGS if deep else {}), **(overrides if deep else {})}
            pixels = (image_shift(data.image_shape) if shift is None else shift) if deep else 0
            result = run(data, d, settings, epochs or EPOCHS[name], budget, every, seed, pixels)
            paper = PAPER.get((name, d), {}).get(method)
            cells = [name, d, method, seed, pixels, result["epochs"], f"{result['seconds']:.0f}",
                     f"{result['error']:.2%}", f"{paper:.2f}%" if paper is not None else "-"]  # fmt: skip
            record = {"dataset": name, "d": d, "method": method, "seed": seed, "shift": pixels, **overrides, **result}
            yield cells, record


def results_table(
    names, dims, budget, methods=tuple(METHODS), overrides=None, epochs=None, every=None, seeds=(0,),
    shift=None, table_key="methods", keep=True,
) -> list[dict]:  # fmt: skip
    """One row per dataset, d, method and seed (``method_rows``), printed and kept."""
    note = f" (deep methods with {overrides})" if overrides else ""
    table = Table("deep_nca", table_key, COLUMNS, title=f"## Linear and deep NCA: 5-NN test error{note}", keep=keep)
    rows = []
    for cells, record in method_rows(names, dims, budget, methods, overrides, epochs, every, seeds, shift):
        table.add(*cells)
        rows.append(record)
    table.save()
    return rows


def _options(parser: argparse.ArgumentParser, options: str, minutes: float | None = None) -> argparse.Namespace:
    """One run of a suite: its options as the command line would give them."""
    args = parser.parse_args(shlex.split(options))
    if minutes is not None and "--minutes" not in options:
        args.minutes = minutes
    return args


def changes_cells(label: str, records: list[dict]) -> list:
    """One row of the changes table: the label, each seed's error, their mean, and the
    range of the runs' train times ("14-15", or "8" where they agree)."""
    errors = [record["error"] for record in records]
    times = sorted({f"{record['seconds']:.0f}" for record in records}, key=int)
    span = times[0] if len(times) == 1 else f"{times[0]}-{times[-1]}"
    return [label, *(f"{error:.2%}" for error in errors), f"{statistics.mean(errors):.2%}", span]


def run_suite(parser: argparse.ArgumentParser, name: str, minutes: float | None = None, keep: bool = True) -> None:
    """Every run of one of RESULTS.md's tables, printed and kept as that one table."""
    if name == "usps-30-changes":
        seeds = _options(parser, CHANGES_BASE).seeds
        columns = ["change from the defaults", *(f"seed {seed}" for seed in seeds), "mean", "train time per run (s)"]
        table = Table("deep_nca", name, columns, keep=keep)
        for label, change in CHANGES.items():
            args = _options(parser, f"{CHANGES_BASE} {change}", minutes)
            records = [record for _, record in method_rows(*_run_arguments(args))]
            table.add(*changes_cells(label, records))
        table.note(CHANGES_NOTE)
    else:
        table = Table("deep_nca", name, COLUMNS, keep=keep)
        for options in SUITES[name]:
            for cells, _ in method_rows(*_run_arguments(_options(parser, options, minutes))):
                table.add(*cells)
    table.save()


def _run_arguments(args: argparse.Namespace) -> tuple:
    """``method_rows``'s arguments from parsed options."""
    return (args.datasets, args.dims, args.minutes * 60, args.methods, parse_overrides(args.set), args.epochs,
            args.every, args.seeds, args.shift)  # fmt: skip


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


def make_parser() -> argparse.ArgumentParser:
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
    parser.add_argument("--suite", choices=[*SUITES, "usps-30-changes"],
                        help="every run of this RESULTS.md table, printed and kept as that one table "
                             "(--minutes, where given, caps each run; other options are the suite's own)")  # fmt: skip
    return parser


def main(argv=None) -> None:
    parser = make_parser()
    args = parser.parse_args(argv)
    if args.suite:
        print(f"machine: {machine()}\n")
        given = args.minutes if args.minutes != parser.get_default("minutes") else None
        run_suite(make_parser(), args.suite, given)
        return
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
