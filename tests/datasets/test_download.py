"""The download path, end to end, against the local server (see conftest.py)."""

import re
import socket

import numpy as np
import pytest

from nca_core import datasets
from nca_core.datasets import DatasetError


def _leftovers(folder):
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_download_then_load_mnist(file_server, tmp_path):
    seen = []
    data = datasets.load(
        "mnist", data_dir=tmp_path, mirrors=[f"{file_server}/ok/mnist"], progress=lambda *a: seen.append(a)
    )
    assert data.X_train.shape == (60000, 784) and data.X_test.shape == (10000, 784)
    assert _leftovers(tmp_path / "mnist") == sorted(f.name for f in datasets.REGISTRY["mnist"].files)
    names = {name for name, _, _ in seen}
    assert names == {f.name for f in datasets.REGISTRY["mnist"].files}
    assert all(total is not None and 0 < done <= total for _, done, total in seen)


def test_falls_through_to_the_next_mirror(file_server, tmp_path):
    data = datasets.load(
        "usps", data_dir=tmp_path, mirrors=[f"{file_server}/missing/usps", f"{file_server}/ok/usps"]
    )
    assert data.X_train.shape == (7291, 256)


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("missing", "Not Found"),
        ("truncate", "bytes"),
        ("alter", "SHA-256 of its content is [0-9a-f]{64}, expected 4a8df5b0"),
        ("slow", "timed out"),
    ],
)
def test_a_bad_mirror_leaves_nothing_behind(file_server, tmp_path, monkeypatch, mode, reason):
    from nca_core.datasets import _download

    real_download = _download.download
    if mode == "slow":  # a short timeout; the others keep the default while the server re-compresses
        monkeypatch.setattr(datasets, "download", lambda *a, **k: real_download(*a, **{**k, "timeout": 1.0}))
    with pytest.raises(DatasetError) as info:
        datasets.load("usps", data_dir=tmp_path, mirrors=[f"{file_server}/{mode}/usps"])
    message = str(info.value)
    assert "usps.bz2" in message and re.search(reason, message)
    assert "cannot be decompressed" not in message
    assert "Connection" not in message.replace("Connect to", "")  # no reprs of connection pools
    assert "Connect to the internet and retry" in message
    assert _leftovers(tmp_path) == []


def test_connection_refused(tmp_path):
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DatasetError, match=r"usps.bz2: \[Errno \d+\] Connection refused\. Connect") as info:
        datasets.load("usps", data_dir=tmp_path, mirrors=[f"http://127.0.0.1:{port}/usps"])
    assert "HTTPConnection" not in str(info.value) and "Max retries" not in str(info.value)
    assert _leftovers(tmp_path) == []


def test_plain_http_mirrors_are_refused(tmp_path):
    with pytest.raises(DatasetError, match="only https mirrors are used"):
        datasets.load("usps", data_dir=tmp_path, mirrors=["http://example.invalid/usps"])


def test_offline_without_files_says_where_to_put_them(tmp_path):
    with pytest.raises(DatasetError) as info:
        datasets.load("mnist", data_dir=tmp_path, download=False)
    message = str(info.value)
    assert str(tmp_path / "mnist") in message
    assert "train-images-idx3-ubyte.gz" in message and "NCA_DATA_DIR" in message


def test_downloaded_copy_matches_the_original(file_server, data_dir, tmp_path):
    fresh = datasets.load("usps", data_dir=tmp_path, mirrors=[f"{file_server}/ok/usps"])
    original = datasets.load("usps", data_dir=data_dir, download=False)
    np.testing.assert_array_equal(fresh.X_test, original.X_test)
