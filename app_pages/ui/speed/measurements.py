"""Glue for the kNN speed page: search costs measured once per machine, an NCA model found
in seconds, and the headline over them (``speed_table`` draws the table).

A registered dataset's costs depend on the data, the map and this machine, not on the
visit: they are measured once and kept on disk (``cost_store``), with their date, until
someone asks to measure again. An upload's are measured for its session alone and never
written. The NCA side is ``fits.nca_run``: the Train page's run when it matches, else
``comparison.quick_nca`` (the recommended settings on a stratified subset, saved under the
cache directory for registered datasets so a later visit, here or on Compare, loads it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

import streamlit as st

from app_pages.ui.app_data import forget, shared_unless_upload
from app_pages.ui.compare import fits
from app_pages.ui.speed.results_table import (
    ERROR_HEADLINE,
    SIZE_HEADLINE,
    SPEED_HEADLINE,
    TOO_QUICK_SECONDS,
    query_points,
    space_names,
)
from nca_core.datasets import Dataset
from nca_core.runs.cost_store import StoredCost, measured_once, now_utc, vectors_digest
from nca_core.search.costs import SearchCost, smaller
from nca_core.search.timing import knn_search_cost

K = 5  # neighbours per query, as the page's title says
# Each search of all queries is timed as often as fits in 2 s (guessing each next search
# as long as the last), at least once and at most 7 times, and the median kept: a search of
# milliseconds, whose timings scatter most, is timed 7 times; one of seconds (raw MNIST's,
# steady from run to run) once, so that a first visit to a machine shows its table sooner
# (commit 0df5073; benchmarks/knn_page.py times the first visit).
REPEATS, MIN_REPEATS, BUDGET_SECONDS = 7, 1, 2.0
# Graphs are built on every core torch may use: about twice as fast on two cores, so the
# page's numbers come sooner; the library's default single-threaded build is reproducible.
_OPTIONS = {
    "repeats": REPEATS, "min_repeats": MIN_REPEATS, "budget_seconds": BUDGET_SECONDS, "deterministic": False,
}  # fmt: skip


def _kept(name: str, what: dict, measure: Callable[[], SearchCost], again: bool) -> StoredCost:
    """``cost_store.measured_once`` for a registered dataset; an upload's cost is kept for
    this session alone (a user's data never reaches the disk)."""
    what = {**what, "k": K, "options": _OPTIONS}
    key = ("knn-speed-cost", json.dumps(what, sort_keys=True))
    if again:
        forget(key, name)
    return shared_unless_upload(
        name,
        key,
        lambda: measured_once(what, measure, again=again),
        lambda: StoredCost(measure(), now_utc(), False),
    )


def _search_cost(space: str, Z_train, y_train, Z_test, y_test, index: str) -> SearchCost:
    return knn_search_cost(space, Z_train, y_train, Z_test, y_test, K, index=index, **_OPTIONS)


def raw_cost(name: str, data: Dataset, index: str, again: bool = False) -> StoredCost:
    """Cost of searching the raw inputs with ``index`` ("exact" or "hnsw")."""
    space, queries = space_names(data, 0)[0], query_points(data)
    X_test, y_test = data.X_test[queries], data.y_test[queries]
    digest = vectors_digest(data.X_train, data.y_train, X_test, y_test)
    what = {"dataset": name, "space": space, "index": index, "data": digest}
    measure = partial(_search_cost, space, data.X_train, data.y_train, X_test, y_test, index)
    return _kept(name, what, measure, again)


def nca_model(name: str, data: Dataset, d: int, standardize: bool) -> tuple[Callable, str]:
    """(map from raw inputs, where it came from in words): the Train page's matching run,
    else NCA trained on a stratified subset (or loaded from the disk cache), as Compare's."""
    fitted, source = fits.nca_run(name, data, d, standardize)
    return fitted.transform, source


def nca_cost(
    name: str, data: Dataset, d: int, transform: Callable, index: str, again: bool = False
) -> StoredCost:
    """Cost of searching the NCA projection with ``index``; a map's costs are kept under
    what it does to the data, so another map is measured anew."""
    queries = query_points(data)
    Z_train, Z_test, y_test = transform(data.X_train), transform(data.X_test[queries]), data.y_test[queries]
    space = space_names(data, d)[1]
    what = {"dataset": name, "space": space, "index": index, "data": vectors_digest(Z_train, data.y_train, Z_test, y_test)}
    measure = partial(_search_cost, space, Z_train, data.y_train, Z_test, y_test, index)
    return _kept(name, what, measure, again)


def measured_note(kept: list[StoredCost]) -> str:
    """When and how the figures were measured, in words: kept figures say their date, and
    a table of kept and fresh figures says which are which."""
    repeats = sorted({k.cost.repeats for k in kept})
    searches = f"{repeats[0]}" if len(repeats) == 1 else f"{repeats[0]} to {repeats[-1]}"
    stored = [k for k in kept if k.from_store]
    fresh = [k for k in kept if not k.from_store]
    if stored:
        date = min(k.measured_at for k in stored)[:16].replace("T", " ")
        spaces = _listed(stored) if fresh else ""
        when = f"{spaces}measured on this machine on {date} UTC and kept"
        if fresh:
            when += f"; {_listed(fresh)}measured just now"
    else:
        when = "measured on this machine just now"
    return f"Times {when}: each the median of {searches} searches of all queries."


def _listed(kept: list[StoredCost]) -> str:
    """ "of raw 784-D " or "of raw 784-D and NCA 32-D ": the spaces whose figures these are."""
    names = list(dict.fromkeys(k.cost.name for k in kept))
    return "of " + " and ".join(names) + " "


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _exact_pair(costs: list[SearchCost]) -> tuple[SearchCost, SearchCost]:
    """Raw and NCA exact search: the table's reference row and its "NCA exact" row."""
    first, last = costs[0].name, costs[-1].name
    return tuple(next(c for c in costs if c.name == n and c.index == "exact") for n in (first, last))


def speed_headline(costs: list[SearchCost]) -> tuple[str, str]:
    """(value, help) of the query speed-up of exact search, the table's "NCA exact" row: a
    ratio only when the times can be told apart, "slower" when the projection is."""
    raw, nca = _exact_pair(costs)
    ratio = raw.query_seconds / nca.query_seconds
    times = f"all queries, exact search: raw {_ms(raw.query_seconds)}, NCA {_ms(nca.query_seconds)}"
    if max(raw.query_seconds, nca.query_seconds) < TOO_QUICK_SECONDS:
        return "too quick", (
            f"Both spaces answer every query in under {_ms(TOO_QUICK_SECONDS)} ({times}): a difference "
            "this small is timer noise. The gain shows on larger sets such as MNIST."
        )
    where = f"The table's NCA exact row ({times}); its HNSW rows compare approximate search."
    if ratio < 1:
        return f"{1 / ratio:.1f}x slower", f"Search after the projection is slower here. {where}"
    return f"{ratio:.1f}x", where


def show_summary(costs: list[SearchCost]) -> None:
    """The two answers for exact search (how much faster, how much smaller: the table's NCA
    exact row) and what it costs in accuracy."""
    raw, nca = _exact_pair(costs)
    reduction = raw.stored_bytes / nca.stored_bytes
    cols = st.columns(3)
    value, why = speed_headline(costs)
    cols[0].metric(SPEED_HEADLINE, value, help=why)
    cols[1].metric(  # a short value: a third of a 1024-pixel screen shows it whole
        SIZE_HEADLINE,
        f"{reduction:.1f}x" if reduction >= 1 else smaller(reduction),
        help="Raw exact search's index against NCA's, the table's NCA exact row: float32 vectors, "
        "D against d values each.",
    )
    change = round((nca.error - raw.error) * 100, 2)
    cols[2].metric(
        ERROR_HEADLINE, f"{nca.error:.2%}", f"{change:+.2f} points" if change else "same as raw",
        delta_color="inverse" if change else "off",  # no change is neither better nor worse
        delta_arrow="auto" if change else "off",
    )  # fmt: skip
