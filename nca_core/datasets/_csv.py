"""Turning a user's CSV file into a Dataset, with specific messages for what is wrong."""

from __future__ import annotations

import csv
import io
import os
import re
from typing import TYPE_CHECKING

import numpy as np

from ..util.formatting import byte_size
from ..util.sampling import stratified_subsample
from ._errors import DatasetError

if TYPE_CHECKING:
    from . import Dataset

__all__ = ["from_csv", "guess_label_column", "image_shape_for", "separator_of"]

MAX_ROWS = 200_000
MAX_COLUMNS = 5_000
MAX_BYTES = 200 * 1024 * 1024
# Every figure draws one trace per class in every frame, so its cost grows with the classes:
# the Train page's replay of 3,000 points over 100 frames took 1 s to build at 10 classes,
# 7 s at 100 and 64 s at 1,000 (2 cores), on every page run after training. A hundred
# classes keeps CIFAR-100-sized label sets while a file of one class per two rows (100,000
# classes in 200,000 rows) is refused before anything is drawn.
MAX_CLASSES = 100
_LABEL_NAMES = ("label", "class", "target", "y", "species")
# Column separators a CSV may use: spreadsheets in locales whose decimal mark is a comma
# export semicolons, and tab-separated files are common too.
SEPARATORS = (",", ";", "\t", "|")


def _line(row: int) -> int:
    """File line of 0-based data row ``row`` (line 1 is the header)."""
    return row + 2


def _read_bytes(file_or_bytes, max_bytes: int) -> bytes:
    if isinstance(file_or_bytes, (bytes, bytearray)):
        raw = bytes(file_or_bytes)
    elif isinstance(file_or_bytes, (str, os.PathLike)):
        size = os.path.getsize(file_or_bytes)
        if size > max_bytes:
            raise DatasetError(f"the file is {byte_size(size)}; the limit is {byte_size(max_bytes)}")
        with open(file_or_bytes, "rb") as handle:
            raw = handle.read()
    else:
        raw = file_or_bytes.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise DatasetError(f"the file is larger than the limit of {byte_size(max_bytes)}")
    if not raw.strip():
        raise DatasetError("the file is empty")
    if (problem := _not_text(raw)) is not None:
        raise DatasetError(problem)
    return raw


# File signatures of what people upload by mistake, in words.
_SIGNATURES = {
    b"\x89PNG": "a PNG image",
    b"\xff\xd8\xff": "a JPEG image",
    b"GIF8": "a GIF image",
    b"%PDF": "a PDF document",
    b"PK\x03\x04": "a ZIP archive (an .xlsx spreadsheet is one: save it as CSV first)",
    b"\xd0\xcf\x11\xe0": "an old Office document (save it as CSV first)",
    b"\x1f\x8b": "a gzip archive (unpack it first)",
}


def _not_text(raw: bytes, sniff: int = 65536) -> str | None:
    """Why ``raw`` cannot be a CSV file, in words, when it is plainly not UTF-8 text (judged
    on its first ``sniff`` bytes); else None."""
    for signature, what in _SIGNATURES.items():
        if raw.startswith(signature):
            return f"this is {what}, not a CSV text file"
    head = raw[:sniff]
    if b"\x00" in head:
        return "this is a binary file, not a CSV text file"
    try:
        head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the end of the head
            return (
                f"this file is not UTF-8 text (byte {exc.start + 1} cannot be read); save it "
                "as CSV UTF-8 from your spreadsheet"
            )
    return None


def guess_label_column(raw: bytes) -> tuple[list[str], int]:
    """The header's column names and the index of the likely label column.

    A column named label, class, target, y or species (any case) wins, else the last one:
    a form can offer the guess before the whole file is parsed. Raises DatasetError for an
    empty file, a binary or non-UTF-8 one, or a first line that names no columns, so no form
    is built without choices.
    """
    raw = _read_bytes(raw, MAX_BYTES)
    separator = separator_of(raw)
    _check_width(_header_width(raw, separator) - 1, MAX_COLUMNS)  # before a list of them is built
    names = next(csv.reader([_header(raw)], delimiter=separator, skipinitialspace=True), [])
    columns = [c.strip() for c in names if c.strip()]  # quoted as pandas reads them: "a,b" is one
    if not columns:
        raise DatasetError("the first line names no columns; it must be a header row such as label,x1,x2")
    guess = next((i for i, c in enumerate(columns) if c.lower() in _LABEL_NAMES), len(columns) - 1)
    return columns, guess


def _header(raw: bytes) -> str:
    """The first line, as text (utf-8-sig: spreadsheet exports start with a byte-order mark,
    which pandas drops too)."""
    return raw.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace").strip()


def _header_width(raw: bytes, separator: str) -> int:
    """How many columns the header row names: its separators outside double quotes, plus one."""
    return re.sub(r'"[^"]*"', "", _header(raw)).count(separator) + 1


def _check_width(n_features: int, max_columns: int) -> None:
    if n_features > max_columns:
        raise DatasetError(f"the file has {n_features:,} feature columns; the limit is {max_columns:,}")


def separator_of(raw: bytes) -> str:
    """The column separator of a CSV: of ``SEPARATORS``, the one its header row holds most
    of; a comma where the header holds none of them (a file of one column)."""
    header = _header(raw)
    best = max(SEPARATORS, key=header.count)  # the first of equals: a comma before the others
    return best if header.count(best) else ","


def image_shape_for(n_pixels: int) -> tuple[int, int]:
    """The most nearly square (height, width) that holds ``n_pixels`` pixels, the height no
    larger than the width: 784 -> (28, 28), 64 -> (8, 8), 60 -> (6, 10); a guess a form can
    offer for images stored a row of pixels per line."""
    height = max(h for h in range(1, int(n_pixels**0.5) + 1) if n_pixels % h == 0)
    return height, n_pixels // height


def from_csv(
    file_or_bytes,
    label_column: str,
    *,
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

    Every column but the label column must be numeric and finite. Constant columns are
    dropped (and said so in ``notes``) unless ``image_shape`` is given.

    Parameters
    ----------
    file_or_bytes : path, bytes or binary file object
    label_column : str
        Name of the column holding the class labels (text or numbers).
    image_shape : (height, width), optional
        For image data: the feature columns are the pixels, row by row.
    name : str
        The Dataset's name.
    test_fraction : float
        Share of each class held out for testing.
    seed : int
        Seeds the stratified split.
    max_rows, max_columns, max_bytes, max_classes : int
        Limits; larger files are refused with a message. The header's width is checked
        before the file is parsed, and no more than ``max_rows + 1`` rows are parsed.

    Raises
    ------
    DatasetError
        Naming the first offending row or column.
    """
    from . import Dataset

    frame = _read_table(_read_bytes(file_or_bytes, max_bytes), label_column, max_rows, max_columns)
    labels = frame.pop(label_column).str.strip().to_numpy()
    empty = np.flatnonzero(labels == "")
    if len(empty):
        raise DatasetError(f"label column {label_column!r} is empty on line {_line(empty[0])}")
    columns = list(frame.columns)
    texts = dict(frame.items())
    del frame  # each column's text is let go as it is converted (``_numeric_features``)
    X = _numeric_features(texts)
    classes, y = _encode_classes(labels, label_column, max_classes)
    notes = []
    X, image_shape, names = _usable_features(X, columns, image_shape, notes)
    is_test = _test_mask(y, test_fraction, seed, notes)
    return Dataset(
        name,
        X[~is_test],
        y[~is_test],
        X[is_test],
        y[is_test],
        tuple(str(c) for c in classes),
        image_shape,
        f"Uploaded CSV: {len(y):,} rows, {X.shape[1]} features, {len(classes)} classes.",
        "",
        tuple(notes),
        feature_names=names,
    )


def _read_table(raw: bytes, label_column: str, max_rows: int, max_columns: int):
    """The CSV as a DataFrame of stripped strings, checked for the label column and size."""
    import pandas as pd

    separator = separator_of(raw)
    _check_width(_header_width(raw, separator) - 1, max_columns)
    try:  # one row past the limit says the file is too long: the rest is never parsed
        frame = pd.read_csv(
            io.BytesIO(raw), sep=separator, dtype=str, keep_default_na=False, skipinitialspace=True,
            nrows=max_rows + 1,
        )  # fmt: skip
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise DatasetError(f"the file is not a readable CSV: {str(exc).strip()}") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    twice = frame.columns[frame.columns.duplicated()]
    if len(twice):  # names that differed only by spaces: neither could be told apart
        raise DatasetError(f"the header names column {twice[0]!r} twice")
    if label_column not in frame.columns:
        shown = ", ".join(repr(c) for c in list(frame.columns)[:20])
        raise DatasetError(f"there is no column named {label_column!r}; the columns are {shown}")
    if len(frame) > max_rows:  # counted by its lines: the rows past the limit were not parsed
        rows = max(len(frame), raw.rstrip(b"\r\n").count(b"\n"))
        raise DatasetError(f"the file has {rows:,} rows; the limit is {max_rows:,}")
    _check_width(frame.shape[1] - 1, max_columns)
    if frame.shape[1] < 2:
        raise DatasetError("the file has no feature column besides the labels")
    if len(frame) == 0:
        raise DatasetError("the file has a header but no data rows")
    return frame


def _encode_classes(labels: np.ndarray, label_column: str, max_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Class names (numbers in numeric order, else text order) and each row's class index,
    refusing a single class, more than ``max_classes`` or a class with one sample."""
    classes, y = np.unique(labels, return_inverse=True)
    if len(classes) > max_classes:
        raise DatasetError(
            f"label column {label_column!r} has {len(classes):,} classes; the limit is {max_classes:,}"
        )
    if _all_numbers(classes):
        order = np.argsort(classes.astype(np.float64), kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        classes, y = classes[order], rank[y]
    if len(classes) < 2:
        raise DatasetError(
            f"label column {label_column!r} has only one class ({classes[0]!r}); NCA needs at least 2"
        )
    counts = np.bincount(y)
    if counts.min() < 2:
        lonely = classes[np.argmin(counts)]
        raise DatasetError(f"class {lonely!r} has only 1 sample; every class needs at least 2")
    return classes, y


def _usable_features(X, columns, image_shape, notes) -> tuple[np.ndarray, tuple[int, int] | None, tuple]:
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
        raise DatasetError(
            f"the file has {left} besides the labels; NCA needs at least two to map to a picture"
        )
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


def _numeric_features(texts: dict) -> np.ndarray:
    """Convert every column of text (name -> Series, in order) to float32, naming the first
    cell that is not a finite number.

    Each column leaves ``texts`` as it is converted, and its numbers go straight into the
    float32 array: the parse never holds every cell as text and as a float64 at once (a
    file of two-digit cells took 11 times its size to parse when it did, 8 times since:
    benchmarks/upload_memory.py --short-cells).
    """
    import pandas as pd

    X = np.empty((len(next(iter(texts.values()))), len(texts)), dtype=np.float32)
    too_large = False
    for j, column in enumerate(list(texts)):
        text = texts.pop(column).str.strip()
        values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(values) & ~text.str.lower().isin(["nan"]).to_numpy())
        if len(bad):
            cell = text.iloc[bad[0]]
            what = "is empty" if cell == "" else f"holds {cell[:40]!r}, which is not a number"
            raise DatasetError(f"column {column!r} {what} on line {_line(bad[0])}")
        nonfinite = np.flatnonzero(~np.isfinite(values))
        if len(nonfinite):
            raise DatasetError(
                f"column {column!r} holds {text.iloc[nonfinite[0]]!r} on line "
                f"{_line(nonfinite[0])}; values must be finite numbers"
            )
        if np.abs(values).max() > np.finfo(np.float32).max:
            too_large = True  # said once every column is known to hold numbers
            continue
        X[:, j] = values
    if too_large:
        raise DatasetError("a value is too large to represent as a 32-bit float")
    return X


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
