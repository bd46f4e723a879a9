"""Shared fixtures: small real datasets, and the real data folder when it is present."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def real_data_dir() -> Path | None:
    """The folder with the real MNIST/USPS files: $NCA_DATA_DIR, else ../shared/data."""
    for candidate in (os.environ.get("NCA_DATA_DIR"), SHARED_DATA):
        if candidate and (Path(candidate) / "mnist").is_dir():
            return Path(candidate)
    return None


def pytest_configure(config):
    """Under ``pytest -n N`` (``make test``) the workers share the cores: each trains on its
    share of torch's threads, so N workers do not make every core juggle N threads.

    ``NCA_TEST_TF32=1`` lets a GPU's float32 products use TF32, to check on a GPU whether the
    float32-against-float64 tests hold with it (benchmarks/gpu_figures.sh, step tf32)."""
    if os.environ.get("NCA_TEST_TF32") == "1":
        import torch

        torch.backends.cuda.matmul.allow_tf32 = True
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        import torch

        torch.set_num_threads(max(1, torch.get_num_threads() // workers))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    found = real_data_dir()
    if found is None:
        pytest.skip("real datasets not found: set NCA_DATA_DIR or place them in ../shared/data")
    return found


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Decoded-array caches go to a per-session temporary folder, not the user's cache."""
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "decoded-cache"))


@pytest.fixture(scope="session")
def wine():
    from sklearn.datasets import load_wine
    from sklearn.preprocessing import StandardScaler

    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="session")
def digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def problem():
    """120 float64 points in 5-D sorted by class (3 classes), and a 2 x 5 map A."""
    import torch

    gen = torch.Generator().manual_seed(0)
    n = 120
    X = torch.randn(n, 5, generator=gen, dtype=torch.float64)
    y = torch.sort(torch.randint(0, 3, (n,), generator=gen)).values
    A = torch.randn(2, 5, generator=gen, dtype=torch.float64)
    return X, y, A
