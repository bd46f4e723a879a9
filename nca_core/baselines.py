"""PCA and LDA projections, the linear baselines NCA is compared against."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

__all__ = ["BASELINES", "Projection", "fit_projection"]

BASELINES = ("pca", "lda")


@dataclass(frozen=True)
class Projection:
    """A fitted linear projection and what to tell the user about it.

    Attributes
    ----------
    method : str
    components : ndarray of shape (n_components, n_features)
    mean : ndarray of shape (n_features,)
        Subtracted before projecting (PCA centres; LDA too, for comparable pictures).
    note : str
        Empty, or why fewer dimensions than asked were produced.
    """

    method: str
    components: np.ndarray
    mean: np.ndarray
    note: str = ""

    def transform(self, X) -> np.ndarray:
        """Project X of shape (n_samples, n_features) to (n_samples, n_components)."""
        return (np.asarray(X, dtype=np.float64) - self.mean) @ self.components.T

    @property
    def n_components(self) -> int:
        return len(self.components)


def fit_projection(method: str, X, y, n_components: int) -> Projection:
    """Fit PCA (unsupervised) or LDA (supervised) with up to ``n_components`` directions.

    LDA has at most n_classes - 1 discriminant directions; asking for more gives fewer, and
    ``note`` says so.
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
        lda = LinearDiscriminantAnalysis(n_components=d).fit(X, y)
        note = ""
        if d < n_components:
            note = (
                f"LDA is limited to n_classes - 1 = {available} dimensions; it gives {d}, not {n_components}."
            )
        return Projection("lda", lda.scalings_.T[:d].copy(), mean, note)
    raise ValueError(f"method must be one of {BASELINES}, got {method!r}")
