import struct

import numpy as np
import pytest

from nca_core.datasets import DatasetError
from nca_core.datasets._formats import parse_idx, parse_libsvm


def idx(shape, body=None, magic=b"\x00\x00\x08"):
    header = magic + bytes([len(shape)]) + b"".join(struct.pack(">I", s) for s in shape)
    return header + (bytes(np.prod(shape)) if body is None else body)


def test_idx_roundtrip():
    raw = idx((2, 3), bytes(range(6)))
    np.testing.assert_array_equal(parse_idx(raw, "f", (2, 3)), [[0, 1, 2], [3, 4, 5]])


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\x00\x00", "too short"),
        (idx((2, 3), magic=b"\x00\x00\x0d"), "bad IDX magic number"),
        (idx((2,)), "has 1 dimensions, expected 2"),
        (idx((2, 4)), r"dimensions \(2, 4\), expected \(2, 3\)"),
        (idx((2, 3), bytes(5)), "body is 5 bytes, expected 6"),
    ],
)
def test_idx_errors(raw, message):
    with pytest.raises(DatasetError, match=message):
        parse_idx(raw, "f", (2, 3))


def test_libsvm_fills_missing_features_with_zero():
    X, y = parse_libsvm("3 1:0.5 3:-1\n1 2:1\n", "f", 3)
    np.testing.assert_array_equal(X, [[0.5, 0, -1], [0, 1, 0]])
    np.testing.assert_array_equal(y, [3, 1])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "holds no samples"),
        ("x 1:1\n", "line 1: label 'x' is not an integer"),
        ("1 1:1\n2 3:1 2:1\n", "line 2: feature indices must be increasing"),
        ("1 0:1\n", "increasing integers in 1..3"),
        ("1 4:1\n", "increasing integers in 1..3"),
        ("1 1:a\n", "not a number"),
        ("1 1\n", "index:value"),
    ],
)
def test_libsvm_errors(text, message):
    with pytest.raises(DatasetError, match=message):
        parse_libsvm(text, "f", 3)
