"""Where a linear map starts: PCA or LDA directions, completed where they run short.

scikit-learn's rules: LDA gives at most n_classes - 1 directions and the remaining rows
start from PCA (``plan.resolve`` has warned); PCA on fewer samples than d is completed
with random unit rows.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.decomposition import PCA

from .baselines import discriminant_directions

__all__ = ["lda_directions", "pca_directions"]


def pca_directions(X, d, rng) -> np.ndarray:
    """d rows: the leading principal directions of X, shape (d, n_features)."""
    n_components = min(d, *X.shape)
    pca = PCA(n_components=n_components, random_state=rng).fit(X)
    directions = pca.components_
    if len(directions) < d:  # fewer samples than d: complete with random unit rows
        extra = rng.standard_normal((d - len(directions), X.shape[1]))
        directions = np.vstack([directions, extra / np.linalg.norm(extra, axis=1, keepdims=True)])
    return directions


def lda_directions(X, y_index, d, rng) -> np.ndarray:
    """d rows: the discriminant directions of X (classes ``y_index``), then PCA's; PCA's
    alone, with a warning, where LDA finds none."""
    n_classes = int(y_index.max()) + 1
    available = min(X.shape[1], n_classes - 1)
    if available < 1:
        warnings.warn("init='lda' needs at least two classes; starting from PCA", stacklevel=4)
        return pca_directions(X, d, rng)
    try:
        with np.errstate(all="ignore"):  # overflow shows as non-finite directions, below
            directions = discriminant_directions(X, y_index)[:d]
    except np.linalg.LinAlgError:  # the SVD did not converge (e.g. non-finite scatter)
        directions = np.empty((0, X.shape[1]))
    if not np.isfinite(directions).all():  # e.g. variances that underflow
        directions = np.empty((0, X.shape[1]))
    if len(directions) == 0:
        warnings.warn("LDA found no discriminant direction on this data; starting from PCA", stacklevel=4)
        return pca_directions(X, d, rng)
    if d > len(directions):  # plan.resolve has warned when the class count caps LDA
        directions = np.vstack([directions, pca_directions(X, d - len(directions), rng)])
    return directions
