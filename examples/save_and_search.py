"""Save a model, load it elsewhere, and search with it: kNN on the 32-D projection.

Trains ``NCA(n_components=32)`` on MNIST, writes it with ``save_model`` (plain arrays and
JSON in one .npz, never a pickle), loads it back with ``load_model`` and indexes the
projected training images in a ``KNNIndex``: "auto" picks exact search or an HNSW graph by
the number of references. The index answers the test images' 5 nearest neighbours; their
majority vote is the prediction. By default a stratified 5,000 training and 1,000 test
images and 3 epochs; --full (or NCA_EXAMPLES_FULL=1) all of them, with the defaults.

    python examples/save_and_search.py
    python examples/save_and_search.py --full
"""

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from nca_core import NCA, datasets, load_model, save_model, stratified_subsample
from nca_core.search.index import KNNIndex

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

with tempfile.TemporaryDirectory() as folder:
    path = Path(folder) / "mnist-nca32.npz"
    save_model(NCA(n_components=32, random_state=0, **short).fit(X_train, y_train), path)
    size = path.stat().st_size
    model = load_model(path)  # a fresh estimator, ready to transform

index = KNNIndex(model.transform(X_train), y_train)  # index="auto": exact or HNSW
start = time.perf_counter()
predicted = index.predict(model.transform(X_test), k=5)
seconds = time.perf_counter() - start
neighbours = index.search(model.transform(X_test[:1]), k=5)[0]

print(f"model file: {size / 1024:.0f} KiB; index: {index.kind} ({index.backend}), "
      f"{index.nbytes / 1e6:.1f} MB against {X_train.nbytes / 1e6:.1f} MB of raw pixels")  # fmt: skip
print(f"{len(y_test):,} queries in {seconds:.3f} s; 5-NN test error {np.mean(predicted != y_test):.2%}")
print(f"the first test image (a {y_test[0]}): its 5 nearest training images are {y_train[neighbours].tolist()}")
