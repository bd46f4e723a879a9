"""Deep NCA on USPS: a neural network's 2-D map against the linear map's.

``NCA(encoder="mlp", image_shape=...)`` trains a 500-500 network with the library's
defaults for one (the Student-t kernel, a memory bank of neighbours, a step that decays to
0, images shifted by up to a pixel at every step). By default a stratified 1,000 training
images for 3 epochs, so it runs in seconds; --full (or NCA_EXAMPLES_FULL=1) all 7,291
with the defaults (about 20 s on 2 CPU cores). USPS is downloaded on first use, or read
from $NCA_DATA_DIR. With --figures FOLDER (or NCA_EXAMPLES_FIGURES=FOLDER) it also saves
both maps of the test images side by side, each on its own scale (the network's is far
smaller), as FOLDER/deep_usps.png.

    python examples/deep_usps.py
    python examples/deep_usps.py --full
    python examples/deep_usps.py --figures .
"""

import argparse
import os
from pathlib import Path

from nca_core import NCA, datasets, knn_accuracy, stratified_subsample
from nca_core.plots.epoch_png import panels_png

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--full", action="store_true", default=os.environ.get("NCA_EXAMPLES_FULL") == "1",
                    help="all 7,291 training images, the defaults' epochs")  # fmt: skip
parser.add_argument("--figures", type=Path, default=os.environ.get("NCA_EXAMPLES_FIGURES"),
                    help="save both maps of the test images as a PNG in this folder")  # fmt: skip
args = parser.parse_args()

data = datasets.load("usps")
X_train, y_train = data.X_train, data.y_train
short = {}
if not args.full:
    keep = stratified_subsample(y_train, 1000, seed=0)
    X_train, y_train, short = X_train[keep], y_train[keep], {"max_iter": 3}

maps = {}  # caption -> the test images' 2-D map
print(f"USPS: {len(y_train):,} training and {len(data.y_test):,} test images, d = 2")
for name, model in (
    ("linear NCA", NCA(n_components=2, random_state=0, **short)),
    ("deep NCA", NCA(n_components=2, encoder="mlp", image_shape=data.image_shape, random_state=0, **short)),
):
    model.fit(X_train, y_train)
    error = 1 - knn_accuracy(model.transform(X_train), y_train, model.transform(data.X_test), data.y_test, k=5)
    print(f"  {name:10s} {model.n_iter_:3d} epochs, 5-NN test error {error:.2%}")
    maps[f"{name} · test 5-NN error {error:.1%}"] = model.transform(data.X_test)

if args.figures:
    png = panels_png(list(maps.values()), data.y_test, data.classes, list(maps), columns=2, width=1200, one_scale=False,
                     title=f"USPS's {len(data.y_test):,} test images under each map")  # fmt: skip
    (args.figures / "deep_usps.png").write_bytes(png)
