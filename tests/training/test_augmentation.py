"""RandomShift: each image moved by a whole number of pixels, edges repeated."""

import numpy as np
import pytest
import torch

from nca_core.training.augmentation import RandomShift


def _shifted(image: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """Reference: the image moved down dy and right dx pixels, edge pixels repeated."""
    h, w = image.shape
    s = max(abs(dy), abs(dx))
    padded = np.pad(image, s, mode="edge")
    return padded[s - dy : s - dy + h, s - dx : s - dx + w]


def _offsets(images: np.ndarray, out: np.ndarray, s: int) -> list[tuple[int, int]]:
    """For each output row, the one (dy, dx) with |dy|, |dx| <= s that the reference matches."""
    found = []
    for image, moved in zip(images, out):
        matches = [
            (dy, dx)
            for dy in range(-s, s + 1)
            for dx in range(-s, s + 1)
            if np.array_equal(_shifted(image, dy, dx), moved)
        ]
        assert len(matches) == 1, matches
        found.append(matches[0])
    return found


@pytest.mark.parametrize("offset", [0.0, 1e4])  # far from the origin, float32 keeps every value
@pytest.mark.parametrize("shape, s", [((16, 16), 1), ((28, 28), 2), ((5, 7), 2)])
def test_every_row_is_its_image_moved_by_at_most_max_shift_pixels(shape, s, offset):
    gen = np.random.default_rng(0)
    images = gen.random((400, *shape), dtype=np.float32) + np.float32(offset)
    X = torch.from_numpy(images.reshape(400, -1))
    out = RandomShift(shape, s)(X, torch.Generator().manual_seed(1))
    assert out.dtype == torch.float32 and out.shape == X.shape
    offsets = _offsets(images, out.numpy().reshape(400, *shape), s)
    assert set(offsets) == {(dy, dx) for dy in range(-s, s + 1) for dx in range(-s, s + 1)}


def test_the_generator_decides_the_shifts():
    X = torch.rand(64, 256)
    shift = RandomShift((16, 16), 1)
    first = shift(X, torch.Generator().manual_seed(3))
    assert torch.equal(first, shift(X, torch.Generator().manual_seed(3)))
    generator = torch.Generator().manual_seed(3)
    assert not torch.equal(shift(X, generator), shift(X, generator))  # afresh at every call


def test_a_centred_digit_keeps_its_ink():
    image = np.zeros((16, 16), dtype=np.float32)
    image[4:12, 6:10] = 1.0
    out = RandomShift((16, 16), 2)(torch.from_numpy(image.reshape(1, -1)).repeat(50, 1))
    assert torch.all(out.sum(1) == image.sum())


@pytest.mark.parametrize(
    "shape, s, message",
    [((16, 16), 0, "max_shift must be a whole number from 1 to 15"),
     ((16, 16), 1.5, "max_shift must be a whole number"),
     ((1, 13), 1, "max_shift must be a whole number from 1 to 0"),
     ((0, 4), 1, "positive sizes")],
)  # fmt: skip
def test_impossible_shifts_are_refused(shape, s, message):
    with pytest.raises(ValueError, match=message):
        RandomShift(shape, s)


def test_rows_of_another_size_are_refused():
    with pytest.raises(
        ValueError, match=r"RandomShift\(16, 16\) needs rows of 256 pixels, got shape \(3, 784\)"
    ):
        RandomShift((16, 16))(torch.zeros(3, 784))
