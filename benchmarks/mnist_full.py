"""NCA on all 60,000 MNIST training images, and what its projection saves in kNN.

Prints three tables:
1. the 32-D NCA fit on all of MNIST, epoch by epoch: seconds of training so far, 5-NN test
   error (all 60,000 projected images as references), peak RSS of this process; beside it
   PCA to 32 dimensions and raw pixels;
2. 5-NN on the 10,000 test images in raw 784-D against the 32-D NCA projection: error,
   query time, stored bytes and the ratios (the torchnca article's table);
3. seconds per training epoch at n = 5k, 10k, 20k and 60k.

    NCA_DATA_DIR=../shared/data python benchmarks/mnist_full.py [--epochs 6]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from nca_core import NCA, datasets, knn_predict, stratified_subsample

SETTINGS = {"optimizer": "adam", "batch_size": 1024, "learning_rate": 0.003}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def error_5nn(Z_train, y_train, Z_test, y_test) -> float:
    return float(np.mean(knn_predict(Z_test, Z_train, y_train, k=5, device="cpu") != y_test))


def full_fit(data, epochs: int):
    print(f"## 1. NCA d=32 on all {len(data.y_train):,} training images ({SETTINGS})\n")
    print("| epoch | training time (s) | 5-NN test error | peak RSS (MB) |")
    print("| --- | --- | --- | --- |")
    model = NCA(32, random_state=0, device="cpu", max_iter=epochs, tol=0, **SETTINGS)
    for snap in model.fit_iter(data.X_train, data.y_train, display_size=10):
        if snap.epoch == 0:
            continue
        error = error_5nn(
            model.transform(data.X_train), data.y_train, model.transform(data.X_test), data.y_test
        )
        print(f"| {snap.epoch} | {snap.elapsed:.1f} | {error:.2%} | {peak_rss_mb():.0f} |", flush=True)
    from sklearn.decomposition import PCA

    start = time.perf_counter()
    pca = PCA(32, random_state=0).fit(data.X_train)
    pca_seconds = time.perf_counter() - start
    pca_error = error_5nn(pca.transform(data.X_train), data.y_train, pca.transform(data.X_test), data.y_test)
    print(f"\nPCA to 32 dimensions: 5-NN test error {pca_error:.2%} (fit {pca_seconds:.1f} s)")
    return model


def knn_table(data, model) -> None:
    print("\n## 2. 5-NN on the 10,000 test images: raw pixels against the 32-D NCA projection\n")
    rows = []
    for name, train, test in (
        ("raw 784-D", data.X_train, data.X_test),
        (
            "NCA 32-D",
            model.transform(data.X_train).astype(np.float32),
            model.transform(data.X_test).astype(np.float32),
        ),
    ):
        knn_predict(test[:100], train, data.y_train, k=5, device="cpu")  # warm-up
        times = []
        for _ in range(3):
            start = time.perf_counter()
            predicted = knn_predict(test, train, data.y_train, k=5, device="cpu")
            times.append(time.perf_counter() - start)
        rows.append((name, float(np.mean(predicted != data.y_test)), float(np.median(times)), train.nbytes))
    print("| references | 5-NN test error | query time, 10k queries (s, median of 3) | stored bytes |")
    print("| --- | --- | --- | --- |")
    for name, error, seconds, stored in rows:
        print(f"| {name} | {error:.2%} | {seconds:.2f} | {stored / 1e6:.1f} MB |")
    (_, _, raw_s, raw_b), (_, _, nca_s, nca_b) = rows
    print(f"\nNCA 32-D is {raw_s / nca_s:.1f}x faster to query and {raw_b / nca_b:.1f}x smaller to store.")


def epoch_scaling(data) -> None:
    print("\n## 3. Seconds per training epoch as n grows (d=32, exact neighbours from all n points)\n")
    print("| n | seconds per epoch |")
    print("| --- | --- |")
    for n in (5000, 10000, 20000, 60000):
        keep = stratified_subsample(data.y_train, n, seed=0)
        model = NCA(32, random_state=0, device="cpu", max_iter=1, tol=0, **SETTINGS)
        snaps = list(model.fit_iter(data.X_train[keep], data.y_train[keep], display_size=10))
        print(f"| {n:,} | {snaps[-1].elapsed:.1f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--skip-scaling", action="store_true")
    args = parser.parse_args()
    data = datasets.load("mnist", download=False)
    model = full_fit(data, args.epochs)
    knn_table(data, model)
    if not args.skip_scaling:
        epoch_scaling(data)


if __name__ == "__main__":
    main()
