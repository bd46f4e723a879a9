"""Turning a user's CSV file into a Dataset, with specific messages for what is wrong.

Reading the file into a table of text is ``_csv_read``'s; guessing the label column and the
columns to leave out is ``_csv_columns``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..util.sampling import stratified_subsample
from ._csv_read import (
    MAX_BYTES,
    MAX_CLASSES,
    MAX_COLUMNS,
    MAX_ROWS,
    MISSING_IN_WORDS,
    check_width,
    is_missing,
    line_of,
    numbers_of,
    read_csv_table,
)
from ._errors import DatasetError

if TYPE_CHECKING:
    from . import Dataset

__all__ = ["from_csv", "image_shape_for"]


def image_shape_for(n_pixels: int) -> tuple[int, int]:
    """The most nearly square (height, width) that holds ``n_pixels`` pixels, the height no
    larger than the width: 784 -> (28, 28), 64 -> (8, 8), 60 -> (6, 10); a guess a form can
    offer for images stored a row of pixels per line."""
    height = max(h for h in range(1, int(n_pixels**0.5) + 1) if n_pixels % h == 0)
    return height, n_pixels // height


def from_csv(
    file_or_table,
    label_column: str,
    *,
    drop_columns: Sequence[str] = (),
    image_shape: tuple[int, int] | None = None,
    name: str = "uploaded",
    test_fraction: float = 0.3,
    seed: int = 0,
    max_rows: int = MAX_ROWS,
    max_columns: int = MAX_COLUMNS,
    max_bytes: int = MAX_BYTES,
    max_classes: int = MAX_CLASSES,
) -> Dataset:
    """Read a CSV with a header row into a Dataset with a stratified train/test split.

    Every column but the label column and ``drop_columns`` is a feature and must hold
    numbers. A row with a missing cell (empty, NA, N/A, NaN, null, None or ?, any case) in
    a feature or the label is left out, and ``notes`` counts them with their lines; the file
    is refused only when the rows left do not make a dataset (two classes, two rows each).
    A cell of other text in a feature, or an infinite number, refuses the file with its
    line. Constant columns are dropped (and said so in ``notes``) unless ``image_shape`` is
    given. Each row's place in the file is kept (``Dataset.rows_train``, ``rows_test``).

    Parameters
    ----------
    file_or_table : path, bytes, binary file object, or a table from ``read_csv_table``
    label_column : str
        Name of the column holding the class labels (text or numbers).
    drop_columns : sequence of str
        Columns to leave out of the features (identifiers, say: ``columns_to_leave_out``).
    image_shape : (height, width), optional
        For image data: the feature columns are the pixels, row by row.
    name : str
        The Dataset's name.
    test_fraction, seed : float, int
        Share of each class held out for testing, and the seed of that stratified split.
    max_rows, max_columns, max_bytes, max_classes : int
        Limits; larger files are refused with a message (see ``read_csv_table``).

    Raises
    ------
    DatasetError
        Naming the first offending row or column.
    """
    from . import Dataset

    table = _table_of(file_or_table, max_rows, max_columns, max_bytes)
    features = _feature_columns(table, label_column, drop_columns)
    texts, labels = {column: table[column] for column in features}, table[label_column]
    del table  # a table read here: each column's text is let go as it is converted
    X, labels, rows, notes, context = _complete_rows(texts, labels, label_column)
    classes, y = _encode_classes(labels, label_column, max_classes, context)
    X, image_shape, names = _usable_features(X, features, image_shape, notes, bool(len(drop_columns)))
    test = _test_mask(y, test_fraction, seed, notes)
    return Dataset(
        name, X[~test], y[~test], X[test], y[test], tuple(str(c) for c in classes), image_shape,
        f"Uploaded CSV: {len(y):,} rows, {X.shape[1]} features, {len(classes)} classes.", "", tuple(notes),
        feature_names=names, rows_train=rows[~test], rows_test=rows[test],
    )  # fmt: skip


def _table_of(file_or_table, max_rows: int, max_columns: int, max_bytes: int):
    """The table of text cells: ``file_or_table`` itself when ``read_csv_table`` read it,
    checked against the limits; else the file, read."""
    import pandas as pd

    if not isinstance(file_or_table, pd.DataFrame):
        return read_csv_table(file_or_table, max_rows=max_rows, max_columns=max_columns, max_bytes=max_bytes)
    table = file_or_table
    if not all(pd.api.types.is_string_dtype(dtype) for dtype in table.dtypes):
        raise TypeError("from_csv takes a table of text cells, as read_csv_table reads it")
    if len(table) > max_rows:
        raise DatasetError(f"the file has {len(table):,} rows; the limit is {max_rows:,}")
    check_width(table.shape[1] - 1, max_columns)
    if len(table) == 0:
        raise DatasetError("the file has a header but no data rows")
    return table


def _feature_columns(table, label_column: str, drop_columns: Sequence[str]) -> list[str]:
    """The names of the feature columns: all but the label and ``drop_columns``, which must
    name columns of the table other than the label."""
    if isinstance(drop_columns, str):
        raise TypeError(f"drop_columns takes a list of column names, not the string {drop_columns!r}")
    columns = [str(c) for c in table.columns]
    shown = ", ".join(repr(c) for c in columns[:20]) + (", ..." if len(columns) > 20 else "")
    if label_column not in columns:
        raise DatasetError(f"there is no column named {label_column!r}; the columns are {shown}")
    unknown = [c for c in dict.fromkeys(drop_columns) if c not in columns]
    if unknown:
        names = ", ".join(repr(c) for c in unknown)
        raise DatasetError(f"there is no column named {names} to leave out; the columns are {shown}")
    if label_column in drop_columns:
        raise DatasetError(f"the label column {label_column!r} cannot be left out")
    left_out = set(drop_columns)
    features = [c for c in columns if c != label_column and c not in left_out]
    if not features:
        if left_out:
            raise DatasetError("every feature column is left out; NCA needs at least two to map to a picture")
        raise DatasetError("the file has no feature column besides the labels")
    return features


def _complete_rows(
    texts: dict, labels, label_column: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str], str]:
    """The features (``texts``: name -> Series of text, emptied as converted) and labels (a
    Series of text) of the rows with no missing cell, the file's data row of each, notes
    on the rows left out, and the words that explain a refusal of what is left."""
    X, missing, counts = _numeric_features(texts)
    unlabelled = is_missing(labels)
    if unlabelled.any():
        missing |= unlabelled
        counts[label_column] = int(unlabelled.sum())
    labels = labels.to_numpy(dtype=object)
    if not missing.any():
        return X, labels, np.arange(len(labels)), [], ""
    notes = []
    context = _dropped(missing, counts, notes)
    rows = np.flatnonzero(~missing)
    return X[rows], labels[rows], rows, notes, context


def _dropped(missing: np.ndarray, counts: dict[str, int], notes: list[str]) -> str:
    """Says in ``notes`` which rows are left out for a missing cell (``missing``: a flag per
    row; ``counts``: missing cells per column), and returns the words that explain a refusal
    of what is left; refuses a file where no row is left."""
    where = ", ".join(f"{n:,} in {c!r}" for c, n in sorted(counts.items(), key=lambda item: -item[1])[:5])
    where += ", ..." if len(counts) > 5 else ""
    n = int(missing.sum())
    if n == len(missing):
        raise DatasetError(
            f"every row has a missing value ({MISSING_IN_WORDS}); missing cells: {where}. "
            "Leave out the columns that are mostly empty"
        )
    lines = [line_of(int(row)) for row in np.flatnonzero(missing)[:10]]
    shown = ", ".join(str(line) for line in lines) + (f" and {n - 10:,} more" if n > 10 else "")
    rows = "row" if n == 1 else "rows"
    notes.append(
        f"dropped {n:,} {rows} with missing values ({'line' if n == 1 else 'lines'} {shown}); missing cells: {where}"
    )
    return f"after dropping {n:,} {rows} with missing values, "


def _encode_classes(
    labels: np.ndarray, label_column: str, max_classes: int, context: str = ""
) -> tuple[np.ndarray, np.ndarray]:
    """Class names (numbers in numeric order, else text order) and each row's class index,
    refusing a single class, more than ``max_classes`` or a class with one sample; a
    refusal starts with ``context``."""
    classes, y = np.unique(labels, return_inverse=True)
    if len(classes) > max_classes:
        raise DatasetError(
            f"{context}label column {label_column!r} has {len(classes):,} classes; the limit is {max_classes:,}"
        )
    if _all_numbers(classes):
        order = np.argsort(classes.astype(np.float64), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        classes, y = classes[order], rank[y]
    if len(classes) < 2:
        raise DatasetError(
            f"{context}label column {label_column!r} has only one class ({str(classes[0])!r}); NCA needs at least 2"
        )
    counts = np.bincount(y)
    if counts.min() < 2:
        lonely = str(classes[np.argmin(counts)])
        raise DatasetError(f"{context}class {lonely!r} has only 1 sample; every class needs at least 2")
    return classes, y


def _usable_features(
    X, columns, image_shape, notes, left_out: bool
) -> tuple[np.ndarray, tuple[int, int] | None, tuple]:
    """Pixels checked against ``image_shape``, or tabular features without constant
    columns; either way at least two of them, as a map to 2-D needs. Also the names of the
    columns kept."""
    kept = columns
    if image_shape is not None:
        image_shape = _checked_image_shape(image_shape, X.shape[1])
    else:
        X, kept = _drop_constant_columns(X, columns, notes)
    if X.shape[1] < 2:
        left = "one feature column" if len(columns) == 1 else "one feature column that is not constant"
        besides = "besides the labels and the columns left out" if left_out else "besides the labels"
        raise DatasetError(f"the file has {left} {besides}; NCA needs at least two to map to a picture")
    return X, image_shape, tuple(kept)


def _checked_image_shape(image_shape: tuple[int, int], n_features: int) -> tuple[int, int]:
    h, w = (int(v) for v in image_shape)
    if h < 1 or w < 1 or h * w != n_features:
        raise DatasetError(
            f"image width x height = {w} x {h} = {w * h} pixels, but the file has "
            f"{n_features} feature columns"
        )
    return h, w


def _drop_constant_columns(
    X: np.ndarray, columns: list[str], notes: list[str]
) -> tuple[np.ndarray, list[str]]:
    """X without its constant columns, which carry nothing to learn, and the names of the
    columns kept; appends a note naming the dropped ones."""
    constant = np.flatnonzero(np.ptp(X, axis=0) == 0)
    if len(constant) == X.shape[1]:
        raise DatasetError("every feature column is constant: there is nothing to learn from")
    if len(constant):
        dropped_at = set(constant.tolist())
        dropped = [columns[i] for i in constant]
        shown = ", ".join(repr(c) for c in dropped[:10]) + (" ..." if len(dropped) > 10 else "")
        notes.append(f"dropped {len(dropped)} constant column(s): {shown}")
        X = np.delete(X, constant, axis=1)
        columns = [c for i, c in enumerate(columns) if i not in dropped_at]
    return X, columns


def _test_mask(y: np.ndarray, test_fraction: float, seed: int, notes: list[str]) -> np.ndarray:
    """Which rows are held out for testing; appends a note when there are too few to hold any."""
    test = _test_rows(y, test_fraction, seed)
    if len(test) == 0:
        notes.append("too few rows for a test split: everything is used for training")
    is_test = np.zeros(len(y), dtype=bool)
    is_test[test] = True
    return is_test


def _numeric_features(texts: dict) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """Convert every column of text (name -> Series, in order) to float32, NaN where a cell
    is missing; also a flag per row for a missing cell, and the missing cells per column.
    Names the first cell that is neither a finite number nor missing.

    Each column leaves ``texts`` as it is converted, and its numbers go straight into the
    float32 array: the parse never holds every cell as text and as a float64 at once (a
    file of two-digit cells took 11 times its size to parse when it did, 8 times since:
    benchmarks/upload_memory.py --short-cells).
    """
    n_rows = len(next(iter(texts.values())))
    X = np.empty((n_rows, len(texts)), dtype=np.float32)
    missing = np.zeros(n_rows, dtype=bool)
    counts = {}
    too_large = False
    for j, column in enumerate(list(texts)):
        text = texts.pop(column)
        values = numbers_of(text)
        gaps = np.flatnonzero(np.isnan(values))
        if len(gaps):
            blank = is_missing(text.iloc[gaps])
            if not blank.all():
                bad = gaps[np.argmin(blank)]
                raise DatasetError(
                    f"column {column!r} holds {text.iloc[bad][:40]!r}, which is not a number on line {line_of(bad)}"
                )
            missing[gaps] = True
            counts[column] = len(gaps)
        nonfinite = np.flatnonzero(np.isinf(values))
        if len(nonfinite):
            raise DatasetError(
                f"column {column!r} holds {text.iloc[nonfinite[0]]!r} on line "
                f"{line_of(nonfinite[0])}; values must be finite numbers"
            )
        if np.abs(values).max() > np.finfo(np.float32).max:  # NaN compares false
            too_large = True  # said once every column is known to hold numbers
            continue
        X[:, j] = values
    if too_large:
        raise DatasetError("a value is too large to represent as a 32-bit float")
    return X, missing, counts


def _all_numbers(values) -> bool:
    try:
        values.astype(np.float64)
    except ValueError:
        return False
    return True


def _test_rows(y: np.ndarray, test_fraction: float, seed: int) -> np.ndarray:
    """A stratified test split that leaves every class at least one training row."""
    n_test = int(round(test_fraction * len(y)))
    n_classes = int(y.max()) + 1
    if n_test < n_classes or len(y) - n_test < n_classes:
        return np.empty(0, dtype=np.int64)
    test = stratified_subsample(y, n_test, seed)
    left = np.bincount(np.delete(y, test), minlength=n_classes)
    return test if left.min() >= 1 else np.empty(0, dtype=np.int64)
