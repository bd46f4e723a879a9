import bz2
import gzip
import hashlib
import json
import re
import shutil

import numpy as np
import pytest

from nca_core import datasets
from nca_core.datasets import Dataset, DatasetError


def test_rings_is_deterministic_and_defeats_pca():
    a = datasets.load("rings", seed=3)
    b = datasets.load("rings", seed=3)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert a.X_train.shape[1] == 3 and a.n_classes == 5 and a.image_shape is None
    assert len(a.y_train) + len(a.y_test) == 1000
    # the third (noise) coordinate has the largest variance, so PCA keeps it
    variances = a.X_train.var(0)
    assert variances[2] > 2 * variances[:2].max()
    assert not np.array_equal(a.X_train, datasets.load("rings", seed=4).X_train)


@pytest.mark.parametrize(
    ("name", "n_train", "n_test", "n_features", "n_classes"),
    [("wine", 125, 53, 13, 3), ("digits", 1258, 539, 64, 10)],
)
def test_bundled_sets_split_70_30_stratified(name, n_train, n_test, n_features, n_classes):
    data = datasets.load(name)
    assert data.X_train.shape == (n_train, n_features) and data.X_test.shape == (n_test, n_features)
    assert data.n_classes == n_classes
    train_share = np.bincount(data.y_train) / np.bincount(np.concatenate([data.y_train, data.y_test]))
    assert np.all(np.abs(train_share - 0.7) < 0.03)
    assert data.description and data.citation


def test_wine_names_its_cultivars_and_its_13_measurements():
    from sklearn.datasets import load_wine

    data = datasets.load("wine")
    assert data.classes == ("cultivar 1", "cultivar 2", "cultivar 3")
    # scikit-learn's column names, written as words: the same measurements in the same order
    sklearn_names = [n.replace("_", " ").lower() for n in load_wine().feature_names]
    assert [n.lower() for n in data.feature_names] == sklearn_names
    assert data.feature_labels == data.feature_names


def test_unnamed_columns_get_pixel_or_numbered_labels():
    digits = datasets.load("digits")
    assert digits.classes == tuple("0123456789") and digits.feature_names is None
    assert digits.feature_labels[:2] == ("pixel (1, 1)", "pixel (1, 2)")
    assert digits.feature_labels[8] == "pixel (2, 1)" and len(digits.feature_labels) == 64
    assert datasets.load("rings").feature_labels == ("x1", "x2", "x3")


def test_unknown_name_lists_the_choices():
    with pytest.raises(DatasetError, match="unknown dataset 'cifar'; choose one of rings, wine"):
        datasets.load("cifar")


def test_dataset_error_is_a_value_error():
    assert issubclass(DatasetError, ValueError)


@pytest.mark.parametrize(
    ("name", "n_train", "n_test", "side"),
    [("mnist", 60000, 10000, 28), ("fashion-mnist", 60000, 10000, 28), ("usps", 7291, 2007, 16)],
)
def test_real_sets_load_with_the_right_shapes(data_dir, name, n_train, n_test, side):
    if not (data_dir / name).is_dir():  # a folder copied with some of the sets (a GPU machine's)
        pytest.skip(f"{name} is not in {data_dir}")
    data = datasets.load(name, data_dir=data_dir, download=False)
    assert isinstance(data, Dataset)
    assert data.X_train.shape == (n_train, side * side) and data.X_test.shape == (n_test, side * side)
    assert data.X_train.dtype == np.float32 and data.image_shape == (side, side)
    assert set(np.unique(data.y_train)) == set(range(10))


def test_usps_label_counts_and_range(data_dir):
    data = datasets.load("usps", data_dir=data_dir, download=False)
    assert np.bincount(data.y_train).tolist() == [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]
    assert np.bincount(data.y_test).tolist() == [359, 264, 198, 166, 200, 160, 170, 147, 166, 177]
    assert data.X_train.min() == -1.0 and data.X_train.max() == 1.0


def test_mnist_label_counts(data_dir):
    data = datasets.load("mnist", data_dir=data_dir, download=False)
    assert np.bincount(data.y_train).tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert 0.0 <= data.X_train.min() and data.X_train.max() == 1.0


def test_second_load_of_mnist_reads_the_decoded_cache(data_dir, monkeypatch):
    """The files are read, checked against their pins and decoded once; a second load takes
    the cached arrays (what makes it fast) and gives the same data."""
    import nca_core.datasets as loading

    first = datasets.load("mnist", data_dir=data_dir, download=False)

    def no_second_read(*args, **kwargs):
        raise AssertionError("the second load read and decoded the files again")

    monkeypatch.setattr(loading, "read_idx_set", no_second_read)
    monkeypatch.setattr(loading, "_verify", no_second_read)
    second = datasets.load("mnist", data_dir=data_dir, download=False)
    np.testing.assert_array_equal(second.X_train, first.X_train)
    np.testing.assert_array_equal(second.y_test, first.y_test)


def test_available_reports_what_is_local(data_dir, tmp_path):
    ready = dict(datasets.available(data_dir))
    assert ready["mnist"] and ready["usps"] and ready["rings"]
    empty = dict(datasets.available(tmp_path))
    assert empty["rings"] and empty["wine"] and not empty["mnist"]


def _copy_set(data_dir, tmp_path, name):
    shutil.copytree(data_dir / name, tmp_path / name)
    for path in (tmp_path / name).iterdir():
        path.chmod(0o644)
    return tmp_path / name


def test_truncated_mnist_is_refused_naming_the_file(data_dir, tmp_path):
    folder = _copy_set(data_dir, tmp_path, "mnist")
    target = folder / "t10k-labels-idx1-ubyte.gz"
    target.write_bytes(target.read_bytes()[:-100])
    with pytest.raises(DatasetError, match=r"t10k-labels-idx1-ubyte\.gz"):
        datasets.load("mnist", data_dir=tmp_path, download=False)


def test_altered_mnist_is_refused_naming_the_file(data_dir, tmp_path):
    folder = _copy_set(data_dir, tmp_path, "mnist")
    target = folder / "t10k-labels-idx1-ubyte.gz"
    content = bytearray(gzip.decompress(target.read_bytes()))
    content[100] = (content[100] + 1) % 10
    target.write_bytes(gzip.compress(bytes(content)))
    with pytest.raises(
        DatasetError, match=r"t10k-labels-idx1-ubyte.gz: SHA-256 of its content is [0-9a-f]+, expected ff7bcf"
    ):
        datasets.load("mnist", data_dir=tmp_path, download=False)


def test_a_file_changed_after_caching_is_checked_again(data_dir, tmp_path):
    folder = _copy_set(data_dir, tmp_path, "usps")
    datasets.load("usps", data_dir=tmp_path, download=False)
    target = folder / "usps.t.bz2"
    text = bz2.decompress(target.read_bytes()).decode()
    target.write_bytes(bz2.compress(text.replace("1:", "2:", 1).encode()))
    with pytest.raises(DatasetError, match=r"usps\.t\.bz2"):
        datasets.load("usps", data_dir=tmp_path, download=False)


def test_usps_reformatted_but_same_samples_is_accepted(data_dir, tmp_path):
    """A mirror's copy may format numbers differently; identical labels and shape pass."""
    folder = _copy_set(data_dir, tmp_path, "usps")
    target = folder / "usps.t.bz2"
    text = bz2.decompress(target.read_bytes()).decode()
    target.write_bytes(bz2.compress(text.replace(":-1 ", ":-1.0 ").encode()))
    data = datasets.load("usps", data_dir=tmp_path, download=False)
    assert data.X_test.shape == (2007, 256)


def test_usps_with_altered_pixels_is_refused(data_dir, tmp_path):
    """Same labels, same shape, every -1 pixel turned to 1: the decoded pixels are pinned too."""
    folder = _copy_set(data_dir, tmp_path, "usps")
    target = folder / "usps.t.bz2"
    text = bz2.decompress(target.read_bytes()).decode()
    altered, count = re.subn(r":-1(?=\s|\Z)", ":1", text)
    assert count > 290_000
    target.write_bytes(bz2.compress(altered.encode()))
    with pytest.raises(
        DatasetError, match=r"usps\.t\.bz2: SHA-256 of its content is [0-9a-f]{64}, expected 51b73e"
    ):
        datasets.load("usps", data_dir=tmp_path, download=False)


@pytest.fixture(scope="module")
def usps_cache(data_dir, tmp_path_factory):
    """A decoded-cache folder holding USPS, and the arrays it was decoded to."""
    folder = tmp_path_factory.mktemp("usps-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NCA_CACHE_DIR", str(folder))
        return folder, datasets.load("usps", data_dir=data_dir, download=False)


def _rewrite_cache_entry(cache_dir, edit):
    """Apply ``edit`` to the one cached entry's arrays and re-sign its sidecar to match."""
    (data_path,) = cache_dir.glob("*.npz")
    with np.load(data_path) as stored:
        arrays = {name: stored[name] for name in stored.files}
    edit(arrays)
    np.savez(data_path, **arrays)
    meta_path = data_path.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    meta["sha256"] = hashlib.sha256(data_path.read_bytes()).hexdigest()
    meta_path.write_text(json.dumps(meta))


def _more_ink(arrays):
    arrays["X_test"][0] = 1.0


def _as_float64(arrays):  # the same values: only the dtype check sees it
    arrays["X_test"] = arrays["X_test"].astype(np.float64)


def _reshaped(arrays):  # the same bytes: only the shape check sees it
    arrays["X_test"] = arrays["X_test"].reshape(256, -1)


@pytest.mark.parametrize("edit", [_more_ink, _as_float64, _reshaped])
def test_a_cache_entry_that_differs_from_the_pins_is_decoded_again(
    data_dir, usps_cache, tmp_path, monkeypatch, edit
):
    folder, original = usps_cache
    shutil.copytree(folder, tmp_path / "cache")
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path / "cache"))
    _rewrite_cache_entry(tmp_path / "cache", edit)
    again = datasets.load("usps", data_dir=data_dir, download=False)
    assert again.X_test.dtype == np.float32 and again.X_test.shape == (2007, 256)
    np.testing.assert_array_equal(again.X_test, original.X_test)
    np.testing.assert_array_equal(again.y_test, original.y_test)
