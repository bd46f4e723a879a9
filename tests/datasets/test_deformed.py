"""mnist-deformed: MNIST grown by deformed copies, generated from a seed and pinned."""

import hashlib

import numpy as np
import pytest

from nca_core import datasets
from nca_core.datasets._deformed import CHUNK, deformed_copies

# SHA-256 of the bytes of the 3,000 copies that seed 0 gives after MNIST's 60,000 images.
PINNED = "ca3aef98fdbdf346c4a00931e5b37f353fd678c09ca3ff77ca9c256ef14bc59d"


@pytest.fixture(scope="module")
def grown(data_dir):
    return datasets.load("mnist-deformed", data_dir, download=False, n_train=63_000, seed=0)


def test_mnist_comes_first_then_copies_that_keep_its_labels(grown, data_dir):
    mnist = datasets.load("mnist", data_dir, download=False)
    assert grown.X_train.shape == (63_000, 784) and grown.X_train.dtype == np.float32
    np.testing.assert_array_equal(grown.X_train[:60_000], mnist.X_train)
    np.testing.assert_array_equal(grown.y_train[60_000:], mnist.y_train[:3_000])
    np.testing.assert_array_equal(grown.X_test, mnist.X_test)
    copies = grown.X_train[60_000:]
    assert copies.min() == 0.0 and copies.max() == 1.0
    moved = np.abs(copies - mnist.X_train[:3_000]).sum(1)
    assert (moved > 1.0).all()  # every copy is deformed ...
    sources, others = mnist.X_train[:3_000], mnist.X_train[3_000:6_000]
    other_class = others[[np.flatnonzero(mnist.y_train[3_000:6_000] != c)[0] for c in mnist.y_train[:3_000]]]
    assert (_correlation(copies, sources) > _correlation(copies, other_class)).mean() > 0.85  # ... like its source


def _correlation(a, b):
    a, b = a - a.mean(1, keepdims=True), b - b.mean(1, keepdims=True)
    return (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))


def test_the_same_seed_gives_the_same_bytes(grown):
    digest = hashlib.sha256((grown.X_train[60_000:] * 255).round().astype(np.uint8).tobytes()).hexdigest()
    assert digest == PINNED


def test_a_set_is_a_prefix_of_a_larger_one_across_chunks_and_another_seed_differs(
    data_dir, monkeypatch, tmp_path
):
    """With chunks of 200 (each chunk draws all its copies, however few are kept, so the
    real 10,000 would make this test draw 30,000): 300 copies are the start of 500, across
    the boundaries of chunks 0 and 1, and seed 1 gives other copies."""
    from nca_core.datasets import _deformed

    monkeypatch.setattr(_deformed, "CHUNK", 200)
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))  # sets of this chunk size kept apart

    def copies(n_train, seed):
        return datasets.load("mnist-deformed", data_dir, download=False, n_train=n_train, seed=seed).X_train[60_000:]

    smaller, larger = copies(60_300, 0), copies(60_500, 0)
    np.testing.assert_array_equal(larger[:300], smaller)
    assert not np.array_equal(copies(60_300, 1), smaller)


def test_too_few_training_images_is_refused(data_dir):
    with pytest.raises(datasets.DatasetError, match="at least 60000"):
        datasets.load("mnist-deformed", data_dir, download=False, n_train=1000)


def test_copies_of_a_blank_image_stay_blank_and_a_dot_moves_a_few_pixels():
    images = np.zeros((2, 28, 28), dtype=np.uint8)
    images[1, 12:16, 12:16] = 255
    copies, sources = deformed_copies(images, 6, seed=3)
    np.testing.assert_array_equal(sources, [0, 1, 0, 1, 0, 1])
    assert not copies[::2].any()
    dots = copies[1::2].reshape(3, 28, 28).astype(float)
    assert all((dot != images[1]).any() and dot.sum() > 0.3 * images[1].sum() for dot in dots)
    rows, cols = np.mgrid[:28, :28]
    centres = [((dot * rows).sum() / dot.sum(), (dot * cols).sum() / dot.sum()) for dot in dots]
    assert all(np.hypot(r - 13.5, c - 13.5) < 6 for r, c in centres)


def test_chunks_drawn_side_by_side_give_the_bytes_one_thread_gives(monkeypatch):
    from nca_core.datasets import _deformed

    images = np.random.default_rng(0).integers(0, 256, (7, 6, 6), dtype=np.uint8)
    count = 2 * CHUNK + 123  # two whole chunks and a part
    monkeypatch.setattr(_deformed, "usable_cores", lambda: 1)
    one_thread, _ = deformed_copies(images, count, seed=5)
    monkeypatch.setattr(_deformed, "usable_cores", lambda: 3)
    three_threads, _ = deformed_copies(images, count, seed=5)
    np.testing.assert_array_equal(three_threads, one_thread)


def test_a_generated_set_is_kept_and_read_back_without_generating_again(data_dir, monkeypatch):
    """The second load of a size and seed reads the cache; another seed or size is drawn."""
    drawn = []

    def draw(images, count, seed):  # a stand-in: what is kept, not how it is drawn
        drawn.append((count, seed))
        copies = np.random.default_rng(seed).integers(0, 256, (count, images[0].size), dtype=np.uint8)
        return copies, np.arange(count) % len(images)

    monkeypatch.setattr(datasets, "deformed_copies", draw)
    first = datasets.load("mnist-deformed", data_dir, download=False, n_train=60_500, seed=7)
    again = datasets.load("mnist-deformed", data_dir, download=False, n_train=60_500, seed=7)
    assert drawn == [(500, 7)]
    np.testing.assert_array_equal(again.X_train, first.X_train)
    np.testing.assert_array_equal(again.y_train, first.y_train)
    datasets.load("mnist-deformed", data_dir, download=False, n_train=60_500, seed=8)
    datasets.load("mnist-deformed", data_dir, download=False, n_train=60_400, seed=7)
    assert drawn == [(500, 7), (500, 8), (400, 7)]
