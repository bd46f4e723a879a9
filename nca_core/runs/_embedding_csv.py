"""The embedding file a run offers for download: every row of a dataset with its place,
split, label and coordinates, as CSV text (``Run.embedding_csv``)."""

from __future__ import annotations

import numpy as np

from ..datasets import Dataset


def embedding_csv(data: Dataset, Z: np.ndarray) -> bytes:
    """CSV text with a header, row, split, label, z1, ..., zd, of ``data``'s training rows
    and test rows with their coordinates ``Z``, of shape (n_train + n_test, d), the training
    rows first.

    ``row`` is ``Dataset.rows_train`` (or ``rows_test``), the rows in the file's order; where
    those are None, a row's position within its split, the training rows first.
    """
    n_train, n_test = len(data.y_train), len(data.y_test)
    if data.rows_train is None:
        rows = np.concatenate([np.arange(n_train), np.arange(n_test)])
        order = np.arange(n_train + n_test)
    else:
        rows = np.concatenate([data.rows_train, data.rows_test])
        order = np.argsort(rows, kind="stable")
    names = np.array([_csv_text(name) for name in data.classes], dtype=object)
    labels = names[np.concatenate([data.y_train, data.y_test])]
    split = np.repeat(np.array(["train", "test"], dtype=object), [n_train, n_test])
    header = ",".join(["row", "split", "label", *[f"z{i + 1}" for i in range(Z.shape[1])]])
    # numpy writes a float32 array as text in C, each value the shortest decimal that reads
    # back the same: no Python call per value, which for MNIST's 70,000 rows cost as much as the map
    columns = [
        rows[order].astype(str),
        split[order],
        labels[order],
        *Z[order].astype(np.float32).astype(str).T,
    ]
    return "\n".join([header, *map(",".join, zip(*columns)), ""]).encode()


def _csv_text(value: str) -> str:
    return '"' + value.replace('"', '""') + '"' if any(c in value for c in ',"\n') else value
