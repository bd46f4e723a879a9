"""nca_core.NCA against scikit-learn's NeighborhoodComponentsAnalysis, side by side.

Each (case, method) fit runs in a fresh subprocess, so its peak resident memory is its own;
both methods see the same arrays. Prints a Markdown table: 5-NN test error (references are
the projected training set), fit time (median of repeats) and peak RSS, and the ratios; and
keeps both in results/compare_sklearn.json (``_results``).

    python benchmarks/compare_sklearn.py                      # every case
    python benchmarks/compare_sklearn.py --cases usps-d2 wine-d2 --repeats 3
    python benchmarks/compare_sklearn.py --quick              # wine and digits, once: seconds
"""

from __future__ import annotations

import argparse
import concurrent.futures as futures
import multiprocessing
import resource
import statistics
import time

import numpy as np
from _results import Table, machine

# name: (dataset, d, training subset or None, standardise, our NCA settings)
CASES = {
    "wine-d2": ("wine", 2, None, True, {}),
    "digits-d2": ("digits", 2, None, False, {}),
    "usps-d2": ("usps", 2, None, False, {}),
    "usps-d32": ("usps", 32, None, False, {}),
    "mnist10k-d32": (
        "mnist",
        32,
        10000,
        False,
        {"optimizer": "adam", "batch_size": 1024, "learning_rate": 0.003, "max_iter": 6},
    ),
}


def _data(case: str):
    from sklearn.preprocessing import StandardScaler

    from nca_core import datasets, stratified_subsample

    name, d, subset, standardise, _ = CASES[case]
    data = datasets.load(name, download=False)
    X_train, y_train, X_test, y_test = data.X_train, data.y_train, data.X_test, data.y_test
    if subset is not None:
        keep = stratified_subsample(y_train, subset, seed=0)
        X_train, y_train = X_train[keep], y_train[keep]
    if standardise:
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    return (
        np.ascontiguousarray(X_train, dtype=np.float64),
        y_train,
        np.ascontiguousarray(X_test, dtype=np.float64),
        y_test,
        d,
        data,
    )


def _fit_once(case: str, method: str) -> dict:
    """Runs in a child process: fit, time it, measure 5-NN error and peak RSS."""
    from nca_core import NCA, knn_accuracy

    X_train, y_train, X_test, y_test, d, data = _data(case)
    if method == "nca_core":
        model = NCA(d, random_state=0, device="cpu", **CASES[case][4])
        NCA(2, max_iter=1, device="cpu").fit(X_train[:50], y_train[:50])  # import/warm-up outside the clock
    else:
        from sklearn.neighbors import NeighborhoodComponentsAnalysis

        model = NeighborhoodComponentsAnalysis(d, random_state=0)
    start = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    error = 1 - knn_accuracy(
        model.transform(X_train), y_train, model.transform(X_test), y_test, k=5, device="cpu"
    )
    result = {"seconds": seconds, "error": error, "n_iter": int(model.n_iter_)}
    if method == "nca_core" and "optimizer" not in CASES[case][4]:  # what "auto" chose for this size
        from nca_core.config.rules import LBFGS_MAX_SAMPLES

        result["optimizer"] = "L-BFGS" if len(y_train) <= LBFGS_MAX_SAMPLES else "minibatch Adam"
    if case.startswith("mnist10k"):  # project all 60,000 training images as references
        result["error_60k_refs"] = 1 - knn_accuracy(
            model.transform(data.X_train.astype(np.float64)),
            data.y_train,
            model.transform(X_test),
            y_test,
            k=5,
            device="cpu",
        )
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def run(case: str, method: str, repeats: int) -> dict:
    results = []
    context = multiprocessing.get_context("spawn")
    for _ in range(repeats):
        with futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            results.append(pool.submit(_fit_once, case, method).result())
    best = dict(results[0])
    best["seconds"] = statistics.median(r["seconds"] for r in results)
    best["all_seconds"] = [round(r["seconds"], 3) for r in results]
    best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in results)
    return best


QUICK = ("wine-d2", "digits-d2")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument(
        "--repeats", type=int, default=3, help="repeats for cases where scikit-learn takes under 30 s"
    )
    parser.add_argument("--quick", action="store_true", help=f"{', '.join(QUICK)} once each; keeps nothing")
    args = parser.parse_args(argv)
    if args.quick:
        args.cases, args.repeats = list(QUICK), 1
    # the whole set of cases is the table RESULTS.md shows; a subset is kept beside it
    suffix = "" if args.cases == list(CASES) or args.quick else "-" + "-".join(args.cases)
    print(f"machine: {machine()}\n")
    fits = Table("compare_sklearn", f"fits{suffix}", ["case", "method", "settings", "5-NN test error",
                 "fit time (s), median [repeats]", "peak RSS (MB)", "iterations"], keep=not args.quick)  # fmt: skip
    ratios = []
    for case in args.cases:
        reference = run(case, "sklearn", 1)
        repeats = args.repeats if reference["seconds"] < 30 else 1
        if repeats > 1:
            reference = run(case, "sklearn", repeats)
        ours = run(case, "nca_core", repeats)
        settings = ", ".join(f"{k}={v}" for k, v in CASES[case][4].items()) or f"defaults ({ours['optimizer']})"
        for method, result, label in (
            ("nca_core", ours, settings),
            ("scikit-learn", reference, "defaults (max_iter=50)"),
        ):
            error = f"{result['error']:.2%}"
            if "error_60k_refs" in result:
                error += f" ({result['error_60k_refs']:.2%} with 60k references)"
            seconds = f"{result['seconds']:.2f} [{', '.join(str(s) for s in result['all_seconds'])}]"
            fits.add(case, method, label, error, seconds, round(result["peak_rss_mb"]), result["n_iter"])
        ratios.append(
            (
                case,
                reference["seconds"] / ours["seconds"],
                reference["peak_rss_mb"] / ours["peak_rss_mb"],
                ours["error"] - reference["error"],
            )
        )
    fits.save()
    print()
    table = Table("compare_sklearn", f"ratios{suffix}", ["case", "speed-up (scikit-learn time / ours)",
                  "memory ratio (theirs / ours)", "error difference (ours - theirs)"], keep=not args.quick)  # fmt: skip
    for case, speed, memory, diff in ratios:
        table.add(case, f"{speed:.1f}x", f"{memory:.1f}x", f"{diff * 100:+.2f} points")
    table.save()


if __name__ == "__main__":
    main()
