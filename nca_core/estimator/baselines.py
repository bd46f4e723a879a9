"""PCA and LDA projections, the linear baselines NCA is compared against."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.decomposition import PCA

__all__ = ["BASELINES", "Projection", "discriminant_directions", "fit_projection"]

BASELINES = ("pca", "lda")
# Singular values below this (of within-class data scaled to unit variance per feature),
# and between-class ones below this fraction of the largest, are taken as zero.
_RANK_TOL = 1e-4


@dataclass(frozen=True)
class Projection:
    """A fitted linear projection and what to tell the user about it.

    Made by ``fit_projection``; frozen, so it can be cached and shared.

    Attributes
    ----------
    method : {"pca", "lda"}
        The method that fitted it.
    components : ndarray of shape (n_components, n_features)
        The projection's directions, one per row, most important first.
    mean : ndarray of shape (n_features,)
        Subtracted before projecting (PCA centres; LDA too, for comparable pictures).
    note : str
        Empty, or why fewer dimensions than asked were produced.
    n_components : int
        Number of directions (rows of ``components``).

    See Also
    --------
    - ``fit_projection``: fits one.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from nca_core import fit_projection
    >>> X, y = load_iris(return_X_y=True)
    >>> pca = fit_projection("pca", X, y, n_components=2)
    >>> pca.method, pca.n_components, pca.components.shape
    ('pca', 2, (2, 4))
    >>> pca.transform(X[:2]).round(2)
    array([[-2.68,  0.32],
           [-2.71, -0.18]])
    """

    method: str
    components: np.ndarray
    mean: np.ndarray
    note: str = ""

    def transform(self, X) -> np.ndarray:
        """Project X: ``(X - mean) @ components.T``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components), float64
        """
        return (np.asarray(X, dtype=np.float64) - self.mean) @ self.components.T

    @property
    def n_components(self) -> int:
        """Number of directions (rows of ``components``)."""
        return len(self.components)


def fit_projection(method: str, X, y, n_components: int) -> Projection:
    """Fit PCA (unsupervised) or LDA (supervised) with up to ``n_components`` directions.

    The linear baselines NCA is compared with. PCA is scikit-learn's (``random_state=0``);
    LDA is Fisher's discriminant (``discriminant_directions``), whose projected data have
    unit within-class variance along every direction. LDA has at most n_classes - 1
    discriminant directions, PCA at most min(n_samples, n_features); asking for more gives
    fewer, and ``note`` says so.

    Parameters
    ----------
    method : {"pca", "lda"}
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels (read by LDA only).
    n_components : int
        Directions asked for.

    Returns
    -------
    Projection
        The fitted projection.

    Raises
    ------
    ValueError
        An unknown ``method``, or LDA on fewer than two classes.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from nca_core import fit_projection
    >>> X, y = load_iris(return_X_y=True)
    >>> lda = fit_projection("lda", X, y, n_components=3)
    >>> lda.n_components, lda.transform(X).shape
    (2, (150, 2))
    >>> lda.note
    'LDA is limited to n_classes - 1 = 2 dimensions; it gives 2, not 3.'
    """
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(0)
    if method == "pca":
        d = min(n_components, *X.shape)
        pca = PCA(n_components=d, random_state=0).fit(X)
        note = "" if d == n_components else f"PCA gives at most {d} directions on this data."
        return Projection("pca", pca.components_, mean, note)
    if method == "lda":
        available = min(X.shape[1], len(np.unique(y)) - 1)
        if available < 1:
            raise ValueError("LDA needs at least two classes")
        d = min(n_components, available)
        directions = discriminant_directions(X, y)[:d]
        note = ""
        if d < n_components:
            note = (
                f"LDA is limited to n_classes - 1 = {available} dimensions; it gives {d}, not {n_components}."
            )
        return Projection("lda", directions, mean, note)
    raise ValueError(f"method must be one of {BASELINES}, got {method!r}")


def discriminant_directions(X: np.ndarray, y) -> np.ndarray:
    """Fisher's discriminant directions, most discriminative first: shape (q, n_features),
    q at most n_classes - 1 (fewer where the classes' means or the data are degenerate).

    Two singular value decompositions: the first whitens the within-class scatter (after
    scaling each feature to unit within-class spread), the second finds the axes along
    which the class means, each weighted by its class size, spread most in that whitened
    space. Projected data then have unit within-class variance along every direction.
    """
    X = np.asarray(X, dtype=np.float64)
    classes, index = np.unique(np.asarray(y), return_inverse=True)
    counts = np.bincount(index).astype(np.float64)
    means = np.zeros((len(classes), X.shape[1]))
    np.add.at(means, index, X)
    means /= counts[:, None]
    within = X - means[index]
    spread = within.std(0)
    spread[spread == 0] = 1.0
    _, sigma, Vt = np.linalg.svd(within / (spread * np.sqrt(len(X))), full_matrices=False)
    kept = sigma > _RANK_TOL
    whiten = (Vt[kept] / spread).T / sigma[kept]  # (n_features, r)
    centre = (counts / len(X)) @ means
    weights = np.sqrt(counts / max(1, len(classes) - 1))
    _, sigma, Vt = np.linalg.svd((weights[:, None] * (means - centre)) @ whiten, full_matrices=False)
    kept = sigma > _RANK_TOL * sigma[0] if len(sigma) else sigma > 0
    return (whiten @ Vt[kept].T).T
