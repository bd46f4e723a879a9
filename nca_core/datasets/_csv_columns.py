"""What a form can guess about the columns of a CSV table (``read_csv_table``): which one
holds the class labels, and which ones are no measurements (identifiers, text, empty
columns) and are better left out of the features. Pure functions of the table."""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from ._csv_read import MAX_CLASSES, is_missing, numbers_of

__all__ = ["LabelGuess", "columns_to_leave_out", "guess_label_column"]

# Names (whole, once lower-cased with separators as "_") that usually hold class labels
_LABEL_NAMES = frozenset(
    {"label", "labels", "class", "classes", "target", "y", "species", "digit", "diagnosis", "quality",
     "outcome", "category", "variety", "genre", "type", "cls"}
)  # fmt: skip
# ... and words that make a name label-like at either end of it: "class label", "target_class"
_LABEL_WORDS = frozenset({"label", "class", "target", "category"})
# Names of identifiers, whole, and words that end one: "id", "sample_id", "PatientID", "uuid"
_ID_NAMES = frozenset(
    {"id", "idx", "index", "row", "rownum", "row_number", "sample", "record", "no", "uuid", "guid"}
)
_ID_WORDS = frozenset({"id", "idx", "uuid", "guid", "index"})
# Rows read to tell a column of text from one of numbers: text shows in its first rows too
_SAMPLE_ROWS = 200
# Fewer rows than this say too little for a column's content to mark it an identifier
_MIN_ROWS_FOR_CONTENT = 10


class LabelGuess(NamedTuple):
    """The likely label column of a table, and why, as a clause: "its name is ..."."""

    column: str
    reason: str


def _words(name: str) -> list[str]:
    """A column name's words in lower case: "sampleId" and "Sample ID" give sample, id."""
    split = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name.strip())
    return [w for w in re.split(r"[^a-z0-9]+", split.lower()) if w]


def _label_like(name: str) -> bool:
    words = _words(name)
    return bool(words) and ("_".join(words) in _LABEL_NAMES or bool(_LABEL_WORDS & {words[0], words[-1]}))


def _id_like(name: str) -> bool:
    words = _words(name)
    return bool(words) and ("_".join(words) in _ID_NAMES or words[-1] in _ID_WORDS or words[0] == "id")


def _kind(cells) -> str:
    """What the column's first rows hold: "empty", "text", "integer" or "number", judged on
    the cells that are not missing (text: more than half of them are no numbers)."""
    head = cells.iloc[:_SAMPLE_ROWS]
    present = head[~is_missing(head)]
    if len(present) == 0:
        return "empty" if is_missing(cells).all() else "number"
    values = numbers_of(present)
    if np.isnan(values).mean() > 0.5:
        return "text"
    values = values[np.isfinite(values)]
    return "integer" if np.array_equal(values, np.round(values)) else "number"


def _class_count(cells, kind: str, max_classes: int) -> int | None:
    """The number of distinct values of a column that could hold class labels: at least 2,
    at most ``max_classes`` and max(20, a tenth of the rows), and at most half its rows (two
    rows a class on average); whole numbers throughout where its first rows hold them. Else None."""
    present = cells[~is_missing(cells)]
    if kind == "integer":
        values = numbers_of(present)
        if not np.all(np.isfinite(values)) or not np.array_equal(values, np.round(values)):
            return None
    n, count = len(present), int(present.nunique())
    return count if 2 <= count <= min(max_classes, max(20, n // 10)) and 2 * count <= n else None


def guess_label_column(table, max_classes: int = MAX_CLASSES) -> LabelGuess:
    """The column of ``table`` (as ``read_csv_table`` reads it) most likely to hold the class
    labels, with the reason, for a form to offer first.

    In order: a column with a label-like name (label, class, target, y, species, digit,
    diagnosis, quality, outcome, category, ..., "class label", "target_class") that holds
    few distinct values; a column of text with few distinct values (features are numbers, so
    text among them is the labels' mark), at an end of the table where there is a choice;
    the first or the last column where it holds few distinct whole numbers, the one with
    fewer of them (the last on a tie); else the last column. "Few" is at least 2 distinct
    values, at most ``max_classes`` and max(20, a tenth of the rows), and two rows a value
    on average: pixels of 0 to 16 pass too, which is why a name comes first.
    """
    columns = [str(c) for c in table.columns]
    kinds = {c: _kind(table[c]) for c in columns}
    counts = {}  # column -> its number of distinct values, where it could hold labels
    for column in columns:
        if _label_like(column) or kinds[column] == "text" or column in (columns[0], columns[-1]):
            if count := _class_count(table[column], kinds[column], max_classes):
                counts[column] = count
    guess = (
        _by_name(counts) or _by_text(columns, kinds, counts) or _by_ends(columns, kinds, counts, len(table))
    )
    return guess or LabelGuess(columns[-1], _NO_HINT)


_NO_HINT = "no column has a label-like name, text or few distinct whole numbers at an end, so the last one is offered"


def _by_name(counts: dict[str, int]) -> LabelGuess | None:
    column = next((c for c in counts if _label_like(c)), None)
    if column is None:
        return None
    return LabelGuess(
        column, f"its name is a usual name for class labels, and it holds {counts[column]} distinct values"
    )


def _by_text(columns: list[str], kinds: dict[str, str], counts: dict[str, int]) -> LabelGuess | None:
    """A column of text that could hold labels: the one at an end of the table, if any."""
    texts = [c for c in columns if kinds[c] == "text"]
    labelled = [c for c in texts if c in counts]
    if not labelled:
        return None
    column = ([c for c in labelled if c in (columns[0], columns[-1])] or labelled)[-1]
    if len(texts) == 1:
        return LabelGuess(
            column,
            f"it is the only column of text among columns of numbers, with {counts[column]} distinct values",
        )
    return LabelGuess(
        column, f"it holds text with few distinct values ({counts[column]}), as class labels do"
    )


def _by_ends(
    columns: list[str], kinds: dict[str, str], counts: dict[str, int], n_rows: int
) -> LabelGuess | None:
    """The first or the last column, where it holds few distinct whole numbers: the one with
    fewer of them, the last on a tie."""
    ends = [c for c in dict.fromkeys([columns[-1], columns[0]]) if kinds[c] == "integer" and c in counts]
    if not ends:
        return None
    column = min(ends, key=counts.get)  # the last column first: it wins a tie
    where = "last" if column == columns[-1] else "first"
    other = "".join(
        f"; the {'first' if where == 'last' else 'last'} column holds {counts[c]}"
        for c in ends
        if c != column
    )
    return LabelGuess(
        column,
        f"it is the {where} column and holds few distinct whole numbers ({counts[column]} in {n_rows:,} rows{other}), "
        "as class labels do",
    )


def columns_to_leave_out(table, label_column: str) -> dict[str, str]:
    """The columns of ``table`` besides ``label_column`` that are better left out of the
    features, each with the reason in a few words.

    An identifier says nothing about a row's class, yet a file sorted by class numbers its
    rows in class order, and a map then separates the classes by their row number alone.
    Identifiers are columns named like one (id, sample_id, PatientID, index, row, sample,
    uuid, ...), and, in a table of at least 10 rows, whole numbers that differ on every row
    and count up or down the rows or fill a range (row numbers, shuffled or not), and text
    that differs on every row. Other columns of text cannot be features, nor can columns
    with no value at all (a trailing separator on every line makes one).
    """
    reasons = {}
    for column in (str(c) for c in table.columns):
        if column == label_column:
            continue
        cells = table[column]
        kind = _kind(cells)
        if _id_like(column):
            reasons[column] = "named like an identifier"
        elif kind == "empty":
            reasons[column] = "empty on every row"
        elif kind == "text":
            unique = len(table) >= _MIN_ROWS_FOR_CONTENT and cells.nunique() == len(cells)
            reasons[column] = "a different text on every row, like an identifier" if unique else _TEXT
        elif kind == "integer" and len(table) >= _MIN_ROWS_FOR_CONTENT and (numbering := _numbering(cells)):
            reasons[column] = numbering
    return reasons


_TEXT = "text, not numbers"


def _numbering(cells) -> str | None:
    """Words for a column of whole numbers that numbers the rows (see
    ``columns_to_leave_out``), else None."""
    head = numbers_of(cells.iloc[:_SAMPLE_ROWS])
    if len(np.unique(head)) < len(head):  # a repeat in the first rows: quick to rule out
        return None
    values = numbers_of(cells)
    if not np.all(np.isfinite(values)) or not np.array_equal(values, np.round(values)):
        return None
    steps = np.diff(values)
    if np.all(steps > 0) or np.all(steps < 0):
        return f"counts {'up' if steps[0] > 0 else 'down'} row by row, like a row number"
    if len(np.unique(values)) == len(values) and values.max() - values.min() == len(values) - 1:
        return "a different whole number on every row, like a shuffled row number"
    return None
