"""Small PNG pictures of image rows, as data URLs a chart tooltip can show.

A hover picture needs to be recognisable, not faithful: 16 grey levels (4-bit PNG, about
300 bytes for an MNIST digit at 56 pixels, base64 included), dark ink on white, each pixel
repeated to a square block so an 8x8 digit is as large on screen as a 28x28 one. Written
with zlib alone (a PNG is a header, one compressed block of rows and an end marker), so the
library needs no imaging package.
"""

from __future__ import annotations

import base64
import struct
import zlib

import numpy as np

__all__ = ["png_data_urls"]

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
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
    rows = _filtered_rows(_packed(grey))
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", width * scale, height * scale, 4, 0, 0, 0, 0))
    end = _chunk(b"IEND", b"")
    return [
        "data:image/png;base64,"
        + base64.b64encode(
            _SIGNATURE + header + _chunk(b"IDAT", zlib.compress(r.tobytes(), 9)) + end
        ).decode()
        for r in rows
    ]


def _packed(grey: np.ndarray) -> np.ndarray:
    """Two 4-bit pixels per byte, high nibble first; an odd row ends in a zero nibble."""
    if grey.shape[2] % 2:
        grey = np.pad(grey, ((0, 0), (0, 0), (0, 1)))
    return (grey[:, :, 0::2] << 4) | grey[:, :, 1::2]


def _filtered_rows(packed: np.ndarray) -> np.ndarray:
    """Each scanline preceded by its filter type, 0 (none): (n, rows, 1 + bytes per row)."""
    n, rows, _ = packed.shape
    return np.concatenate([np.zeros((n, rows, 1), dtype=np.uint8), packed], axis=2)


def _chunk(kind: bytes, payload: bytes) -> bytes:
    """A PNG chunk: length, type, payload, CRC-32 of type and payload."""
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))
