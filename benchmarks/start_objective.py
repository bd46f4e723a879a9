"""The start frame's objective on MNIST: what sampling fewer anchors saves, and what it costs.

A large run reports its objective before the first step on a sample of anchors, each
against all 60,000 points (``training.gradients.evaluate_objective``'s ``max_pairs``). The
script maps MNIST's training images (centred, float32) to 2-D by PCA, the start the Train
page opens MNIST with, and times that estimate at several ``max_pairs`` with four seeds
each, against the objective of all anchors.

    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/start_objective.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import torch
from compare_sklearn import machine
from sklearn.decomposition import PCA

from nca_core import datasets
from nca_core.objective.kernels import GaussianKernel
from nca_core.training.encoders import LinearEncoder
from nca_core.training.gradients import START_MAX_PAIRS, evaluate_objective


def main() -> None:
    data = datasets.load("mnist", download=False)
    order = np.argsort(data.y_train, kind="stable")  # evaluate_objective wants rows sorted by class
    X = torch.from_numpy(data.X_train[order] - data.X_train.mean(0)).float()
    y = torch.from_numpy(data.y_train[order])
    A = torch.from_numpy(PCA(2, random_state=0).fit(data.X_train[:10000]).components_).float()
    encoder, kernel = LinearEncoder(A), GaussianKernel()
    print(f"Machine: {machine()}\n")
    exact = evaluate_objective(encoder, kernel, X, y, "f", max_pairs=float("inf"))
    print(f"mean p_i over all {len(y):,} anchors: {exact:.4f}\n")
    print("| max_pairs | anchors | seconds (median of 4) | largest error of 4 seeds |")
    print("| --- | --- | --- | --- |")
    for max_pairs in (4e8, 2e8, START_MAX_PAIRS):
        seconds, errors = [], []
        for seed in range(4):
            start = time.perf_counter()
            value = evaluate_objective(
                encoder, kernel, X, y, "f", generator=torch.Generator().manual_seed(seed), max_pairs=max_pairs
            )
            seconds.append(time.perf_counter() - start)
            errors.append(abs(value - exact))
        anchors = int(max_pairs // len(y))
        print(f"| {max_pairs:.0e} | {anchors:,} | {statistics.median(seconds):.3f} | {max(errors):.4f} |")


if __name__ == "__main__":
    main()
