"""The kNN page's table: its rows, columns and words, before and after the searches.

No torch here: the page draws the table with the flat indexes' sizes while the search
engine is still loading (seconds on a fresh server), then fills it as ``speed`` measures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from nca_core.datasets import Dataset
from nca_core.search.costs import INDEX_LABELS, SearchCost, cost_table, faster, smaller
from nca_core.util.formatting import byte_size
from nca_core.util.sampling import stratified_subsample

KINDS = tuple(INDEX_LABELS)  # "exact", then "hnsw": the table's order within a space
# The queries: the test points, or a stratified sample of this many where there are more,
# so that a first visit to a machine measures MNIST sooner. From a few thousand queries
# on, a flat search's time grows in proportion to them and the ratios are a full test
# set's (measured in commit 1e2af68).
QUERIES = 5000
TOO_QUICK_SECONDS = 0.05  # all queries answered faster than this, either way: timer noise
COLUMNS_ORDER = (
    "space", "index", "query time (s)", "build time (s)", "index size", "test error",
    "speed-up", "size reduction",
)  # fmt: skip
_QUERIES_HELP = f"every test point, or a stratified {QUERIES:,} of a larger test set"
# Widths in pixels that show every column whole on a 1024-pixel screen beside the sidebar.
COLUMNS = {  # times, sizes and errors stay numbers (sorting), ``_FORMATS`` says how they read; ratios are words
    "space": st.column_config.Column(width=85),
    "index": st.column_config.Column(width=95),
    "index size": st.column_config.Column(
        width=80, help="What the index stores: float32 vectors, plus the graph for HNSW"
    ),
    "test error": st.column_config.Column(width=75, help=f"k-NN error on the queries ({_QUERIES_HELP})"),
    "speed-up": st.column_config.Column(
        "speed", width=100,
        help=f"Against raw exact search (— where both take under {TOO_QUICK_SECONDS * 1e3:.0f} ms: timer noise)",
    ),
    "size reduction": st.column_config.Column("size", width=100, help="Against raw exact search's index"),
    "query time (s)": st.column_config.Column(
        "query (s)", width=70, help=f"All queries ({_QUERIES_HELP}), median of the repeats"
    ),
    "build time (s)": st.column_config.Column("build (s)", width=65),
}  # fmt: skip
MISSING = "—"  # a row not measured yet
# The headline's three figures (``speed.show_summary``), in order; the error's has a change below it
SPEED_HEADLINE, SIZE_HEADLINE, ERROR_HEADLINE = (
    "Query speed-up", "Index size reduction", "Test error, exact (raw → NCA)",
)  # fmt: skip
HEADLINES = (SPEED_HEADLINE, SIZE_HEADLINE, ERROR_HEADLINE)


_FORMATS = {
    "query time (s)": "{:.3f}",
    "build time (s)": "{:.2f}",
    "index size": byte_size,
    "test error": "{:.2%}",  # as the headline's test error
}


def query_points(data: Dataset) -> np.ndarray:
    """Indices of the test points every search of the page asks, the same for every row."""
    return stratified_subsample(data.y_test, QUERIES, seed=0)  # all of them up to QUERIES


def queries_in_words(data: Dataset) -> str:
    """"5,000 queries (a stratified sample of the 10,000 test points)", or "178 queries"."""
    asked, test = len(query_points(data)), len(data.y_test)
    return f"{asked:,} queries" + (f" (a stratified sample of the {test:,} test points)" if asked < test else "")


def space_names(data: Dataset, d: int) -> list[str]:
    """The two spaces searched, as the table names them."""
    return [f"raw {data.n_features}-D", f"NCA {d}-D"]


def flat_sizes(data: Dataset, d: int) -> dict[str, int]:
    """Each space's flat index in bytes, known before any search (float32 training vectors),
    keyed by the names of ``space_names`` in their order."""
    raw, nca = space_names(data, d)
    return {raw: len(data.y_train) * data.n_features * 4, nca: len(data.y_train) * d * 4}


def show_table(slot, costs: list[SearchCost], sizes: dict[str, int]) -> None:
    """The table into ``slot`` (an ``st.empty``): one row per space and index kind (in the
    order of ``sizes``, see ``flat_sizes``), ratios to raw exact search, which is measured
    first. A row not measured yet shows what needs no search, a flat index's size."""
    spaces = list(sizes)
    ordered = sorted(costs, key=lambda c: (spaces.index(c.name), KINDS.index(c.index)))
    rows = dict(zip(((c.name, c.index) for c in ordered), cost_table(ordered))) if costs else {}
    table = []
    for space in spaces:
        for kind in KINDS:
            if (space, kind) in rows:
                table.append(_in_words(rows[space, kind], rows[spaces[0], "exact"]))
            elif kind == "exact":
                reduction = smaller(sizes[spaces[0]] / sizes[space]) if space != spaces[0] else "reference"
                table.append({"space": space, "index": INDEX_LABELS[kind], "index size": sizes[space],
                              "size reduction": reduction})  # fmt: skip
            else:
                table.append({"space": space, "index": INDEX_LABELS[kind]})
    frame = pd.DataFrame(table, columns=list(COLUMNS_ORDER)).style.format(_FORMATS, na_rep=MISSING)
    slot.dataframe(frame, hide_index=True, column_config=COLUMNS, placeholder=MISSING)


def show_pending_summary(slot) -> None:
    """The headline's figures as "…" into ``slot`` until exact search is measured: drawn
    in its place from the start, the headline does not push the table down when it comes."""
    with slot.container():
        for column, label in zip(st.columns(3), HEADLINES):
            delta = MISSING if label == ERROR_HEADLINE else None  # a blank change keeps its height
            column.metric(label, "…", delta, delta_color="off", delta_arrow="off")


def _in_words(row: dict, reference: dict) -> dict:
    """A cost_table row with its ratios against ``reference`` (the first row) in words; a
    ratio of two times below the timer's noise says nothing."""
    if row is reference:
        return {**row, "speed-up": "reference", "size reduction": "reference"}
    quick = max(row["query time (s)"], reference["query time (s)"]) < TOO_QUICK_SECONDS
    speed = "too quick to tell" if quick else faster(row["speed-up"])
    return {**row, "speed-up": speed, "size reduction": smaller(row["size reduction"])}
