"""Search costs kept on disk once per machine (nca_core/runs/cost_store.py)."""

import json

import pytest

from nca_core.runs import cost_store
from nca_core.search.costs import SearchCost

COST = SearchCost("raw 64-D", 64, 0.02, 0.8, 3_000_000, "hnsw", 1.5, 5)


def counting(cost=COST):
    calls = []

    def measure():
        calls.append(1)
        return cost

    return measure, calls


def test_a_cost_is_measured_once_and_read_back_with_its_date(tmp_path):
    measure, calls = counting()
    what = {"dataset": "digits", "index": "hnsw"}
    first = cost_store.measured_once(what, measure, store_dir=tmp_path)
    again = cost_store.measured_once(what, measure, store_dir=tmp_path)
    assert len(calls) == 1 and first.cost == again.cost == COST
    assert not first.from_store and again.from_store and again.measured_at == first.measured_at
    (saved,) = tmp_path.glob("*.json")
    record = json.loads(saved.read_text())  # plain JSON: no pickle is ever read back
    assert record["cost"]["query_seconds"] == 0.8 and cost_store.machine_description() in record["key"]


def test_another_search_or_measure_again_measures_anew(tmp_path):
    measure, calls = counting()
    cost_store.measured_once({"dataset": "digits"}, measure, store_dir=tmp_path)
    cost_store.measured_once({"dataset": "usps"}, measure, store_dir=tmp_path)
    assert len(calls) == 2
    newer = SearchCost("raw 64-D", 64, 0.02, 0.5, 3_000_000, "hnsw", 1.5, 5)
    renewed = cost_store.measured_once({"dataset": "digits"}, lambda: newer, again=True, store_dir=tmp_path)
    assert not renewed.from_store
    assert cost_store.measured_once({"dataset": "digits"}, measure, store_dir=tmp_path).cost == newer
    assert len(calls) == 2


@pytest.mark.parametrize("content", ["", "{not json", '{"key": 1}', '{"key": "x", "cost": {}}'])
def test_a_damaged_file_is_measured_anew_and_replaced_whole(tmp_path, content):
    measure, calls = counting()
    cost_store.measured_once({"dataset": "digits"}, measure, store_dir=tmp_path)
    (saved,) = tmp_path.glob("*.json")
    saved.write_text(content)
    kept = cost_store.measured_once({"dataset": "digits"}, measure, store_dir=tmp_path)
    assert len(calls) == 2 and kept.cost == COST and not kept.from_store
    assert json.loads(saved.read_text())["cost"]["repeats"] == 5
    assert [p.name for p in tmp_path.iterdir()] == [saved.name]  # no temporary file left


def test_a_store_that_cannot_be_written_still_gives_the_cost(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")  # a file where the folder should be
    measure, calls = counting()
    kept = cost_store.measured_once({"dataset": "digits"}, measure, store_dir=blocked / "costs")
    assert kept.cost == COST and len(calls) == 1


def test_the_store_lives_under_the_cache_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    assert cost_store.cost_store_dir() == tmp_path / "search-costs"


def test_two_first_visits_at_once_measure_once(tmp_path):
    """The second waits for the first and reads its figures: two searches timed together on
    the same cores would keep slowed figures."""
    import threading
    import time

    calls = []

    def slow_measure():
        calls.append(1)
        time.sleep(0.3)
        return COST

    results = []
    visits = [
        threading.Thread(target=lambda: results.append(cost_store.measured_once({"d": 1}, slow_measure, store_dir=tmp_path)))
        for _ in range(2)
    ]
    for visit in visits:
        visit.start()
    for visit in visits:
        visit.join(10)
    assert len(calls) == 1 and sorted(r.from_store for r in results) == [False, True]
    assert results[0].cost == results[1].cost == COST


def test_the_store_keeps_the_most_recently_used_costs_up_to_its_limit(tmp_path, monkeypatch):
    """Every Train page run the kNN page reuses adds costs under its own map: past the
    limit the least recently used files go, and one just read back stays."""
    import os

    monkeypatch.setattr(cost_store, "MAX_STORED_COSTS", 3)
    measure, calls = counting()
    for i in range(3):
        cost_store.measured_once({"run": i}, measure, store_dir=tmp_path)
    for i, path in enumerate(sorted(tmp_path.glob("*.json"), key=lambda p: p.stat().st_mtime)):
        os.utime(path, (1000 + i, 1000 + i))  # distinct times, whatever the clock's resolution
    assert cost_store.measured_once({"run": 0}, measure, store_dir=tmp_path).from_store  # used again
    for i in (3, 4):
        cost_store.measured_once({"run": i}, measure, store_dir=tmp_path)
        assert len(list(tmp_path.glob("*.json"))) == 3
    assert len(calls) == 5
    assert all(cost_store.measured_once({"run": i}, measure, store_dir=tmp_path).from_store for i in (0, 3, 4))
    assert not cost_store.measured_once({"run": 1}, measure, store_dir=tmp_path).from_store  # let go
