"""Real data for the search tests: digits (always here) and USPS (when the files are)."""

import pytest


@pytest.fixture(scope="module")
def digits_split():
    from nca_core.datasets import load

    data = load("digits")
    return data.X_train, data.y_train, data.X_test, data.y_test


@pytest.fixture(scope="module")
def usps_split(data_dir):
    from nca_core.datasets import load

    data = load("usps", data_dir=data_dir, download=False)
    return data.X_train, data.y_train, data.X_test[:400], data.y_test[:400]
