"""NCA against PCA and LDA on wine: three 2-D maps of the same 13 measurements.

Each map is fitted on the training split (standardised, as the measurements have
different units) and scored by 5-NN on the test split, with the projected training set
as references. The raw 13-D inputs are the reference row. With --full (or
NCA_EXAMPLES_FULL=1) the same comparison runs over ten random splits and prints the mean.
With --figures FOLDER (or NCA_EXAMPLES_FIGURES=FOLDER) it also saves the first split's three
maps of the test wines side by side, on one scale, as FOLDER/wine_nca_pca_lda.png.

    python examples/wine_nca_pca_lda.py
    python examples/wine_nca_pca_lda.py --full
    python examples/wine_nca_pca_lda.py --figures .
"""

import argparse
import os
from pathlib import Path

import numpy as np
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from nca_core import NCA, fit_projection, knn_accuracy
from nca_core.plots.epoch_png import panels_png

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--full", action="store_true", default=os.environ.get("NCA_EXAMPLES_FULL") == "1",
                    help="ten random splits instead of one")  # fmt: skip
parser.add_argument("--figures", type=Path, default=os.environ.get("NCA_EXAMPLES_FIGURES"),
                    help="save the first split's maps as a PNG in this folder")  # fmt: skip
args = parser.parse_args()

X, y = load_wine(return_X_y=True)
scores = {"raw 13-D": [], "PCA 2-D": [], "LDA 2-D": [], "NCA 2-D": []}
for seed in range(10 if args.full else 1):
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    maps = {
        "raw 13-D": lambda Z: Z,
        "PCA 2-D": fit_projection("pca", X_train, y_train, 2).transform,
        "LDA 2-D": fit_projection("lda", X_train, y_train, 2).transform,
        "NCA 2-D": NCA(n_components=2, random_state=seed).fit(X_train, y_train).transform,
    }
    for name, transform in maps.items():
        scores[name].append(knn_accuracy(transform(X_train), y_train, transform(X_test), y_test, k=5))
    if args.figures and seed == 0:
        drawn = [name for name in maps if name.endswith("2-D")]
        captions = [f"{name} · test 5-NN {scores[name][0]:.1%}" for name in drawn]
        png = panels_png([maps[name](X_test) for name in drawn], y_test, ["cultivar 1", "cultivar 2", "cultivar 3"], captions,
                         title="The 54 test wines under each map, one scale", width=1200)  # fmt: skip
        (args.figures / "wine_nca_pca_lda.png").write_bytes(png)

splits = f"mean of {len(scores['raw 13-D'])} splits" if args.full else "one split"
print(f"wine: 5-NN test accuracy ({splits}, 124 training and 54 test points)")
for name, values in scores.items():
    print(f"  {name:9s} {np.mean(values):.1%}")
