"""AppTests of the kNN speed and storage page."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
from apptest_helpers import button, wait_for
from streamlit.testing.v1 import AppTest

from app_pages.ui.speed import measurements, results_table
from nca_core.search.costs import faster

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def open_speed(app, dataset="digits"):
    app.selectbox(key="dataset").set_value(dataset).run()
    at = app.switch_page("app_pages/knn_speed.py").run()
    assert not at.exception, at.exception
    return at


def test_table_has_raw_and_nca_each_exact_and_hnsw_with_ratios(app):
    at = open_speed(app)
    table = at.dataframe[0].value
    assert list(table["space"]) == ["raw 64-D", "raw 64-D", "NCA 32-D", "NCA 32-D"]
    assert list(table["index"]) == ["exact", "HNSW graph", "exact", "HNSW graph"]
    sizes = table["index size"]  # bytes
    assert sizes[0] == 2 * sizes[2]  # float32 vectors, same rows, half the columns
    assert sizes[1] > sizes[0] and sizes[3] > sizes[2]  # a graph stores links beside the vectors
    assert (table["query time (s)"] > 0).all() and (table["build time (s)"] > 0).all()
    assert table["speed-up"][0] == table["size reduction"][0] == "reference"
    assert table["size reduction"][2] == "2.0x smaller"
    ratio = table["query time (s)"][0] / table["query time (s)"][2]
    quick = max(table["query time (s)"][0], table["query time (s)"][2]) < results_table.TOO_QUICK_SECONDS
    assert table["speed-up"][2] == ("too quick to tell" if quick else faster(ratio))
    assert (table["test error"] < 0.1).all()
    assert [m.label for m in at.metric] == [
        "Query speed-up",
        "Index size reduction",
        "Test error, exact (raw → NCA)",
    ]
    assert at.metric[1].value == "2.0x"
    assert len(at.get("plotly_chart")) == 1


def test_each_dataset_opens_at_its_own_default_d_whatever_another_set_left(app):
    at = open_speed(app, dataset="rings")  # 3 features: d = 2 is its only choice, said in words
    assert not at.select_slider
    assert any("d = 2: the one choice for 3 input features" in c.value for c in at.caption)
    assert list(at.dataframe[0].value["space"])[2] == "NCA 2-D"
    at.selectbox(key="dataset").set_value("digits").run()
    assert not at.exception, at.exception
    assert at.select_slider[0].value == 32
    assert list(at.dataframe[0].value["space"])[2] == "NCA 32-D"


def test_nca_is_trained_on_all_of_a_small_set_once_and_saved(app, tmp_path, monkeypatch):
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    at = open_speed(app)
    assert any(
        "a fit on all 1,258 training points" in c.value and "trained on this visit" in c.value
        for c in at.caption
    )
    saved = list((tmp_path / "models").glob("quick-digits-*.npz"))
    assert len(saved) == 1
    before = at.dataframe[0].value
    at.select_slider(key="speed-d-digits").set_value(32).run()  # a rerun measures nothing again
    assert at.dataframe[0].value.equals(before)
    again = AppTest.from_file(APP, default_timeout=60)  # another session loads the saved model
    again.run()
    again = open_speed(again)
    assert any("loaded from the cache" in c.value for c in again.caption)
    raw, nca = again.dataframe[0].value, before
    assert list(raw["query time (s)"][:2]) == list(nca["query time (s)"][:2])  # raw costs are shared


def test_reuses_the_train_run_when_it_matches(app):
    app.selectbox(key="dataset").set_value("digits").run()
    app.sidebar.select_slider(key="digits-d").set_value(32).run()  # epochs come back to d's own
    app.sidebar.slider(key="digits-epochs-linear-32").set_value(3)
    app.sidebar.slider(key="pace").set_value(0)
    app.sidebar.toggle(key="slow-start").set_value(False)
    button(app, "Train").click().run()
    wait_for(app, lambda at: not at.session_state["train_run"].job.alive)
    at = app.switch_page("app_pages/knn_speed.py").run()
    assert not at.exception, at.exception
    assert any("the run from the Train page (3 epochs)" in c.value for c in at.caption)


def _summary_script(raw_seconds, nca_seconds, raw_error, nca_error):
    """A script drawing the page's summary for given costs (raw and NCA, exact and HNSW)."""
    from app_pages.ui.speed import measurements
    from nca_core.search.costs import SearchCost

    costs = [
        SearchCost("raw 64-D", 64, raw_error, raw_seconds, 4000, "exact"),
        SearchCost("raw 64-D", 64, raw_error, 2 * raw_seconds, 9000, "hnsw"),
        SearchCost("NCA 32-D", 32, nca_error, nca_seconds, 2000, "exact"),
        SearchCost("NCA 32-D", 32, nca_error, 2 * nca_seconds, 7000, "hnsw"),
    ]
    measurements.show_summary(costs)


def summary(*args):
    at = AppTest.from_function(_summary_script, args=args, default_timeout=30).run()
    assert not at.exception, at.exception
    return {m.label: m for m in at.metric}


def test_the_headline_is_the_tables_nca_exact_row_and_says_when_it_is_slower():
    metrics = summary(0.2, 0.3, 0.02, 0.02)
    assert metrics["Query speed-up"].value == "1.5x slower"
    assert "slower" in metrics["Query speed-up"].help and "NCA exact row" in metrics["Query speed-up"].help
    faster = summary(0.3, 0.1, 0.02, 0.02)
    assert faster["Query speed-up"].value == "3.0x"
    assert "raw 300 ms, NCA 100 ms" in faster["Query speed-up"].help
    assert faster["Index size reduction"].value == "2.0x"  # 4000 bytes against 2000, exact rows


def test_a_table_and_its_headline_agree_on_whether_times_can_be_told_apart():
    """USPS: raw exact 60 ms is measurable, the HNSW rows are not; the headline once said
    "too quick" beside a table that said "2.6x faster"."""
    from nca_core.search.costs import SearchCost, cost_table

    costs = [
        SearchCost("raw 256-D", 256, 0.05, 0.060, 4000, "exact"),
        SearchCost("raw 256-D", 256, 0.05, 0.010, 9000, "hnsw"),
        SearchCost("NCA 32-D", 32, 0.05, 0.023, 2000, "exact"),
        SearchCost("NCA 32-D", 32, 0.05, 0.004, 7000, "hnsw"),
    ]
    rows = cost_table(costs)
    row = results_table._in_words(rows[2], rows[0])
    value, _ = measurements.speed_headline(costs)
    assert row["speed-up"] == "2.6x faster" and value == "2.6x"


def test_the_headline_says_when_times_are_too_small_to_compare():
    metrics = summary(0.007, 0.015, 0.02, 0.02)
    assert metrics["Query speed-up"].value == "too quick"
    assert "7 ms" in metrics["Query speed-up"].help and "15 ms" in metrics["Query speed-up"].help


def test_an_unchanged_test_error_shows_no_arrow():
    error = summary(0.2, 0.1, 0.02, 0.02)["Test error, exact (raw → NCA)"]
    assert error.proto.delta == "same as raw"
    assert error.proto.direction == error.proto.MetricDirection.NONE
    worse = summary(0.2, 0.1, 0.02, 0.09)["Test error, exact (raw → NCA)"]
    assert worse.proto.delta == "+7.00 points" and worse.proto.direction == worse.proto.MetricDirection.UP


def test_figures_are_measured_once_per_machine_and_kept_until_measured_again(app, tmp_path, monkeypatch):
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    first = open_speed(app)
    assert any("measured on this machine just now" in c.value for c in first.caption)
    note = next(c.value for c in first.caption if c.value.startswith("Times measured"))
    counts = [int(n) for n in re.findall(r"median of (\d+)(?: to (\d+))? searches", note)[0] if n]
    assert all(measurements.MIN_REPEATS <= n <= measurements.REPEATS for n in counts), note
    before = first.dataframe[0].value
    later = AppTest.from_file(APP, default_timeout=60)  # another visit: read back, not timed
    later.run()
    later = open_speed(later)
    kept = next(c.value for c in later.caption if c.value.startswith("Times measured"))
    assert "and kept" in kept and " UTC" in kept
    assert later.dataframe[0].value.equals(before)  # the same figures, to the last digit
    button(later, "Measure again").click().run()
    assert not later.exception, later.exception
    assert any("measured on this machine just now" in c.value for c in later.caption)
    renewed = later.dataframe[0].value
    assert not renewed["query time (s)"].equals(before["query time (s)"])
    assert renewed["index size"].equals(before["index size"])


def test_small_index_sizes_are_shown_in_kilobytes(app):
    at = open_speed(app)
    at.select_slider(key="speed-d-digits").set_value(5).run()
    assert not at.exception, at.exception
    styler = at.dataframe[0].proto.arrow_data.styler
    assert styler.display_values, "the table carries no display format"
    shown = pa.ipc.open_stream(styler.display_values).read_all().to_pandas()
    nca_exact = shown[(shown["space"] == "NCA 5-D") & (shown["index"] == "exact")]
    assert nca_exact["index size"].item() == "25.2 kB"  # 1,258 rows x 5 float32 values
    assert shown["index size"][0] == "322 kB"


def test_an_uploads_figures_stay_in_its_session_and_never_reach_the_disk(app, tmp_path, monkeypatch):
    import numpy as np

    from nca_core.datasets import Dataset

    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 24)).astype(np.float32), np.arange(400) % 3
    X[:, 0] += 3 * y
    app.session_state["uploaded_dataset"] = Dataset("uploaded", X[:300], y[:300], X[300:], y[300:], ("a", "b", "c"))
    app.session_state["dataset_choice"] = "uploaded"
    at = app.switch_page("app_pages/knn_speed.py").run()
    assert not at.exception, at.exception
    assert len(at.dataframe[0].value) == 4
    assert not (tmp_path / "search-costs").exists()  # no cost of the user's data on disk
    before = at.dataframe[0].value
    at.run()  # the session keeps them: the same figures
    assert at.dataframe[0].value.equals(before)


def test_a_table_of_kept_and_fresh_figures_says_which_are_which():
    from nca_core.runs.cost_store import StoredCost
    from nca_core.search.costs import SearchCost

    raw = SearchCost("raw 784-D", 784, 0.03, 5.0, 188_000_000, repeats=3)
    nca = SearchCost("NCA 32-D", 32, 0.02, 0.6, 7_680_000, repeats=7)
    note = measurements.measured_note([StoredCost(raw, "2026-11-17T10:02:11+00:00", True), StoredCost(nca, "now", False)])
    assert note == (
        "Times of raw 784-D measured on this machine on 2026-11-17 10:02 UTC and kept; of NCA 32-D "
        "measured just now: each the median of 3 to 7 searches of all queries."
    )
    fresh = measurements.measured_note([StoredCost(raw, "x", False)])
    assert fresh == "Times measured on this machine just now: each the median of 3 searches of all queries."


def test_a_large_test_set_is_searched_through_a_stratified_sample_of_its_points(app, tmp_path, monkeypatch):
    """Every row asks the same stratified sample of the test points where there are more than
    ``results_table.QUERIES``, and the page says so."""
    from nca_core import datasets

    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(results_table, "QUERIES", 100)
    y_test = datasets.load("digits").y_test
    n_test = len(y_test)
    asked, search = [], measurements._search_cost

    def recording(space, Z_train, y_train, Z_test, y_queries, index):
        asked.append(np.asarray(y_queries).copy())
        return search(space, Z_train, y_train, Z_test, y_queries, index)

    monkeypatch.setattr(measurements, "_search_cost", recording)
    at = open_speed(app)
    assert len(asked) == 4 and all(np.array_equal(a, asked[0]) for a in asked)  # one sample, every row
    classes, counts = np.unique(y_test, return_counts=True)
    sampled = np.array([(asked[0] == c).sum() for c in classes])
    assert len(asked[0]) == 100 and (np.abs(sampled - 100 * counts / n_test) <= 1).all()
    assert any(
        c.value.startswith(f"100 queries (a stratified sample of the {n_test:,} test points) against")
        for c in at.caption
    )
    errors = at.dataframe[0].value["test error"] * 100  # wrong answers among 100 queries
    assert ((errors - errors.round()).abs() < 1e-9).all() and len(errors) == 4
    monkeypatch.setattr(results_table, "QUERIES", 10_000)
    assert any(c.value.startswith(f"{n_test:,} queries against") for c in open_speed(app).caption)


class _Slot:
    """Stands in for the page's ``st.empty``: keeps the table it is given."""

    def dataframe(self, styler, **_):
        self.table = styler.data


def test_before_any_search_the_table_shows_the_flat_indexes_sizes_and_keeps_its_order_as_rows_arrive():
    from nca_core.search.costs import SearchCost

    sizes = {"raw 784-D": 60000 * 784 * 4, "NCA 32-D": 60000 * 32 * 4}
    slot = _Slot()
    results_table.show_table(slot, [], sizes)
    assert list(slot.table["index"]) == ["exact", "HNSW graph", "exact", "HNSW graph"]
    assert list(slot.table["index size"].fillna(0)) == [188_160_000, 0, 7_680_000, 0]
    assert list(slot.table["size reduction"].fillna("")) == ["reference", "", "24.5x smaller", ""]
    assert slot.table["query time (s)"].isna().all()
    raw = SearchCost("raw 784-D", 784, 0.03, 3.0, sizes["raw 784-D"])
    nca = SearchCost("NCA 32-D", 32, 0.02, 0.5, sizes["NCA 32-D"])
    results_table.show_table(slot, [raw, nca], sizes)  # the exact pair first, the graphs still to come
    assert list(slot.table["query time (s)"].fillna(0)) == [3.0, 0, 0.5, 0]
    assert list(slot.table["speed-up"].fillna("")) == ["reference", "", "6.0x faster", ""]


# Runs the page in a fresh interpreter where torch cannot be imported: the table must be
# drawn before the page needs it (this test process has loaded torch already).
_PAGE_WITHOUT_TORCH = """
import json, math, sys
from importlib.abc import MetaPathFinder


class NoTorch(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "torch":
            raise ImportError("torch is blocked by this test")


sys.meta_path.insert(0, NoTorch())
from streamlit.testing.v1 import AppTest

at = AppTest.from_file(sys.argv[1], default_timeout=60)
at.session_state["dataset_choice"] = "wine"
at.run()
table = at.dataframe[0].value if len(at.dataframe) else None
print(json.dumps({
    "errors": [e.message for e in at.exception],
    "sizes": None if table is None else [None if math.isnan(s) else int(s) for s in table["index size"]],
    "headline": [[m.label, m.value] for m in at.metric],
}))
"""


def test_the_table_of_sizes_and_the_headlines_place_come_before_the_page_loads_torch():
    """A first visit to a fresh server sees the flat indexes' sizes while torch, seconds on a
    cold start, is still loading: the page imports the search engine after drawing them. The
    headline's figures hold their place above the table meanwhile ("…"), so the table does
    not move down when they come."""
    from app_pages.ui.speed.results_table import HEADLINES
    from nca_core.datasets import load

    root = Path(APP).parent
    page = str(root / "app_pages" / "knn_speed.py")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [sys.executable, "-c", _PAGE_WITHOUT_TORCH, page], capture_output=True, text=True, timeout=300, cwd=root, env=env
    )
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert any("torch is blocked by this test" in e for e in found["errors"]), found
    wine = load("wine")
    n_train, d = len(wine.y_train), 10  # the page's d for wine: its largest choice within 13 features
    assert found["sizes"] == [n_train * wine.n_features * 4, None, n_train * d * 4, None]
    assert found["headline"] == [[label, "…"] for label in HEADLINES]
