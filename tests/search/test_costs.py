"""A search cost's table of ratios and its words (that none of it loads torch: test_layering)."""

from __future__ import annotations

from nca_core.search.costs import SearchCost, cost_table, faster, smaller


def test_cost_table_gives_ratios_to_the_first_row():
    costs = [
        SearchCost("raw 64-D", 64, 0.02, 0.8, 3_000_000),
        SearchCost("raw 64-D", 64, 0.021, 0.2, 4_000_000, "hnsw", 1.5),
        SearchCost("NCA 8-D", 8, 0.03, 0.1, 375_000),
        SearchCost("NCA 8-D", 8, 0.03, 0.05, 1_000_000, "hnsw", 0.5),
    ]
    rows = cost_table(costs)
    assert [(r["space"], r["index"]) for r in rows] == [
        ("raw 64-D", "exact"), ("raw 64-D", "HNSW graph"), ("NCA 8-D", "exact"), ("NCA 8-D", "HNSW graph"),
    ]  # fmt: skip
    assert [r["speed-up"] for r in rows] == [1.0, 4.0, 8.0, 16.0]
    assert [r["size reduction"] for r in rows] == [1.0, 0.75, 8.0, 3.0]
    assert rows[1]["build time (s)"] == 1.5 and rows[0]["index size"] == 3_000_000


def test_ratios_read_as_faster_or_slower_and_smaller_or_larger():
    assert (faster(4.0), faster(0.5)) == ("4.0x faster", "2.0x slower")
    assert (smaller(2.0), smaller(1 / 1.1)) == ("2.0x smaller", "1.1x larger")

