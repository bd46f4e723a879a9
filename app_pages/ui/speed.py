"""Glue for the kNN speed page: search costs measured once, an NCA model found in seconds.

Raw-input costs of a registered dataset depend only on the data and this machine, so they
are measured once per server process and shared (read-only results). The NCA side is
``compare.nca_run``: the Train page's run when it matches, else ``comparison.quick_nca`` (the
recommended settings on a stratified subset, saved under the cache directory for registered
datasets so a later visit, here or on Compare, loads it; an upload is never written to disk).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pandas as pd
import streamlit as st

from nca_core.datasets import Dataset
from nca_core.runs.comparison import INDEX_LABELS, SearchCost, best_gains, cost_table, knn_search_cost
from nca_core.util.formatting import byte_size

from . import compare
from .data import shared_unless_upload

KINDS = ("exact", "hnsw")
REPEATS, BUDGET_SECONDS = 3, 0.5  # repeat a search while the repeats so far took under 0.5 s
# Graphs are built on every core torch may use: about twice as fast on two cores, so the
# page's numbers come sooner; the library's default single-threaded build is reproducible.
_OPTIONS = {"repeats": REPEATS, "budget_seconds": BUDGET_SECONDS, "deterministic": False}

TOO_QUICK_SECONDS = 0.05  # all queries answered faster than this, either way: timer noise
COLUMNS_ORDER = (
    "space", "index", "query time (s)", "build time (s)", "index size", "test error",
    "speed-up", "size reduction",
)  # fmt: skip
COLUMNS = {  # times, sizes and errors stay numbers (sorting), ``_FORMATS`` says how they read; ratios are words
    "index size": st.column_config.Column(
        help="What the index stores: float32 vectors, plus the graph for HNSW"
    ),
    "speed-up": st.column_config.Column(
        "speed", help=f"Against raw exact search (— where both take under {TOO_QUICK_SECONDS * 1e3:.0f} ms: timer noise)"
    ),
    "size reduction": st.column_config.Column("size", help="Against raw exact search's index"),
    "query time (s)": st.column_config.Column("query (s)", help="All test points, median of the repeats"),
    "build time (s)": st.column_config.Column("build (s)"),
}
MISSING = "—"  # a row not measured yet


def faster(ratio: float) -> str:
    """A speed ratio in words: "3.0x faster", "1.4x slower"."""
    return f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"


def smaller(ratio: float) -> str:
    """A size ratio in words: "2.0x smaller", "1.1x larger" (0.9x 'smaller' read as smaller)."""
    return f"{ratio:.1f}x smaller" if ratio >= 1 else f"{1 / ratio:.1f}x larger"


_FORMATS = {
    "query time (s)": "{:.3f}",
    "build time (s)": "{:.2f}",
    "index size": byte_size,
    "test error": "{:.2%}",  # as the headline's test error
}


def space_names(data: Dataset, d: int) -> list[str]:
    """The two spaces searched, as the table names them."""
    return [f"raw {data.n_features}-D", f"NCA {d}-D"]


def _raw(data: Dataset, index: str) -> SearchCost:
    return knn_search_cost(
        space_names(data, 0)[0], data.X_train, data.y_train, data.X_test, data.y_test, index=index, **_OPTIONS
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def _shared_raw(name: str, index: str, _data: Dataset) -> SearchCost:
    """A registered dataset's raw costs are the same for everyone: measured once (read-only)."""
    return _raw(_data, index)


def raw_cost(name: str, data: Dataset, index: str) -> SearchCost:
    """Cost of searching the raw inputs with ``index`` ("exact" or "hnsw")."""
    return shared_unless_upload(
        name, ("knn-speed-raw", index), lambda: _shared_raw(name, index, data), lambda: _raw(data, index)
    )


def nca_model(name: str, data: Dataset, d: int, standardize: bool) -> tuple[Callable, str]:
    """(map from raw inputs, where it came from in words): the Train page's matching run,
    else NCA trained on a stratified subset (or loaded from the disk cache), as Compare's."""
    fitted, source = compare.nca_run(name, data, d, standardize)
    return fitted.transform, source


def nca_costs(name: str, data: Dataset, d: int, transform: Callable) -> Iterator[SearchCost]:
    """Cost of searching the NCA projection with each index kind, as each is measured; kept
    per session for this map (a new Train page run is measured anew)."""
    key = ("knn-speed-nca-costs", name, d)
    kept = st.session_state.get(key)
    if kept is not None and kept[0] == transform:  # the same bound method of the same model
        yield from kept[1]
        return
    Z_train, Z_test = transform(data.X_train), transform(data.X_test)
    measured = []
    for index in KINDS:
        space = space_names(data, d)[1]
        cost = knn_search_cost(space, Z_train, data.y_train, Z_test, data.y_test, index=index, **_OPTIONS)
        measured.append(cost)
        yield cost
    st.session_state[key] = (transform, measured)


def show_table(slot, costs: list[SearchCost], spaces: list[str]) -> None:
    """The table into ``slot`` (an ``st.empty``): one row per space and index kind, ratios to
    raw exact search; rows not measured yet are listed with empty cells."""
    rows = cost_table(costs) if costs else []  # the first cost, raw exact, is the reference
    rows = [_in_words(row, rows[0]) for row in rows]
    done = {(c.name, c.index) for c in costs}
    rows += [
        {"space": space, "index": INDEX_LABELS[kind]}
        for space in spaces
        for kind in KINDS
        if (space, kind) not in done
    ]
    table = pd.DataFrame(rows, columns=list(COLUMNS_ORDER)).style.format(_FORMATS, na_rep=MISSING)
    slot.dataframe(table, hide_index=True, column_config=COLUMNS, placeholder=MISSING)


def _in_words(row: dict, reference: dict) -> dict:
    """A cost_table row with its ratios against ``reference`` (the first row) in words; a
    ratio of two times below the timer's noise says nothing."""
    if row is reference:
        return {**row, "speed-up": "reference", "size reduction": "reference"}
    quick = max(row["query time (s)"], reference["query time (s)"]) < TOO_QUICK_SECONDS
    speed = "too quick to tell" if quick else faster(row["speed-up"])
    return {**row, "speed-up": speed, "size reduction": smaller(row["size reduction"])}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def speed_headline(costs: list[SearchCost]) -> tuple[str, str]:
    """(value, help) of the query speed-up: a ratio only when the times can be compared and
    the projection is faster; otherwise the plain words, with the times behind them."""
    raw = min(c.query_seconds for c in costs if c.name == costs[0].name)
    nca = min(c.query_seconds for c in costs if c.name == costs[-1].name)
    faster = raw / nca  # best_gains' speed-up: fastest index of each space
    times = f"all queries: fastest raw index {_ms(raw)}, fastest NCA index {_ms(nca)}"
    if max(raw, nca) < TOO_QUICK_SECONDS:
        return "too quick", (
            f"Both spaces answer every query in under {_ms(TOO_QUICK_SECONDS)} ({times}): a difference "
            "this small is timer noise. The gain shows on larger sets such as MNIST."
        )
    if faster < 1:
        return f"not faster ({faster:.1f}x)", f"Search after the projection is slower here ({times})."
    return f"{faster:.1f}x", f"Fastest raw index against the fastest NCA index ({times})."


def show_summary(costs: list[SearchCost]) -> None:
    """The two answers (how much faster, how much smaller, each space at its best) and what
    exact search costs in accuracy."""
    _, reduction = best_gains(costs)
    raw, nca = (
        next(c for c in costs if c.name == n and c.index == "exact") for n in (costs[0].name, costs[-1].name)
    )
    cols = st.columns(3)
    value, why = speed_headline(costs)
    cols[0].metric("Query speed-up", value, help=why)
    cols[1].metric(  # a short value: a third of a 1024-pixel screen shows it whole
        "Index size reduction",
        f"{reduction:.1f}x" if reduction >= 1 else smaller(reduction),
        help="Smallest raw index against the smallest NCA index",
    )
    change = round((nca.error - raw.error) * 100, 2)
    cols[2].metric(
        "Test error, exact (raw → NCA)", f"{nca.error:.2%}", f"{change:+.2f} points" if change else "same as raw",
        delta_color="inverse" if change else "off",  # no change is neither better nor worse
        delta_arrow="auto" if change else "off",
    )  # fmt: skip
