"""All of MNIST to 32 dimensions: NCA against PCA and the raw pixels, by 5-NN.

``NCA(n_components=32)`` with nothing else set: above 3,000 points "auto" trains with
minibatch Adam, with settings chosen for the data's size. By default a stratified 5,000
training images and 1,000 test images, 3 epochs, so it runs in seconds; --full (or
NCA_EXAMPLES_FULL=1) takes all 60,000 and 10,000 (about a minute on 2 CPU cores, a few
seconds on a GPU). MNIST is downloaded on first use, or read from $NCA_DATA_DIR.

    python examples/mnist_32d.py
    python examples/mnist_32d.py --full
"""

import argparse
import os
import time

from nca_core import NCA, datasets, fit_projection, knn_accuracy, stratified_subsample

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--full", action="store_true", default=os.environ.get("NCA_EXAMPLES_FULL") == "1",
                    help="all 60,000 training and 10,000 test images")  # fmt: skip
args = parser.parse_args()

data = datasets.load("mnist")
X_train, y_train, X_test, y_test = data.X_train, data.y_train, data.X_test, data.y_test
short = {}
if not args.full:
    train, test = stratified_subsample(y_train, 5000, seed=0), stratified_subsample(y_test, 1000, seed=0)
    X_train, y_train, X_test, y_test = X_train[train], y_train[train], X_test[test], y_test[test]
    short = {"max_iter": 3}

start = time.perf_counter()
nca = NCA(n_components=32, random_state=0, **short).fit(X_train, y_train)
seconds = time.perf_counter() - start
pca = fit_projection("pca", X_train, y_train, 32)

print(f"MNIST: {len(y_train):,} training and {len(y_test):,} test images; NCA trained in {seconds:.1f} s "
      f"({nca.n_iter_} epochs on {nca.device_})")  # fmt: skip
for name, transform in (("raw 784-D", lambda X: X), ("PCA 32-D", pca.transform), ("NCA 32-D", nca.transform)):
    error = 1 - knn_accuracy(transform(X_train), y_train, transform(X_test), y_test, k=5)
    print(f"  {name:9s} 5-NN test error {error:.2%}")
