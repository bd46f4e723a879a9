"""What an HNSW graph costs against exact search, in exact distance evaluations: the
measurement behind ``search.index._GRAPH_COST`` and the rule ``index.choose_index`` draws from it.

On MNIST, raw pixels and the NCA-32 projection ``knn_search.py`` uses, stratified subsets
of the training images are the references and a stratified 2,000 test images the queries.
The library's exact search (``KNNIndex(index="exact")``, FAISS flat) and its HNSW graph
(``index="hnsw"``, built on one thread) are timed in turn on each. One exact distance
evaluation costs c = exact query time / (queries x references); the graph's query time
per query and its build time per point are printed in units of c, beside the constant.
``choose_index`` takes a graph for a kept index where references >= 2 x the constant, so
the table also gives the measured exact / graph query time against references / constant,
the ratio the rule assumes.

    NCA_DATA_DIR=../shared/data python benchmarks/graph_cost.py
    NCA_DATA_DIR=../shared/data python benchmarks/graph_cost.py --sizes 10000 60000 --repeats 1
"""

from __future__ import annotations

import argparse

import numpy as np
from compare_sklearn import machine
from knn_search import _library

from nca_core import datasets, stratified_subsample
from nca_core.runs.comparison import model_cache_dir, quick_nca
from nca_core.runs.run import recommended_config
from nca_core.search import index


def _subset(X, y, n: int):
    rows = stratified_subsample(y, n, seed=0) if n < len(y) else np.arange(len(y))
    return np.ascontiguousarray(X[rows]), y[rows]


def sweep(label: str, X_ref, y_ref, Q, y_query, sizes, repeats: int) -> None:
    """One row per size: exact and graph query times, the graph's build, and both in units of c."""
    for n in sizes:
        R, y = _subset(X_ref, y_ref, n)
        exact = _library(R, y, Q, 5, repeats, index="exact")
        graph = _library(R, y, Q, 5, repeats, index="hnsw")
        per_distance = exact["seconds"] / (len(Q) * n)
        query_cost = graph["seconds"] / len(Q) / per_distance
        build_cost = graph["build"] / n / per_distance
        print(
            f"| {label} | {n:,} | {exact['seconds']:.3f} | {graph['seconds']:.3f} | {graph['build']:.2f} "
            f"| {query_cost:,.0f} | {build_cost:,.0f} | {exact['seconds'] / graph['seconds']:.2f} "
            f"| {n / index._GRAPH_COST:.2f} | {index.choose_index(n)} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000, 40000, 60000])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--d", type=int, default=32)
    args = parser.parse_args()
    data = datasets.load("mnist", download=False)
    test = stratified_subsample(data.y_test, args.queries, seed=0)
    Q_raw, y_query = np.ascontiguousarray(data.X_test[test]), data.y_test[test]
    standardize = recommended_config(data).standardize
    nca = quick_nca(data, args.d, standardize, cache_dir=model_cache_dir()).model
    Z_ref = np.ascontiguousarray(nca.transform(data.X_train), dtype=np.float32)
    Z_query = np.ascontiguousarray(nca.transform(Q_raw), dtype=np.float32)
    print(f"machine: {machine()}\n")
    print(f"MNIST, {len(Q_raw):,} queries; _GRAPH_COST = {index._GRAPH_COST:,}; query times median of {args.repeats}\n")
    print(
        "| space | references | exact query (s) | graph query (s) | graph build (s) | graph query / c "
        "| build per point / c | exact / graph query | references / _GRAPH_COST | kept index picks |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    sweep(f"raw {data.n_features}-D", data.X_train, data.y_train, Q_raw, y_query, args.sizes, args.repeats)
    sweep(f"NCA {args.d}-D", Z_ref, data.y_train, Z_query, y_query, args.sizes, args.repeats)


if __name__ == "__main__":
    main()
