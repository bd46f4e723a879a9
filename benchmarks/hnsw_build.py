"""The HNSW graph's build effort (efConstruction) against what it finds, in one run.

On one dataset (default MNIST: every test image a query against all training images), for
the raw inputs and an NCA projection (``comparison.quick_nca``, as the kNN page trains it),
prints one Markdown table: exact search first, then a graph built at each
``--ef-construction`` (M and efSearch as the library's), with its build seconds (on all
cores, as the kNN page builds; the library's default build is one thread), the median
seconds of searching every query, the 5-NN test error and the share of queries whose
prediction is exact search's. The numbers behind ``backends.HNSW_EF_CONSTRUCTION``.

    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/hnsw_build.py
    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/hnsw_build.py --dataset usps --d 16
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from compare_sklearn import machine

from nca_core import datasets
from nca_core.runs.comparison import model_cache_dir, quick_nca
from nca_core.runs.run import recommended_config
from nca_core.search import backends
from nca_core.search.index import KNNIndex


def _searched(R, y_ref, Q, k: int, repeats: int, **options) -> tuple[float, float, np.ndarray]:
    """(build seconds, median search seconds, predictions) of a ``KNNIndex`` on the CPU."""
    index = KNNIndex(R, y_ref, device="cpu", backend="faiss", **options)
    index.predict(Q[:50], k)  # warm-up
    times, predicted = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        predicted = index.predict(Q, k)
        times.append(time.perf_counter() - start)
    return index.build_seconds, statistics.median(times), predicted


def space_rows(label: str, R, y_ref, Q, y_query, efforts, k: int, repeats: int) -> None:
    R, Q = np.ascontiguousarray(R, dtype=np.float32), np.ascontiguousarray(Q, dtype=np.float32)
    build, seconds, exact = _searched(R, y_ref, Q, k, repeats, index="exact")
    print(f"| {label} | exact | {build:.2f} | {seconds:.3f} | {np.mean(exact != y_query):.2%} | 100.00% |", flush=True)
    default = backends.HNSW_EF_CONSTRUCTION
    try:
        for effort in efforts:
            backends.HNSW_EF_CONSTRUCTION = effort  # read when a graph is built
            build, seconds, found = _searched(R, y_ref, Q, k, repeats, index="hnsw", deterministic=False)
            print(
                f"| {label} | HNSW, efConstruction {effort} | {build:.2f} | {seconds:.3f} "
                f"| {np.mean(found != y_query):.2%} | {np.mean(found == exact):.2%} |",
                flush=True,
            )
    finally:
        backends.HNSW_EF_CONSTRUCTION = default


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist")
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--ef-construction", type=int, nargs="+", default=[20, 24, 28, 32, 40])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = datasets.load(args.dataset)
    standardize = recommended_config(data).standardize
    nca = quick_nca(data, args.d, standardize, cache_dir=model_cache_dir()).model
    print(f"Machine: {machine()}; {args.dataset}, {len(data.y_test):,} queries against {len(data.y_train):,}; "
          f"M {backends.HNSW_M}, efSearch {backends.HNSW_EF_SEARCH}, library default efConstruction {backends.HNSW_EF_CONSTRUCTION}\n")
    print("| space | index | build (s) | query (s) | 5-NN error | same prediction as exact |")
    print("| --- | --- | --- | --- | --- | --- |")
    spaces = {
        f"raw {data.n_features}-D": (data.X_train, data.X_test),
        f"NCA {args.d}-D": (nca.transform(data.X_train), nca.transform(data.X_test)),
    }
    for label, (R, Q) in spaces.items():
        space_rows(label, R, data.y_train, Q, data.y_test, args.ef_construction, args.k, args.repeats)


if __name__ == "__main__":
    main()
