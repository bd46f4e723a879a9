"""A million points: MNIST grown by deformed copies, trained on approximate neighbours.

``datasets.load("mnist-deformed", n_train=N)`` is MNIST's 60,000 training images followed by
copies moved by small random affine maps and elastic distortions (generated from the seed
and cached). Above 100,000 points ``NCA(n_components=32)`` trains each anchor against its
nearest candidates and a sample of the rest (``neighbors="nearest"``), so an epoch costs
O(n). By default 61,000 points and one epoch on nearest points, in seconds; --full (or
NCA_EXAMPLES_FULL=1) a million with the defaults (minutes on 2 CPU cores; about 7 GB of
memory at the peak, 3 GB of it the data).

    python examples/million_points.py
    python examples/million_points.py --full
"""

import argparse
import os
import time

from nca_core import NCA, datasets, knn_accuracy

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--full", action="store_true", default=os.environ.get("NCA_EXAMPLES_FULL") == "1",
                    help="a million points, the library's defaults")  # fmt: skip
args = parser.parse_args()

n_train = 1_000_000 if args.full else 61_000
settings = {} if args.full else {"neighbors": "nearest", "max_iter": 1}  # "auto" is exact below 100,000
data = datasets.load("mnist-deformed", n_train=n_train, seed=0)

start = time.perf_counter()
model = NCA(n_components=32, random_state=0, **settings).fit(data.X_train, data.y_train)
seconds = time.perf_counter() - start
error = 1 - knn_accuracy(model.transform(data.X_train), data.y_train, model.transform(data.X_test), data.y_test, k=5)

epochs = f"{model.n_iter_} epoch" + "s" * (model.n_iter_ != 1)
print(f"mnist-deformed: {len(data.y_train):,} training points, {epochs} on nearest points "
      f"in {seconds:.1f} s on {model.device_}")  # fmt: skip
print(f"  5-NN test error on MNIST's 10,000 test images: {error:.2%}")
