"""Whom a drawn point picks as its neighbour in a frame of a run: NCA's p_ij under the run's
kernel, among the points drawn, its likeliest few and p_i, the mass on its own class.

The Train page draws these as lines from a clicked point and lists them in its Inspect tab;
``class_chances`` and ``step_point`` let it pick a point by keyboard, one after another.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..objective.function import selection_probabilities
from ..objective.kernels import GaussianKernel, StudentTKernel
from ..training.loop import Snapshot

__all__ = ["SHOWN", "Picks", "class_chances", "point_picks", "step_point"]

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


def class_chances(snapshot: Snapshot, y: np.ndarray, chunk: int = 512) -> np.ndarray:
    """Every drawn point's p_i in ``snapshot`` (``point_picks(...).p_i`` of each row, at
    once): shape (n_drawn,), float64, 0 for a point that is not finite or has no finite
    other point. Rows are taken ``chunk`` at a time: memory O(chunk * n_drawn * d)."""
    Z = torch.as_tensor(np.asarray(snapshot.embedding, dtype=np.float64))
    y = torch.as_tensor(np.asarray(y))
    kernel = GaussianKernel() if snapshot.dof is None else StudentTKernel(float(snapshot.dof)).double()
    finite = torch.isfinite(Z).all(1)
    Z = torch.where(finite[:, None], Z, torch.zeros_like(Z))  # no inf - inf below: masked anyway
    out = torch.zeros(len(Z), dtype=torch.float64)
    for start in range(0, len(Z), chunk):
        rows = torch.arange(start, min(start + chunk, len(Z)))
        logits = kernel(((Z[rows, None, :] - Z[None, :, :]) ** 2).sum(-1))
        logits[:, ~finite] = float("-inf")
        logits[torch.arange(len(rows)), rows] = float("-inf")
        p = torch.nan_to_num(torch.softmax(logits, 1))  # a row with no finite other point: 0
        out[rows] = (p * (y[rows, None] == y[None, :])).sum(1)
    out[~finite] = 0.0
    return out.numpy()


def step_point(points: np.ndarray, current: int | None, step: int, among: np.ndarray | None = None) -> int | None:
    """The drawn row ``step`` places after row ``current`` (before it where ``step`` < 0) in
    the order of the drawn points' training numbers ``points`` (n_drawn,), among the rows
    where ``among`` (bool, n_drawn; every row by default) holds, wrapping round at the
    ends; from no point (``current`` None) the first such row for a step forward, the last
    for a step back. None where ``among`` holds nowhere."""
    points = np.asarray(points)
    order = np.argsort(points, kind="stable")
    if among is not None:
        order = order[np.asarray(among, dtype=bool)[order]]
    if not len(order):
        return None
    if current is None:
        return int(order[0] if step > 0 else order[-1])
    # where ``current`` sits among the candidates by its number (it need not be one of them)
    here = int(np.searchsorted(points[order], points[current]))  # candidates before it
    ahead = here + step
    if step > 0 and not (here < len(order) and order[here] == current):
        ahead -= 1  # the first candidate after it is at ``here`` itself
    return int(order[ahead % len(order)])
