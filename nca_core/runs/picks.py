"""Whom a drawn point picks as its neighbour in a frame of a run: NCA's p_ij under the run's
kernel, among the points drawn, its likeliest few and p_i, the mass on its own class.

The Train page draws these as lines from a clicked point and lists them in its Inspect tab.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..objective.function import selection_probabilities
from ..training.loop import Snapshot

__all__ = ["SHOWN", "Picks", "point_picks"]

# The picks drawn and listed: few enough that their lines stay apart around a point in a
# dense cluster, where every drawn neighbour's line merged into one dark patch.
SHOWN = 8


@dataclass(frozen=True)
class Picks:
    """One anchor's choice of neighbour among the drawn points of a frame.

    Attributes
    ----------
    anchor : int, the anchor's row among the drawn points
    p : ndarray of shape (n_drawn,), p_ij to every drawn point j, float64; 0 at the anchor
        and at points whose coordinates are not finite
    rows : ndarray of shape (m,), the ``m <= count`` likeliest rows with p_ij > 0, likeliest
        first (ties: the lower row)
    same : ndarray of shape (m,), bool, whether each of ``rows`` is in the anchor's class
    p_i : float, the sum of p_ij over the anchor's class: the chance it is classified
        correctly (0 when no other drawn point is finite)
    """

    anchor: int
    p: np.ndarray
    rows: np.ndarray
    same: np.ndarray
    p_i: float

    @property
    def strongest(self) -> np.ndarray:
        """p_ij of ``rows``, shape (m,)."""
        return self.p[self.rows]


def point_picks(snapshot: Snapshot, y: np.ndarray, anchor: int, count: int = SHOWN) -> Picks:
    """``anchor``'s p_ij in ``snapshot``'s embedding (every column of it, under the run's
    kernel: Student-t with ``snapshot.dof`` degrees of freedom, or the Gaussian), among the
    drawn points, with its ``count`` likeliest picks.

    Parameters
    ----------
    snapshot : Snapshot, a frame of a run; its ``embedding`` (n_drawn, d) is what is drawn
    y : ndarray of shape (n_drawn,), the drawn points' class labels
    anchor : int, a row of the embedding
    count : int, how many of the likeliest picks ``rows`` holds
    """
    Z, y = np.asarray(snapshot.embedding), np.asarray(y)
    p = np.zeros(len(Z))
    finite = np.flatnonzero(np.isfinite(Z).all(1))
    here = np.searchsorted(finite, anchor)
    if here < len(finite) and finite[here] == anchor and len(finite) > 1:
        # a run that blew up may hold infinite points; they are too far to be picked
        p[finite] = selection_probabilities(Z[finite], int(here), snapshot.dof)
    order = np.argsort(-p, kind="stable")[:count]
    rows = order[p[order] > 0]
    same = y[rows] == y[anchor]
    return Picks(int(anchor), p, rows, same, float(p[y == y[anchor]].sum()))
