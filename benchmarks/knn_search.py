"""k-NN search on raw inputs and on an NCA projection, exact and through HNSW, side by side.

On one dataset (default MNIST: every test image a query against all training images), in
one run, prints a Markdown table and the lines under it, and keeps them in
results/knn_search.json (``_results``) under the dataset and the machine's kind ("cpu", or
"gpu" where CUDA is present):

1. each space (raw pixels, NCA-d) searched five ways: the library's torch blocked exact
   search (its path without FAISS or on a GPU), bare FAISS ``IndexFlatL2`` with a plain
   vote, the library's exact search (FAISS flat, float64 re-ranking), its HNSW graph
   (built on one thread: reproducible) and the index "auto" picks for an index kept for
   many queries. Columns: query time for all queries (median of repeats, each listed),
   build time, index bytes, 5-NN test error;
2. the checks: NCA exact against FAISS flat on the same vectors, NCA with the library's
   pick against the best exact raw search, and their errors;
3. the kNN scoring during training (leave-one-out on a stratified 2,000 plus 2,000 test
   queries against every training point, as ``runs.run.Run`` asks each epoch): torch against
   the library's default.

NCA is ``comparison.quick_nca``: the recommended settings on a stratified subset of
``--train-points`` (default all), saved under the cache directory so a second run skips
training (training time is not part of these tables).

    NCA_DATA_DIR=/path/to/data python benchmarks/knn_search.py              # MNIST, d = 32
    NCA_DATA_DIR=/path/to/data python benchmarks/knn_search.py --dataset usps --repeats 1

A million references: MNIST followed by 940,000 deformed copies (``datasets.load
("mnist-deformed")``, generated and cached on the first run), NCA trained on a stratified
60,000 of them, 2,000 test queries, and on the raw pixels only the FAISS-flat searches (the torch
blocked one is as exact and slower; a one-thread HNSW build on a million 784-D images
takes far longer than the rest of the run):

    NCA_DATA_DIR=/path/to/data python benchmarks/knn_search.py --dataset mnist-deformed \
        --n-train 1000000 --train-points 60000 --queries 2000 --repeats 1 \
        --raw-methods "FAISS flat (bare)" "library exact (FAISS flat, re-ranked)"

``quick()`` (``--quick``, and ``make bench``) measures the two ratios of the checks on 2,000
test queries, with an NCA trained on 5,000 points (MNIST, else USPS, else digits, as the
files allow).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import numpy as np
import torch
from _results import Table, key, machine, print_quick

from nca_core import datasets, stratified_subsample
from nca_core.runs.comparison import model_cache_dir, quick_nca
from nca_core.runs.run import EVAL_POINTS, recommended_config
from nca_core.search import knn
from nca_core.search.index import KNNIndex


def _timed(search, repeats: int):
    """(median seconds, every repeat's seconds, the last answer) of ``search()``."""
    times, answer = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        answer = search()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, answer


def _bare_faiss(R, y_ref, Q, k: int, repeats: int) -> dict:
    """FAISS IndexFlatL2 as a user would call it: search k, majority vote (ties: lower class)."""
    import faiss

    start = time.perf_counter()
    index = faiss.IndexFlatL2(R.shape[1])
    index.add(R)
    build = time.perf_counter() - start
    classes, labels = np.unique(y_ref, return_inverse=True)

    def search():
        _, found = index.search(Q, k)
        counts = np.zeros((len(Q), len(classes)), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(len(Q)), k), labels[found].ravel()), 1)
        return classes[counts.argmax(1)]

    index.search(Q[:50], k)  # warm-up
    median, times, predicted = _timed(search, repeats)
    return {"seconds": median, "all": times, "build": build, "bytes": R.nbytes, "predicted": predicted}


def _library(R, y_ref, Q, k: int, repeats: int, device: str = "cpu", **options) -> dict:
    index = KNNIndex(R, y_ref, device=device, **options)
    index.predict(Q[:50], k)  # warm-up
    median, times, predicted = _timed(lambda: index.predict(Q, k), repeats)
    return {
        "seconds": median, "all": times, "build": index.build_seconds, "bytes": index.nbytes,
        "predicted": predicted, "kind": index.kind,
    }  # fmt: skip


METHODS = {
    "torch blocked, exact": lambda *a: _library(*a, index="exact", backend="torch"),
    "FAISS flat (bare)": _bare_faiss,
    "library exact (FAISS flat, re-ranked)": lambda *a: _library(*a, index="exact"),
    "library HNSW": lambda *a: _library(*a, index="hnsw"),
    "library auto": lambda *a: _library(*a, index="auto"),
}
# On a machine with a GPU: the library's exact search there (torch blocks; the queries go
# to the device and the answers come back within the timed call, as a user's would)
if torch.cuda.is_available():
    METHODS["library exact on the GPU (torch)"] = lambda *a: _library(*a, device="cuda", index="exact", backend="torch")


def _measured(method: str, R, y_ref, Q, y_query, k: int, repeats: int) -> dict:
    result = METHODS[method](R, y_ref, Q, k, repeats)
    result["error"] = float(np.mean(result["predicted"] != y_query))
    return result


COLUMNS = ["space", "method", "query time (s), median [repeats]", "build (s)", "index (MB)", "5-NN error"]


def space_rows(table: Table, label: str, R, y_ref, Q, y_query, k: int, repeats: int, methods=tuple(METHODS)) -> dict:
    results = {}
    for method in methods:
        result = results[method] = _measured(method, R, y_ref, Q, y_query, k, repeats)
        name = f"{method} ({result['kind']})" if "kind" in result and method.endswith("auto") else method
        repeats_text = ", ".join(f"{s:.3f}" for s in result["all"])
        table.add(label, name, f"{result['seconds']:.3f} [{repeats_text}]", f"{result['build']:.2f}",
                  f"{result['bytes'] / 1e6:.1f}", f"{result['error']:.2%}")  # fmt: skip
    return results


def checks(table: Table, raw: dict, nca: dict, d: int) -> None:
    exact = ("torch blocked, exact", "FAISS flat (bare)", "library exact (FAISS flat, re-ranked)")
    exact_raw = min((m for m in exact if m in raw), key=lambda m: raw[m]["seconds"])
    mine, flat, pick = (
        nca["library exact (FAISS flat, re-ranked)"],
        nca["FAISS flat (bare)"],
        nca["library auto"],
    )
    table.note(f"NCA-{d} exact: FAISS flat time / library exact time: {flat['seconds'] / mine['seconds']:.2f}x (target >= 1)")
    table.note(f"NCA-{d} with the library's pick ({pick['kind']}) against the best exact raw search ({exact_raw}): "
               f"{raw[exact_raw]['seconds'] / pick['seconds']:.1f}x faster (target >= 10x)")  # fmt: skip
    table.note(f"5-NN error: NCA-{d} {pick['kind']} against raw {exact_raw}: {pick['error']:.2%} vs "
               f"{raw[exact_raw]['error']:.2%} (target: no worse)")  # fmt: skip
    table.note(f"index size: raw flat / NCA-{d} flat: {raw['FAISS flat (bare)']['bytes'] / flat['bytes']:.1f}x")


def gpu_checks(table: Table, raw: dict, nca: dict, d: int) -> None:
    """The GPU's exact search against bare FAISS flat on the CPU, in each space (GPU only)."""
    gpu = "library exact on the GPU (torch)"
    rows = [(label, space) for label, space in (("raw", raw), (f"NCA-{d}", nca)) if gpu in space and "FAISS flat (bare)" in space]
    for label, space in rows:
        cpu, on_gpu = space["FAISS flat (bare)"], space[gpu]
        table.note(f"{label}: FAISS flat on the CPU ({torch.get_num_threads()} threads) / the library's exact search "
                   f"on the GPU: {cpu['seconds'] / on_gpu['seconds']:.1f}x; 5-NN error, GPU / FAISS: "
                   f"{on_gpu['error']:.2%} / {cpu['error']:.2%}")  # fmt: skip


def evaluation(table: Table, Z_train, y_train, Z_test, y_test, k: int, repeats: int) -> None:
    """The per-epoch scoring of ``runs.run.Run``: torch (as before FAISS) against the default."""
    sample = stratified_subsample(y_train, EVAL_POINTS, seed=0)
    test = stratified_subsample(y_test, EVAL_POINTS, seed=0)
    timings = []
    for label, options in (("torch blocked", {"backend": "torch"}), ("library default", {})):

        def score(options=options):
            loo = knn.leave_one_out_accuracy(Z_train, y_train, k, sample=sample, device="cpu", **options)
            return loo, knn.knn_accuracy(
                Z_train, y_train, Z_test[test], y_test[test], k, device="cpu", **options
            )

        median, times, (loo, acc) = _timed(score, repeats)
        timings.append(f"{label} {median:.3f} s [{', '.join(f'{s:.3f}' for s in times)}] ({loo:.4f}, {acc:.4f})")
    table.note(f"per-epoch kNN scoring ({EVAL_POINTS:,} leave-one-out + {EVAL_POINTS:,} test queries; "
               f"seconds, then accuracies): {'; '.join(timings)}")  # fmt: skip


def _first_available(names=("mnist", "usps", "digits")):
    for name in names:
        try:
            return datasets.load(name, download=False)
        except datasets.DatasetError:
            continue
    raise RuntimeError("no dataset to search")


def quick(repeats: int = 3, queries: int = 2000, train_points: int = 5000, d: int = 32) -> list[dict]:
    """Rows for ``run_all``: exact NCA search against bare FAISS, and the library's pick
    against the best exact search of the raw inputs."""
    data = _first_available()
    standardize = recommended_config(data).standardize
    model = quick_nca(data, d, standardize, max_train=train_points, cache_dir=model_cache_dir()).model
    test = stratified_subsample(data.y_test, queries, seed=0)
    X_query, y_query = data.X_test[test], data.y_test[test]
    Z_train, Z_query = (np.ascontiguousarray(model.transform(X), dtype=np.float32) for X in (data.X_train, X_query))
    args = (data.y_train, y_query, 5, repeats)
    mine = _measured("library exact (FAISS flat, re-ranked)", Z_train, args[0], Z_query, *args[1:])
    flat = _measured("FAISS flat (bare)", Z_train, args[0], Z_query, *args[1:])
    pick = _measured("library auto", Z_train, args[0], Z_query, *args[1:])
    raw = min((_measured(m, data.X_train, args[0], X_query, *args[1:]) for m in ("FAISS flat (bare)", "library exact (FAISS flat, re-ranked)")),
              key=lambda r: r["seconds"])  # fmt: skip
    where = f"{data.name}, {len(test):,} queries against {len(data.y_train):,}"
    return [
        {"measure": f"exact kNN on NCA-{d} ({where}): library time / bare FAISS flat",
         "ratio": mine["seconds"] / flat["seconds"], "value": f"{mine['seconds']:.3f} s against {flat['seconds']:.3f} s",
         "target": "<= 1.1 (as fast, within timing noise)", "met": mine["seconds"] <= 1.1 * flat["seconds"]},
        {"measure": f"kNN on NCA-{d}, the library's pick ({pick['kind']}), against exact raw search: speed-up",
         "ratio": raw["seconds"] / pick["seconds"], "value": f"5-NN error {pick['error']:.2%} against {raw['error']:.2%}",
         "target": ">= 10", "met": raw["seconds"] / pick["seconds"] >= 10},
    ]  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", default="mnist")
    parser.add_argument("--d", type=int, default=32, help="NCA output dimension")
    parser.add_argument("--train-points", type=int, default=None, help="NCA's training subset (default all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--n-train", type=int, default=1_000_000, help="mnist-deformed's references")
    parser.add_argument("--queries", type=int, default=None, help="a stratified sample of the test set (default all)")
    parser.add_argument("--raw-methods", nargs="+", choices=list(METHODS), default=list(METHODS),
                        help="the searches of the raw inputs (default all)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="quick(): 2,000 queries, NCA on 5,000 points; kept nowhere")
    args = parser.parse_args(argv)
    if args.quick:
        print_quick("knn_search", quick())
        return
    data = datasets.load(args.dataset, download=False, n_train=args.n_train)
    if args.queries is not None and args.queries < len(data.y_test):
        test = stratified_subsample(data.y_test, args.queries, seed=0)
        data = dataclasses.replace(data, X_test=data.X_test[test], y_test=data.y_test[test])
    n_train = args.train_points or len(data.y_train)
    standardize = recommended_config(data).standardize
    fitted = quick_nca(data, args.d, standardize, max_train=n_train, cache_dir=model_cache_dir())
    import faiss

    print(f"machine: {machine()}, faiss {faiss.__version__}\n")
    table = Table("knn_search", key(args.dataset, "gpu" if torch.cuda.is_available() else "cpu"), COLUMNS,
                  device="cuda" if torch.cuda.is_available() else "cpu")  # fmt: skip
    table.notes.append(
        f"{args.dataset}: {len(data.y_test):,} queries against {len(data.y_train):,} references; NCA-{args.d} "
        f"trained on {fitted.n_train:,} points ({fitted.epochs} epochs{', from the cache' if fitted.from_cache else ''})"
    )
    Z_train = np.ascontiguousarray(fitted.model.transform(data.X_train), dtype=np.float32)
    Z_test = np.ascontiguousarray(fitted.model.transform(data.X_test), dtype=np.float32)
    y, yq, k, repeats = data.y_train, data.y_test, args.k, args.repeats
    raw = space_rows(table, f"raw {data.n_features}-D", data.X_train, y, data.X_test, yq, k, repeats, args.raw_methods)
    nca = space_rows(table, f"NCA {args.d}-D", Z_train, y, Z_test, yq, k, repeats)
    print(f"\n{table.notes[0]}")
    checks(table, raw, nca, args.d)
    gpu_checks(table, raw, nca, args.d)
    evaluation(table, Z_train, data.y_train, Z_test, data.y_test, args.k, args.repeats)
    table.save()


if __name__ == "__main__":
    main()
