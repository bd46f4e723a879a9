"""NCA against PCA and LDA on wine: three 2-D maps of the same 13 measurements.

Each map is fitted on the training split (standardised, as the measurements have
different units) and scored by 5-NN on the test split, with the projected training set
as references. The raw 13-D inputs are the reference row. With --full (or
NCA_EXAMPLES_FULL=1) the same comparison runs over ten random splits and prints the mean.

    python examples/wine_nca_pca_lda.py
    python examples/wine_nca_pca_lda.py --full
"""

import argparse
import os

import numpy as np
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from nca_core import NCA, fit_projection, knn_accuracy

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--full", action="store_true", default=os.environ.get("NCA_EXAMPLES_FULL") == "1",
                    help="ten random splits instead of one")  # fmt: skip
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

splits = f"mean of {len(scores['raw 13-D'])} splits" if args.full else "one split"
print(f"wine: 5-NN test accuracy ({splits}, 124 training and 54 test points)")
for name, values in scores.items():
    print(f"  {name:9s} {np.mean(values):.1%}")
