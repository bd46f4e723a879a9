"""The demonstration start: mixed at first, as good as the library's start at the end."""

import numpy as np
import pytest

from nca_core import NCA, datasets
from nca_core.datasets import Dataset
from nca_core.runs import demo
from nca_core.runs.run import Run, recommended_config


def end_accuracy(config, data) -> tuple[float, float]:
    snaps = list(Run(config.replace(device="cpu"), data).stream())
    return snaps[0].test_accuracy, snaps[-1].test_accuracy


def test_wine_starts_mixed_from_the_identity_and_ends_about_as_well_as_from_lda():
    data = datasets.load("wine")
    recommended = recommended_config(data)
    chosen = demo.demo_start(data)
    assert chosen == demo.DemoStart("identity", pytest.approx(0.887, abs=0.01), "lda", 1.0)
    start, end = end_accuracy(recommended.replace(init=chosen.init), data)
    _, lda_end = end_accuracy(recommended, data)
    assert start < demo.SEPARATED and end - start > 0.05  # something to watch
    assert end >= 0.95 and end >= lda_end - 0.03  # one test point of 53 is 0.019


@pytest.mark.parametrize("name", ["rings", "digits"])
def test_a_start_that_leaves_room_to_learn_is_kept(name):
    # rings start from PCA at about 30%, digits from LDA at 66%: both move a lot
    assert demo.demo_start(datasets.load(name)) is None


def test_large_sets_and_networks_keep_their_start_without_measuring_it(monkeypatch, rng):
    monkeypatch.setattr(demo, "start_accuracy", lambda *a: pytest.fail("measured a start"))
    n = demo.DEMO_MAX_SAMPLES + 1
    X, y = rng.normal(size=(n, 4)).astype(np.float32), np.arange(n) % 3
    large = Dataset("large", X, y, X[:10], y[:10], ("a", "b", "c"))
    assert demo.demo_start(large) is None
    wine = datasets.load("wine")
    assert demo.demo_start(wine, recommended_config(wine, encoder="mlp")) is None


def test_the_library_keeps_scikit_learns_start():
    assert NCA().init == "auto"
    assert recommended_config(datasets.load("wine")).init == "lda"
