"""The toy problem that shows what NCA learns: whom one point listens to under a map.

A small 2-D set (``make_stretched_blobs``) where plain Euclidean neighbours mix the classes,
the map NCA learns on it, and one anchor's stochastic neighbourhood under a scaled map:
its p_ij, the chance p_i of picking its own class, and how many points it really listens to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..datasets import make_stretched_blobs
from ..objective.function import selection_probabilities

__all__ = ["Neighbourhood", "ToyProblem", "effective_neighbours", "neighbourhood", "toy_problem"]


@dataclass(frozen=True)
class ToyProblem:
    """The toy set with the map NCA starts from and the one it learns.

    Attributes
    ----------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,), class indices into ``classes``
    classes : tuple of str
    initial : ndarray of shape (2, 2), the identity NCA starts from
    learned : ndarray of shape (2, 2), NCA's ``components_`` after fitting
    """

    X: np.ndarray
    y: np.ndarray
    classes: tuple[str, ...]
    initial: np.ndarray
    learned: np.ndarray


def toy_problem(n_samples: int = 60, seed: int = 0, max_iter: int = 100) -> ToyProblem:
    """Fit NCA (identity start, CPU, seeded) on the stretched blobs: the same for everyone."""
    from ..estimator.nca import NCA

    X, y = make_stretched_blobs(n_samples, seed=seed)
    nca = NCA(2, init="identity", max_iter=max_iter, device="cpu", random_state=seed).fit(X, y)
    return ToyProblem(X, y, ("left", "middle", "right"), np.eye(2), nca.components_)


def effective_neighbours(p: np.ndarray) -> float:
    """exp(entropy of p): m when p is uniform over m points, 1 when it picks one point.

    p : array of shape (n,), a probability vector; zeros (such as p_ii) do not count.
    """
    p = np.asarray(p, dtype=np.float64)
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


@dataclass(frozen=True)
class Neighbourhood:
    """One anchor's stochastic neighbourhood under a map.

    Attributes
    ----------
    Z : ndarray of shape (n_samples, 2), the points mapped by ``scale * A``
    p : ndarray of shape (n_samples,), p_ij from the anchor i to each j (p_ii = 0)
    p_correct : float, p_i: the mass of p on the anchor's own class
    effective_neighbours : float, see ``effective_neighbours``
    """

    Z: np.ndarray
    p: np.ndarray
    p_correct: float
    effective_neighbours: float


def neighbourhood(
    X: np.ndarray, y: np.ndarray, A: np.ndarray, anchor: int, scale: float = 1.0
) -> Neighbourhood:
    """Map X by ``scale * A`` and describe whom ``anchor`` picks as its neighbour.

    A larger scale stretches every distance, so p concentrates on the nearest few points.
    """
    Z = X @ (scale * np.asarray(A)).T
    p = selection_probabilities(Z, anchor)
    y = np.asarray(y)
    return Neighbourhood(Z, p, float(p[y == y[anchor]].sum()), effective_neighbours(p))
