"""Reading a user's CSV file into a table of text cells, with specific messages for what
is not a CSV file at all; and what a cell holds (a number, a missing value, text)."""

from __future__ import annotations

import csv
import io
import os
import re

import numpy as np

from ..util.formatting import byte_size
from ._errors import DatasetError

MAX_ROWS = 200_000
MAX_COLUMNS = 5_000
MAX_BYTES = 200 * 1024 * 1024
# Every figure draws one trace per class in every frame, so its cost grows with the classes:
# the Train page's replay of 3,000 points over 100 frames took 1 s to build at 10 classes,
# 7 s at 100 and 64 s at 1,000 (2 cores), on every page run after training. A hundred
# classes keeps CIFAR-100-sized label sets while a file of one class per two rows (100,000
# classes in 200,000 rows) is refused before anything is drawn.
MAX_CLASSES = 100
# Column separators a CSV may use: spreadsheets in locales whose decimal mark is a comma
# export semicolons, and tab-separated files are common too.
SEPARATORS = (",", ";", "\t", "|")
# Cells that stand for a missing value (compared stripped and in lower case): an empty cell
# and what spreadsheets, R and pandas write for one. A row with one is left out, not refused.
MISSING = ("", "na", "n/a", "#n/a", "nan", "null", "none", "?")
MISSING_IN_WORDS = "empty, NA, N/A, NaN, null, None or ?"


def line_of(row: int) -> int:
    """File line of 0-based data row ``row`` (line 1 is the header)."""
    return row + 2


def read_bytes(file_or_bytes, max_bytes: int) -> bytes:
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


def _header(raw: bytes) -> str:
    """The first line, as text (utf-8-sig: spreadsheet exports start with a byte-order mark,
    which pandas drops too)."""
    return raw.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace").strip()


def _header_width(raw: bytes, separator: str) -> int:
    """How many columns the header row names: its separators outside double quotes, plus one."""
    return re.sub(r'"[^"]*"', "", _header(raw)).count(separator) + 1


def check_width(n_features: int, max_columns: int) -> None:
    if n_features > max_columns:
        raise DatasetError(f"the file has {n_features:,} feature columns; the limit is {max_columns:,}")


def separator_of(raw: bytes) -> str:
    """The column separator of a CSV: of ``SEPARATORS``, the one its header row holds most
    of; a comma where the header holds none of them (a file of one column)."""
    header = _header(raw)
    best = max(SEPARATORS, key=header.count)  # the first of equals: a comma before the others
    return best if header.count(best) else ","


def read_csv_table(
    file_or_bytes, *, max_rows: int = MAX_ROWS, max_columns: int = MAX_COLUMNS, max_bytes: int = MAX_BYTES
):
    """A CSV file with a header row as a table of its cells' text, read once, for
    ``guess_label_column``, ``columns_to_leave_out`` and ``from_csv`` to share.

    Parameters
    ----------
    file_or_bytes : path, bytes or binary file object
    max_rows, max_columns, max_bytes : int
        Limits; larger files are refused with a message. The header's width is checked
        before the file is parsed, and no more than ``max_rows + 1`` rows are parsed.

    Returns
    -------
    table : pandas.DataFrame of shape (n_rows, n_columns)
        Every cell as text, spaces around it stripped; row i is the file's data row i
        (0-based, the header excluded), on line i + 2.

    Raises
    ------
    DatasetError
        For an empty, binary or non-UTF-8 file, a header that names no columns or one
        column twice, a file with no data rows, or one over a limit.
    """
    import pandas as pd

    raw = read_bytes(file_or_bytes, max_bytes)
    separator = separator_of(raw)
    check_width(_header_width(raw, separator) - 1, max_columns)
    names = next(csv.reader([_header(raw)], delimiter=separator, skipinitialspace=True), [])
    if not any(name.strip() for name in names):
        raise DatasetError("the first line names no columns; it must be a header row such as label,x1,x2")
    try:  # one row past the limit says the file is too long: the rest is never parsed
        table = pd.read_csv(
            io.BytesIO(raw), sep=separator, dtype=str, keep_default_na=False, skipinitialspace=True,
            nrows=max_rows + 1,
        )  # fmt: skip
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise DatasetError(f"the file is not a readable CSV: {str(exc).strip()}") from None
    table.columns = [str(c).strip() for c in table.columns]
    twice = table.columns[table.columns.duplicated()]
    if len(twice):  # names that differed only by spaces: neither could be told apart
        raise DatasetError(f"the header names column {twice[0]!r} twice")
    if len(table) > max_rows:  # counted by its lines: the rows past the limit were not parsed
        rows = max(len(table), raw.rstrip(b"\r\n").count(b"\n"))
        raise DatasetError(f"the file has {rows:,} rows; the limit is {max_rows:,}")
    check_width(table.shape[1] - 1, max_columns)
    if len(table) == 0:
        raise DatasetError("the file has a header but no data rows")
    for column in table.columns:  # in place, a column at a time: never two copies of every cell
        table[column] = table[column].str.strip()
    return table


def is_missing(cells) -> np.ndarray:
    """Which cells (a Series of text) stand for a missing value (``MISSING``), as booleans."""
    return cells.str.lower().isin(MISSING).to_numpy()


def numbers_of(cells) -> np.ndarray:
    """The cells (a Series of text) as float64 numbers: NaN where a cell is no number."""
    import pandas as pd

    return pd.to_numeric(cells, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
