"""The gradient of a linear map, G^T X, as one product and summed over blocks of rows.

A training step pushes d(loss)/dZ (G, n x d) back through Z = X A^T: the gradient in A is
G^T X, a product with d output rows summed over n rows. ``LinearEncoder`` sums it over
blocks of ``encoders.GRADIENT_BLOCK_ROWS`` rows in one batched product instead. This times,
in one process and in turn, both ways on MNIST pixels for the shapes training meets: the
rows a nearest-points step touches (about 16,000) and all 60,000, at d = 2 and d = 32, with
the largest difference between the two results relative to the largest entry.

    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/linear_gradient.py
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from compare_sklearn import machine

from nca_core import datasets
from nca_core.training.encoders import GRADIENT_BLOCK_ROWS, _summed_in_blocks


def _milliseconds(product, G: torch.Tensor, X: torch.Tensor, repeats: int) -> float:
    product(G, X)  # the first call sets up the kernels
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        product(G, X)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def _one_product(G: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    return G.T @ X


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    data = datasets.load("mnist", download=False)
    X_all = torch.as_tensor(np.asarray(data.X_train, dtype=np.float32)) / 255.0
    print(f"Machine: {machine()}\n")
    print(f"| rows | d | one product (ms) | blocks of {GRADIENT_BLOCK_ROWS} (ms) | speed-up | largest difference |")
    print("| --- | --- | --- | --- | --- | --- |")
    for rows, d in ((16000, 2), (16000, 32), (60000, 2), (60000, 32)):
        X = X_all[:rows].contiguous()
        G = torch.randn(rows, d, generator=torch.Generator().manual_seed(0))
        plain = _milliseconds(_one_product, G, X, args.repeats)
        blocked = _milliseconds(_summed_in_blocks, G, X, args.repeats)
        want = G.T @ X
        difference = float((_summed_in_blocks(G, X) - want).abs().max() / want.abs().max())
        print(f"| {rows:,} | {d} | {plain:.2f} | {blocked:.2f} | {plain / blocked:.2f}x | {difference:.1e} |")


if __name__ == "__main__":
    main()
