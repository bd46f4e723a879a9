"""Strict parsers for the canonical file formats: IDX (MNIST family) and LIBSVM (USPS),
and the readers that turn a registered set's files into train and test arrays."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._errors import DatasetError
from ._registry import DatasetSpec

__all__ = ["parse_idx", "parse_libsvm", "read_idx_set", "read_usps", "read_usps_part"]

_IDX_UBYTE = 0x08


def parse_idx(raw: bytes, name: str, expected_shape: tuple[int, ...]) -> np.ndarray:
    """Decode an uncompressed IDX file of unsigned bytes, checking magic, dims and size.

    The header is two zero bytes, the type code 0x08 (unsigned byte), the number of
    dimensions, then one big-endian uint32 per dimension.
    """
    if len(raw) < 4:
        raise DatasetError(f"{name}: file is {len(raw)} bytes, too short for an IDX header")
    if raw[0] != 0 or raw[1] != 0 or raw[2] != _IDX_UBYTE:
        raise DatasetError(f"{name}: bad IDX magic number {raw[:4].hex()} (expected 0000 08xx)")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if ndim != len(expected_shape) or len(raw) < header:
        raise DatasetError(f"{name}: IDX file has {ndim} dimensions, expected {len(expected_shape)}")
    shape = tuple(int(v) for v in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    if shape != tuple(expected_shape):
        raise DatasetError(f"{name}: IDX dimensions {shape}, expected {tuple(expected_shape)}")
    size = int(np.prod(shape))
    if len(raw) != header + size:
        raise DatasetError(
            f"{name}: IDX body is {len(raw) - header} bytes, expected {size} (truncated or padded)"
        )
    return np.frombuffer(raw, dtype=np.uint8, offset=header).reshape(shape)


def parse_libsvm(text: str, name: str, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Decode LIBSVM text ``label idx:val ...`` with 1-based, increasing feature indices.

    Missing features are zero. Returns X (float32, (n, n_features)) and labels (int64).
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise DatasetError(f"{name}: file holds no samples")
    X = np.zeros((len(lines), n_features), dtype=np.float32)
    labels = np.empty(len(lines), dtype=np.int64)
    for row, line in enumerate(lines):
        label_text, _, rest = line.strip().partition(" ")
        try:
            label = float(label_text)
            if label != int(label):
                raise ValueError
            labels[row] = int(label)
        except ValueError:
            raise DatasetError(f"{name}: line {row + 1}: label {label_text!r} is not an integer") from None
        pairs = rest.split()
        if not pairs:
            continue
        if any(pair.count(":") != 1 for pair in pairs):
            raise DatasetError(f"{name}: line {row + 1}: features must be written index:value")
        try:
            numbers = np.array(" ".join(pairs).replace(":", " ").split(), dtype=np.float64)
        except ValueError:
            raise DatasetError(f"{name}: line {row + 1}: a feature index or value is not a number") from None
        index, value = numbers[0::2], numbers[1::2]
        if (
            np.any(index != np.round(index))
            or index[0] < 1
            or index[-1] > n_features
            or np.any(np.diff(index) <= 0)
        ):
            raise DatasetError(
                f"{name}: line {row + 1}: feature indices must be increasing integers in 1..{n_features}"
            )
        if not np.all(np.isfinite(value)):
            raise DatasetError(f"{name}: line {row + 1}: a feature value is NaN or infinite")
        X[row, index.astype(np.int64) - 1] = value
    return X, labels


def read_idx_set(spec: DatasetSpec, contents: Sequence[bytes], names: Sequence[str]) -> dict[str, np.ndarray]:
    """Train and test arrays of an MNIST-like set from its four decompressed IDX files.

    ``contents`` and ``names`` follow ``spec.files``: train images, train labels, test
    images, test labels. Images stay uint8, flattened to (n, h * w); labels become int64.
    """
    n_train, n_test = spec.sizes
    h, w = spec.image_shape
    shapes = [(n_train, h, w), (n_train,), (n_test, h, w), (n_test,)]
    arrays = [parse_idx(raw, name, shape) for raw, name, shape in zip(contents, names, shapes)]
    for labels, name in ((arrays[1], names[1]), (arrays[3], names[3])):
        if labels.max() >= len(spec.classes):
            raise DatasetError(f"{name}: label {labels.max()} is outside 0..{len(spec.classes) - 1}")
    return {
        "X_train": arrays[0].reshape(n_train, -1),
        "y_train": arrays[1].astype(np.int64),
        "X_test": arrays[2].reshape(n_test, -1),
        "y_test": arrays[3].astype(np.int64),
    }


def read_usps(spec: DatasetSpec, contents: Sequence[bytes], names: Sequence[str]) -> dict[str, np.ndarray]:
    """Train and test arrays of USPS from its two decompressed LIBSVM files."""
    out = {}
    for part, raw, name in zip(("train", "test"), contents, names):
        out.update(read_usps_part(spec, part, raw, name))
    return out


def read_usps_part(spec: DatasetSpec, part: str, raw: bytes, name: str) -> dict[str, np.ndarray]:
    """``X_<part>`` and ``y_<part>`` of USPS from one decompressed LIBSVM file.

    Checks the part's size and label counts against ``spec`` and pixels against [-1, 1];
    labels 1..10 in the file become digits 0..9.
    """
    index = ("train", "test").index(part)
    size, counts = spec.sizes[index], spec.label_counts[index]
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{name}: not ASCII text ({exc})") from None
    X, labels = parse_libsvm(text, name, 256)
    if len(X) != size:
        raise DatasetError(f"{name}: {len(X)} samples, expected {size}")
    if labels.min() < 1 or labels.max() > 10:
        raise DatasetError(f"{name}: labels must be 1..10 (digits 0..9)")
    y = labels - 1
    if tuple(np.bincount(y, minlength=10)) != counts:
        raise DatasetError(f"{name}: label counts {np.bincount(y).tolist()}, expected {list(counts)}")
    if X.min() < -1.0 or X.max() > 1.0:
        raise DatasetError(f"{name}: pixel values must lie in [-1, 1]")
    return {f"X_{part}": X, f"y_{part}": y}
