"""Deformed copies of MNIST training digits, generated from a seed (as infiMNIST/MNIST8M).

Copy j deforms training image j mod 60,000, so classes keep MNIST's proportions. Each
copy gets a small random affine move (rotation, scale, shear, shift) and an elastic
distortion (Simard, Steinkraus and Platt, 2003: a uniform random displacement field
smoothed by a Gaussian and scaled), then is resampled bilinearly and rounded to a byte, as
MNIST stores its pixels. Copies are drawn in chunks of ``CHUNK``, chunk c from its own
generator seeded by (seed, c), in float64 numpy: the bytes depend only on the seed and the
copy's position, so a smaller set is a prefix of a larger one, and chunks can be drawn
side by side.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..util.threads import numpy_blas_on_one_thread, usable_cores

CHUNK = 10_000
# Part of the cache key of a generated set (``datasets.load``): bump it whenever the bytes a
# seed gives change, which the pin in tests/datasets/test_deformed.py catches.
VERSION = 1
MAX_ROTATION = 0.15  # radians, about 9 degrees
MAX_SCALE = 0.10  # relative
MAX_SHEAR = 0.15
MAX_SHIFT = 2.0  # pixels
ELASTIC_SIGMA = 4.0  # pixels: the smoothness of the displacement field
ELASTIC_ALPHA = 34.0  # its scale
MOST_THREADS = 4  # chunks drawn at once: each holds about 1.1 GB of float64 work arrays


def deformed_copies(images: np.ndarray, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` deformed copies of ``images`` (n, h, w) uint8, flattened, and the index of
    the image each copies. Chunks are drawn on a thread per core, up to ``MOST_THREADS``
    (numpy lets go of the interpreter in its array work), BLAS on one thread meanwhile;
    the bytes are the same. The work arrays then take up to about 4.4 GB besides the copies."""
    n, h, w = images.shape
    out = np.empty((count, h * w), dtype=np.uint8)

    def fill(chunk: int) -> None:
        start, stop = chunk * CHUNK, min((chunk + 1) * CHUNK, count)
        whole = np.arange(start, start + CHUNK) % n  # a whole chunk's draws, whatever count
        out[start:stop] = _deform(images[whole], np.random.default_rng([seed, chunk]))[: stop - start]

    chunks = range(math.ceil(count / CHUNK))
    with numpy_blas_on_one_thread(), ThreadPoolExecutor(min(len(chunks), usable_cores(), MOST_THREADS) or 1) as pool:
        list(pool.map(fill, chunks))
    return out, copied_images(count, n)


def copied_images(count: int, n: int) -> np.ndarray:
    """The index of the image each of ``count`` copies deforms: copy j deforms image j mod n."""
    return np.arange(count) % n


def _deform(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each image moved by its own affine map and displacement field; (b, h * w) uint8."""
    b, h, w = images.shape
    rows, cols = np.meshgrid(np.arange(h) - (h - 1) / 2, np.arange(w) - (w - 1) / 2, indexing="ij")
    source_r, source_c = _affine(rng, b, rows, cols)
    for coordinate in (source_r, source_c):
        field = rng.uniform(-1.0, 1.0, (b, h, w))
        coordinate += ELASTIC_ALPHA * _smoothed(field, ELASTIC_SIGMA)
    values = _bilinear(images.astype(np.float64), source_r + (h - 1) / 2, source_c + (w - 1) / 2)
    return np.clip(np.rint(values), 0, 255).astype(np.uint8).reshape(b, h * w)


def _smoothed(field: np.ndarray, sigma: float) -> np.ndarray:
    """Each (h, w) plane of ``field`` blurred by a Gaussian of ``sigma`` pixels (taps to 4
    sigma, zero outside the plane): two products with banded matrices of the taps. Rounding
    the images to bytes afterwards absorbs any last-digit difference between machines."""
    _, h, w = field.shape
    return _band(h, sigma) @ field @ _band(w, sigma)


def _band(size: int, sigma: float) -> np.ndarray:
    """The (size, size) symmetric matrix that blurs along one axis, zero padding."""
    radius = int(4 * sigma + 0.5)
    offsets = np.arange(size)[:, None] - np.arange(size)[None, :]
    taps = np.exp(-0.5 * (offsets / sigma) ** 2) * (np.abs(offsets) <= radius)
    return taps / np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2).sum()


def _affine(rng, b: int, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each output pixel (centred coordinates) reads from, under a random affine map."""
    angle = rng.uniform(-MAX_ROTATION, MAX_ROTATION, b)[:, None, None]
    scale = 1.0 + rng.uniform(-MAX_SCALE, MAX_SCALE, b)[:, None, None]
    shear = rng.uniform(-MAX_SHEAR, MAX_SHEAR, b)[:, None, None]
    shift_r, shift_c = (rng.uniform(-MAX_SHIFT, MAX_SHIFT, b)[:, None, None] for _ in range(2))
    cos, sin = np.cos(angle), np.sin(angle)
    sheared_c = cols + shear * rows
    source_r = (cos * rows - sin * sheared_c) / scale + shift_r
    source_c = (sin * rows + cos * sheared_c) / scale + shift_c
    return source_r, source_c


def _bilinear(images: np.ndarray, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """images (b, h, w) read at fractional (r, c), zero outside the image."""
    b, h, w = images.shape
    flat = images.reshape(b, h * w)
    r0, c0 = np.floor(r), np.floor(c)
    fr, fc = r - r0, c - c0
    batch = np.arange(b)[:, None, None]
    total = np.zeros_like(r)
    for dr, dc, weight in ((0, 0, (1 - fr) * (1 - fc)), (0, 1, (1 - fr) * fc), (1, 0, fr * (1 - fc)), (1, 1, fr * fc)):
        rr, cc = (r0 + dr).astype(np.int64), (c0 + dc).astype(np.int64)
        inside = (rr >= 0) & (rr < h) & (cc >= 0) & (cc < w)
        index = np.clip(rr, 0, h - 1) * w + np.clip(cc, 0, w - 1)
        total += np.where(inside, flat[batch, index], 0.0) * weight
    return total
