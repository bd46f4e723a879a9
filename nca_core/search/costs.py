"""What a k-NN search costs, and how two costs compare in words.

No torch here: a page can lay out its table of costs before the search engine has loaded
(``timing.knn_search_cost`` measures one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["INDEX_LABELS", "SearchCost", "cost_table", "faster", "smaller"]

INDEX_LABELS = {"exact": "exact", "hnsw": "HNSW graph"}


@dataclass(frozen=True)
class SearchCost:
    """What one k-NN index costs and gives on the test set.

    Attributes
    ----------
    name : str, the space searched, e.g. "raw 784-D" or "NCA 32-D"
    dimensions : int
    error : float, k-NN test error
    query_seconds : float, time to answer every test query (median of the repeats)
    stored_bytes : int, what the index holds: float32 vectors, plus the graph for HNSW
    index : str, "exact" or "hnsw"
    build_seconds : float, time to build the index
    repeats : int, how many timed searches the median is of
    """

    name: str
    dimensions: int
    error: float
    query_seconds: float
    stored_bytes: int
    index: str = "exact"
    build_seconds: float = 0.0
    repeats: int = 1


def faster(ratio: float) -> str:
    """A speed ratio in words: "3.0x faster", "1.4x slower"."""
    return f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"


def smaller(ratio: float) -> str:
    """A size ratio in words: "2.0x smaller", "1.1x larger" (a "0.9x reduction" read as smaller)."""
    return f"{ratio:.1f}x smaller" if ratio >= 1 else f"{1 / ratio:.1f}x larger"


def cost_table(costs: Sequence[SearchCost]) -> list[dict]:
    """One row per index, with its speed-up and size reduction against the first.

    The first cost is the reference (raw inputs searched exactly); ratios above 1 mean
    faster or smaller than it.
    """
    reference = costs[0]
    return [
        {
            "space": c.name,
            "index": INDEX_LABELS[c.index],
            "query time (s)": c.query_seconds,
            "build time (s)": c.build_seconds,
            "index size": c.stored_bytes,  # bytes; shown in whatever unit reads best
            "test error": c.error,
            "speed-up": reference.query_seconds / c.query_seconds,
            "size reduction": reference.stored_bytes / c.stored_bytes,
        }
        for c in costs
    ]
