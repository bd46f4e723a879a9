"""What a user gets from the defaults, beside scikit-learn where it has an equivalent.

1. The first fit in a fresh process against the second (one-time imports and set-up), for
   nca_core (L-BFGS and Adam) and scikit-learn's NCA, on 398 standardised breast-cancer rows.
2. ``NCA(n_components=32, random_state=0).fit(X, y)`` on all 60,000 MNIST training images
   (pixels in [0, 1]) with no other argument: the settings "auto" picked, wall time and
   5-NN test error on the 10,000 test images; then the command-line trainer with only
   ``--dataset mnist --n-components 32``.

    NCA_DATA_DIR=/path/to/data python benchmarks/defaults.py [--skip-mnist]
    python benchmarks/defaults.py --quick          # the first fits only; kept nowhere

Both tables are kept in results/defaults.json (``_results``), the MNIST one under the
device that trained ("cpu" or "cuda").
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import Table, machine

FIRST_FIT = """
import time, numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.preprocessing import StandardScaler
X, y = load_breast_cancer(return_X_y=True)
X, y = StandardScaler().fit_transform(X)[:398], y[:398]
{imports}
times = []
for _ in range(2):
    start = time.perf_counter(); {fit}; times.append(time.perf_counter() - start)
print(times[0], times[1])
"""

CASES = {
    "nca_core L-BFGS": (
        "from nca_core import NCA",
        "NCA(2, optimizer='lbfgs', random_state=0, device='cpu').fit(X, y)",
    ),
    "nca_core Adam": (
        "from nca_core import NCA",
        "NCA(2, optimizer='adam', max_iter=10, random_state=0, device='cpu').fit(X, y)",
    ),
    "scikit-learn": (
        "from sklearn.neighbors import NeighborhoodComponentsAnalysis as N",
        "N(2, random_state=0).fit(X, y)",
    ),
}


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def first_fits(keep: bool = True) -> None:
    formats = {"first fit (s)": "{:.3f}", "second fit (s)": "{:.3f}", "one-time cost (s)": "{:.3f}"}
    table = Table("defaults", f"first-fits-{_device()}", ["estimator", *formats], formats=formats, keep=keep)
    for name, (imports, fit) in CASES.items():
        code = FIRST_FIT.format(imports=imports, fit=fit)
        first, second = map(
            float,
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout.split(),
        )
        table.add(name, first, second, first - second)
    table.save()


def mnist_default() -> None:
    from nca_core import NCA, datasets, knn_accuracy
    from nca_core.config.plan import resolve
    from nca_core.config.rules import DataShape

    data = datasets.load("mnist")
    model = NCA(n_components=32, random_state=0)
    shape = DataShape(len(data.y_train), data.n_features, data.n_classes)
    settings, _ = resolve({k: getattr(model, k) for k in ("n_components", "encoder", "init", "optimizer", "neighbors",
                           "learning_rate", "batch_size", "max_iter", "kernel", "objective", "n_candidates")}, shape)  # fmt: skip
    start = time.perf_counter()
    model.fit(data.X_train, data.y_train)
    seconds = time.perf_counter() - start
    error = 1 - knn_accuracy(
        model.transform(data.X_train), data.y_train, model.transform(data.X_test), data.y_test, 5
    )
    picked = {k: settings[k] for k in ("optimizer", "init", "learning_rate", "batch_size", "max_iter")}
    device = str(model.device_)
    table = Table("defaults", device.split(":")[0], ["path", "settings picked", "wall time (s)", "5-NN test error"],
                  device=device)  # fmt: skip
    table.add("`NCA(n_components=32, random_state=0).fit` on all of MNIST", str(picked), f"{seconds:.1f}", f"{error:.2%}")
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "nca_core", "train", "--dataset", "mnist", "--n-components", "32",
                        "--out", out, "--eval-every", "0"], check=True, capture_output=True)  # fmt: skip
        wall = time.perf_counter() - start
        metrics = json.loads((Path(out) / "metrics.json").read_text())
    s = metrics["settings"]
    cli = {k: s[k] for k in ("optimizer", "init", "learning_rate", "batch_size", "max_iter")}
    table.add("`python -m nca_core train --dataset mnist --n-components 32`", str(cli), f"{wall:.1f} (whole command)",
              f"{metrics['test_error_5nn']:.2%}")  # fmt: skip
    table.save()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-mnist", action="store_true")
    parser.add_argument("--quick", action="store_true", help="the first fits only, kept nowhere")
    args = parser.parse_args()
    print(f"machine: {machine()}\n")
    first_fits(keep=not args.quick)
    if not (args.skip_mnist or args.quick):
        print()
        mnist_default()


if __name__ == "__main__":
    main()
