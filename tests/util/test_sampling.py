import numpy as np
import pytest

from nca_core import stratified_subsample


def test_keeps_class_proportions_and_is_seeded():
    y = np.repeat([0, 1, 2], [600, 300, 100])
    idx = stratified_subsample(y, 100, seed=3)
    assert len(idx) == 100 and len(np.unique(idx)) == 100
    np.testing.assert_array_equal(np.bincount(y[idx]), [60, 30, 10])
    np.testing.assert_array_equal(idx, stratified_subsample(y, 100, seed=3))
    assert not np.array_equal(idx, stratified_subsample(y, 100, seed=4))


def test_every_class_is_kept_when_possible():
    y = np.array([0] * 995 + [1] * 5)
    idx = stratified_subsample(y, 10, seed=0)
    assert len(idx) == 10 and set(y[idx]) == {0, 1}


def test_asking_for_more_than_there_is_returns_everything():
    np.testing.assert_array_equal(stratified_subsample([1, 2, 1], 10), [0, 1, 2])


def test_size_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        stratified_subsample([0, 1], 0)
