"""A made-up run of five frames, three classes of twenty points spreading out."""

import numpy as np
import pytest

from tests.plots.snapshots import snap


@pytest.fixture
def run(rng):
    y = np.repeat([0, 1, 2], 20)
    return [snap(e, rng.normal(size=(60, 2)) * (1 + e)) for e in range(5)], y
