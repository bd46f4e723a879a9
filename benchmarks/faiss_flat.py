"""FAISS's exact flat search as it comes, against the library's exact search, in one run.

FAISS scans the references once per query when queries x dimensions is under a threshold
(128,000 in FAISS 1.15) and computes distances by matrix products above it; the library
asks for the products from ``backends.BLAS_FROM_QUERIES`` queries on. For each shape (random
Gaussian references and queries, float32, k = 5) this prints the median seconds of:

- ``FAISS as it comes``: ``IndexFlatL2.search``, FAISS's own threshold (on torch's
  thread count, as the library searches);
- ``FAISS, products``: the same index with products whatever the number of queries
  (threshold 0), to show where they start to win;
- ``library exact``: ``KNNIndex(index="exact", backend="faiss").search``: the scan
  below ``backends.BLAS_FROM_QUERIES`` queries, products from there on, and its re-ranking (the
  float64 answer with index tie-breaks);

and library exact / FAISS as it comes, with the share of queries whose neighbour lists
the two FAISS calls agree on (a difference is a tie or near tie put in another order).

    .venv/bin/python benchmarks/faiss_flat.py
    .venv/bin/python benchmarks/faiss_flat.py --largest 250000   # without the million rows
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from compare_sklearn import machine

from nca_core.search import backends
from nca_core.search.index import KNNIndex

K = 5
# (references, dimensions, queries): small to a million references, from 4 queries (below
# the library's threshold, where the scan stays) to 2,000
SHAPES = [
    (2_000, 32, 16), (2_000, 32, 2_000), (10_000, 32, 16),
    (60_000, 4, 16), (60_000, 32, 4), (60_000, 32, 8), (60_000, 32, 16), (60_000, 32, 2_000),
    (60_000, 784, 4), (60_000, 784, 16), (60_000, 784, 100),
    (250_000, 32, 2_000), (1_000_000, 32, 4), (1_000_000, 32, 16), (1_000_000, 32, 200),
    (1_000_000, 32, 2_000), (1_000_000, 64, 500),
]  # fmt: skip
ONE_REPEAT_FROM = 2e10  # distance terms (references x queries x d) from which one repeat is timed


def _median_seconds(search, repeats: int) -> float:
    search()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        search()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def row(n: int, d: int, n_queries: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    R = rng.standard_normal((n, d), dtype=np.float32)
    Q = rng.standard_normal((n_queries, d), dtype=np.float32)
    faiss = backends.faiss_module()
    flat = faiss.IndexFlatL2(d)
    flat.add(R)
    repeats = 1 if n * n_queries * d >= ONE_REPEAT_FROM else 5
    with backends.faiss_threads(torch.get_num_threads()):  # the threads the library's search uses
        as_it_comes = _median_seconds(lambda: flat.search(Q, K), repeats)
        _, found_as_it_comes = flat.search(Q, K)
    settings = faiss.cvar
    own, settings.distance_compute_blas_threshold = settings.distance_compute_blas_threshold, 0
    try:
        with backends.faiss_threads(torch.get_num_threads()):
            products = _median_seconds(lambda: flat.search(Q, K), repeats)
            _, found_products = flat.search(Q, K)
    finally:
        settings.distance_compute_blas_threshold = own
    index = KNNIndex(R, np.zeros(n, dtype=np.int64), index="exact", backend="faiss", device="cpu")
    library = _median_seconds(lambda: index.search(Q, K), repeats)
    agree = float(np.mean(np.all(found_as_it_comes == found_products, axis=1)))
    return {"n": n, "d": d, "queries": n_queries, "as it comes": as_it_comes, "products": products,
            "library": library, "agree": agree}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--largest", type=int, default=1_000_000, help="leave out shapes with more references")
    args = parser.parse_args()
    if not backends.faiss_available():
        raise SystemExit("faiss-cpu is not installed")
    faiss = backends.faiss_module()
    print(f"machine: {machine()}, faiss {faiss.__version__}; torch threads: {torch.get_num_threads()}")
    print(f"FAISS's threshold as it comes: {faiss.cvar.distance_compute_blas_threshold:,} (queries x d); "
          f"the library's: products from {backends.BLAS_FROM_QUERIES} queries; k = {K}\n")  # fmt: skip
    print("| references | d | queries | FAISS as it comes (s) | FAISS, products (s) | library exact (s) "
          "| library / FAISS as it comes | same lists |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n, d, n_queries in SHAPES:
        if n > args.largest:
            continue
        r = row(n, d, n_queries)
        print(
            f"| {n:,} | {d} | {n_queries:,} | {r['as it comes']:.4f} | {r['products']:.4f} | {r['library']:.4f} "
            f"| {r['library'] / r['as it comes']:.2f}x | {r['agree']:.2%} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
