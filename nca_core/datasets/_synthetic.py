"""The paper's concentric rings: a set on which PCA and LDA fail and NCA succeeds."""

from __future__ import annotations

import numpy as np

__all__ = ["make_rings"]


def make_rings(
    n_samples: int = 1000,
    noise: float = 0.15,
    noise_std: float = 5.0,
    n_classes: int = 5,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Points on ``n_classes`` concentric rings in the first two dimensions, plus noise.

    Ring c has radius c + 1 with radial jitter ``noise``; the third coordinate is Gaussian
    with standard deviation ``noise_std``, larger than the rings' spread, so PCA keeps the
    noise and LDA (which needs convex, separated classes) cannot pull the rings apart.

    Returns X of shape (n_samples, 3), float32, and labels of shape (n_samples,).
    """
    if n_samples < 2 * n_classes:
        raise ValueError(f"rings need at least {2 * n_classes} samples, got {n_samples}")
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % n_classes
    rng.shuffle(y)
    angle = rng.uniform(0.0, 2.0 * np.pi, n_samples)
    radius = y + 1.0 + noise * rng.standard_normal(n_samples)
    X = np.column_stack(
        [radius * np.cos(angle), radius * np.sin(angle), noise_std * rng.standard_normal(n_samples)]
    )
    return X.astype(np.float32), y.astype(np.int64)


def make_stretched_blobs(n_samples: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A 2-D toy set for teaching: three classes side by side along x, with a noisy y axis
    much wider than the gaps between them, so plain Euclidean neighbours mix the classes
    until a map shrinks y.

    Returns X of shape (n_samples, 2) and labels of shape (n_samples,).
    """
    rng = np.random.default_rng(seed)
    y = np.arange(n_samples) % 3
    X = np.column_stack(
        [1.5 * y + 0.25 * rng.standard_normal(n_samples), 2.0 * rng.standard_normal(n_samples)]
    )
    return X, y.astype(np.int64)
