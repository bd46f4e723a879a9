"""Checking decoded arrays against the pins in the registry (``RemoteFile.decoded``).

An array matches its pin when it has the set's dtype (``DatasetSpec.pixel_dtype`` for
images, int64 for labels), the split's shape, and the pinned SHA-256 of its bytes taken
little-endian, so the same content hashes the same on every machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

import numpy as np

from ._errors import DatasetError
from ._registry import DatasetSpec

__all__ = ["check_decoded", "decoded_mismatch"]

_LABEL_DTYPE = "<i8"


def decoded_mismatch(spec: DatasetSpec, arrays: Mapping[str, np.ndarray]) -> str | None:
    """How ``arrays`` differ from their pins, or None when each one in ``arrays`` matches.

    ``arrays`` may hold only some of the set's arrays (those decoded from one file).
    """
    for remote in spec.files:
        for key, pinned in remote.decoded.items():
            if key not in arrays:
                continue
            array, dtype = arrays[key], _dtype(spec, key)
            if array.dtype.str[1:] != dtype[1:]:  # kind and size; byte order is handled below
                return f"{key} decoded from {remote.name} is {array.dtype}, expected {np.dtype(dtype)}"
            if array.shape != _shape(spec, key):
                return (
                    f"{key} decoded from {remote.name} has shape {array.shape}, expected {_shape(spec, key)}"
                )
            digest = hashlib.sha256(np.ascontiguousarray(array, dtype=dtype)).hexdigest()
            if digest != pinned:
                return f"{key} decoded from {remote.name} has SHA-256 {digest}, expected {pinned}"
    return None


def check_decoded(spec: DatasetSpec, arrays: Mapping[str, np.ndarray]) -> None:
    """Raise DatasetError unless every pinned array is in ``arrays`` and matches its pin."""
    missing = [key for remote in spec.files for key in remote.decoded if key not in arrays]
    if missing:
        raise DatasetError(f"{spec.name}: decoded arrays lack {missing}")
    problem = decoded_mismatch(spec, arrays)
    if problem is not None:
        raise DatasetError(
            f"{spec.name}: {problem}. The files are a different version or were altered; "
            f"delete them and load again."
        )


def _dtype(spec: DatasetSpec, key: str) -> str:
    return spec.pixel_dtype if key.startswith("X_") else _LABEL_DTYPE


def _shape(spec: DatasetSpec, key: str) -> tuple[int, ...]:
    n = spec.sizes[0 if key.endswith("_train") else 1]
    if key.startswith("y_"):
        return (n,)
    height, width = spec.image_shape
    return (n, height * width)
