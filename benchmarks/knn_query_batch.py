"""Exact k-NN search time against the number of queries: raw pixels and a 32-D map.

The kNN page times a stratified sample of the test points (``app_pages.ui.speed_table.QUERIES``)
rather than all of them. This prints, for MNIST and several sample sizes, the page's own
measurement (``search.timing.knn_search_cost``, exact index, the page's repeats) on the raw
784-D pixels and on a 32-D projection (PCA of 10,000 training images: a flat search's cost
does not depend on which map made the vectors), the microseconds per query, and the ratio
of the two, so one can see from how many queries the ratio is a full test set's.

    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/knn_query_batch.py
"""

from __future__ import annotations

import argparse

import numpy as np
from compare_sklearn import machine
from sklearn.decomposition import PCA

from nca_core import datasets
from nca_core.search.timing import knn_search_cost
from nca_core.util.sampling import stratified_subsample

# The page's repeats when RESULTS.md's table of this script was taken (sixth session); the
# page has since timed fewer (app_pages.ui.speed.REPEATS and its neighbours).
PAGE_OPTIONS = {"repeats": 7, "min_repeats": 3, "budget_seconds": 3.0, "deterministic": False}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, nargs="+", default=[1000, 2000, 3000, 5000, 10000])
    args = parser.parse_args()
    data = datasets.load("mnist", download=False)
    pca = PCA(32, random_state=0).fit(data.X_train[:10000])
    Z_train, Z_test = (pca.transform(X).astype(np.float32) for X in (data.X_train, data.X_test))
    print(f"Machine: {machine()}\n")
    print("| queries | raw 784-D (s) | us / query | 32-D (s) | us / query | raw / 32-D |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in args.queries:
        q = stratified_subsample(data.y_test, n, seed=0) if n < len(data.y_test) else np.arange(len(data.y_test))
        raw = knn_search_cost("raw", data.X_train, data.y_train, data.X_test[q], data.y_test[q], 5, **PAGE_OPTIONS)
        low = knn_search_cost("32-D", Z_train, data.y_train, Z_test[q], data.y_test[q], 5, **PAGE_OPTIONS)
        print(
            f"| {len(q):,} | {raw.query_seconds:.3f} | {1e6 * raw.query_seconds / len(q):.0f} "
            f"| {low.query_seconds:.3f} | {1e6 * low.query_seconds / len(q):.0f} "
            f"| {raw.query_seconds / low.query_seconds:.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
