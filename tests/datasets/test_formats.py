import struct

import numpy as np
import pytest

from nca_core.datasets import DatasetError
from nca_core.datasets._formats import parse_idx, parse_libsvm, read_idx_set


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


def tiny_idx_set(labels=(0, 1, 1)):
    """A 3-train, 1-test set of 2x2 images with classes a and b, as read_idx_set expects."""
    from nca_core.datasets._registry import DatasetSpec

    spec = DatasetSpec("tiny", "Tiny", "", "", ("a", "b"), image_shape=(2, 2), sizes=(3, 1))
    contents = [
        idx((3, 2, 2), bytes(range(12))),
        idx((3,), bytes(labels)),
        idx((1, 2, 2)),
        idx((1,), b"\x01"),
    ]
    return spec, contents, ["xt", "yt", "xs", "ys"]


def test_idx_set_flattens_images_and_widens_labels():
    arrays = read_idx_set(*tiny_idx_set())
    assert arrays["X_train"].shape == (3, 4) and arrays["X_train"].dtype == np.uint8
    np.testing.assert_array_equal(arrays["X_train"][2], [8, 9, 10, 11])
    assert arrays["y_train"].dtype == np.int64 and arrays["y_test"].tolist() == [1]


def test_idx_set_refuses_a_label_without_a_class():
    with pytest.raises(DatasetError, match=r"^yt: label 2 is outside 0\.\.1$"):
        read_idx_set(*tiny_idx_set(labels=(0, 2, 1)))
