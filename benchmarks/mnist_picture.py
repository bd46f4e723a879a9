"""The Train page's MNIST run (a 2-D picture): exact neighbours against nearest points.

Fits, in one process and one after the other, the settings the Train page opens MNIST
with (``runs.run.recommended_config``, d = 2) twice: with neighbours from all points for
15 epochs (the page's earlier default) and with the current default, nearest points for
40 epochs. Each fit streams as the app's does (a frame per minibatch, k-NN scores on
2,000-point samples after every epoch). The table gives the seconds to the start frame,
to the first whole epoch and to the end, and 5-NN test accuracy on all 10,000 test images
(the page shows the sample's).

    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/mnist_picture.py

``--candidates "max_iter=25 learning_rate_schedule=cosine" ...`` adds a row per candidate
default (RunConfig fields, space-separated), fitted after the two above in the same run.
The table is kept in results/mnist_picture.json (``_results``). ``--quick`` fits one epoch
of each and keeps nothing.
"""

from __future__ import annotations

import argparse
import time

from _results import Table, key, machine

from nca_core import datasets
from nca_core.runs.run import Run, recommended_config
from nca_core.search.knn import knn_accuracy

FRAMES_PER_EPOCH = 59  # the Train page's: one per minibatch of 1024 (app_pages.engine.pacing)


def fit(data, **changes) -> dict:
    config = recommended_config(data).replace(**changes)
    run = Run(config, data)
    start = time.perf_counter()
    first = epoch_one = None
    for snap in run.stream(frames_per_epoch=FRAMES_PER_EPOCH):
        now = time.perf_counter() - start
        first = now if first is None else first
        if epoch_one is None and snap.epoch == 1 and snap.fraction >= 1.0:
            epoch_one = now
    total = time.perf_counter() - start
    accuracy = knn_accuracy(run.transform(data.X_train), data.y_train, run.transform(data.X_test), data.y_test, 5)
    return {
        "neighbours": config.neighbors if config.neighbors != "auto" else "auto",
        "epochs": config.max_iter,
        "start frame (s)": first,
        "epoch 1 (s)": epoch_one,
        "whole run (s)": total,
        "test 5-NN accuracy": accuracy,
    }


def _changes(text: str) -> dict:
    """``"max_iter=25 learning_rate=0.02"`` as RunConfig changes (numbers read as numbers)."""
    changes = {}
    for item in text.split():
        name, value = item.split("=", 1)
        try:
            changes[name] = int(value)
        except ValueError:
            try:
                changes[name] = float(value)
            except ValueError:
                changes[name] = value
    return changes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", nargs="*", default=[], help="other defaults to try, one row each")
    parser.add_argument("--quick", action="store_true", help="one epoch of each; kept nowhere")
    args = parser.parse_args()
    data = datasets.load("mnist", download=False)
    print(f"machine: {machine()}\n")
    short = {"max_iter": 1} if args.quick else {}
    formats = {"start frame (s)": "{:.2f}", "epoch 1 (s)": "{:.2f}", "whole run (s)": "{:.2f}", "test 5-NN accuracy": "{:.4f}"}
    table = Table("mnist_picture", key("cpu", "candidates" if args.candidates else None),
                  ["candidate", "neighbours", "epochs", *formats], formats=formats, keep=not args.quick)  # fmt: skip
    changes = [("exact neighbours", {"neighbors": "all", "max_iter": 15}), ("default", {})]
    changes += [(text, _changes(text)) for text in args.candidates]
    rows = [table.add(candidate=name, **fit(data, **{**change, **short})) for name, change in changes]
    exact, nearest = rows[:2]
    table.note(
        f"whole run, exact / nearest: {exact['whole run (s)'] / nearest['whole run (s)']:.2f}x; "
        f"accuracy, nearest - exact: {100 * (nearest['test 5-NN accuracy'] - exact['test 5-NN accuracy']):+.2f} points"
    )
    table.save()


if __name__ == "__main__":
    main()
