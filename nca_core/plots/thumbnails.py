"""Small PNG pictures of image rows, as data URLs a chart tooltip can show.

A hover picture needs to be recognisable, not faithful: 16 grey levels (4-bit PNG, about
300 bytes for an MNIST digit at 56 pixels, base64 included), dark ink on white, each pixel
repeated to a square block so an 8x8 digit is as large on screen as a 28x28 one. Encoded
by Pillow (the app extra's imaging package, as for ``gif``).
"""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image

__all__ = ["png_data_urls"]

_LEVELS = 16  # 4-bit greyscale


def png_data_urls(images: np.ndarray, image_shape: tuple[int, int], *, size: int = 56) -> list[str]:
    """One ``data:image/png;base64,...`` URL per image.

    Parameters
    ----------
    images : ndarray of shape (n, height * width), rows of pixels; high values are ink
    image_shape : (height, width)
    size : int, about how many screen pixels the longer side takes (a whole multiple of it)

    Intensities are scaled by the batch's own range, so one image's grey means the same as
    another's.
    """
    height, width = image_shape
    X = np.asarray(images, dtype=np.float64).reshape(-1, height, width)
    low, high = (float(X.min()), float(X.max())) if X.size else (0.0, 1.0)
    paper = 1.0 - (X - low) / max(high - low, 1e-12)  # 1 is white paper, 0 full ink
    grey = np.rint(paper * (_LEVELS - 1)).astype(np.uint8)
    scale = max(1, round(size / max(height, width)))
    grey = grey.repeat(scale, axis=1).repeat(scale, axis=2)
    return [_data_url(picture * (255 // (_LEVELS - 1))) for picture in grey]


def _data_url(picture: np.ndarray) -> str:
    """A 4-bit greyscale PNG of ``picture`` (uint8, levels 0, 17, ..., 255) as a data URL."""
    buffer = io.BytesIO()
    Image.fromarray(picture, "L").save(buffer, "PNG", bits=4, optimize=True)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
