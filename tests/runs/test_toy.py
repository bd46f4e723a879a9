"""The toy illustration's maths: effective neighbours, p_i and the effect of scaling A."""

import numpy as np
import pytest

from nca_core.objective.function import selection_probabilities
from nca_core.runs import toy


@pytest.mark.parametrize("m", [1, 2, 7, 50])
def test_uniform_choice_over_m_points_is_m_effective_neighbours(m):
    p = np.zeros(m + 3)  # zeros, like p_ii, do not count
    p[:m] = 1 / m
    assert toy.effective_neighbours(p) == pytest.approx(m)


def test_effective_neighbours_lie_between_one_and_the_support():
    p = np.array([0.7, 0.2, 0.1, 0.0])
    assert 1 < toy.effective_neighbours(p) < 3
    entropy = -(0.7 * np.log(0.7) + 0.2 * np.log(0.2) + 0.1 * np.log(0.1))
    assert toy.effective_neighbours(p) == pytest.approx(np.exp(entropy))


def test_p_i_is_the_mass_on_the_anchors_own_class():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])
    y = np.array([0, 0, 1, 0])
    view = toy.neighbourhood(X, y, np.eye(2), anchor=0)
    weights = np.exp(-np.array([1.0, 4.0, 9.0]))  # squared distances from point 0
    expected = weights / weights.sum()
    np.testing.assert_allclose(view.p, [0.0, *expected])
    assert view.p_correct == pytest.approx(expected[0] + expected[2])
    assert view.effective_neighbours == pytest.approx(toy.effective_neighbours(expected))


def test_the_map_is_scaled_and_applied_to_every_point():
    X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    A = np.array([[1.0, 1.0], [0.0, 2.0]])
    view = toy.neighbourhood(X, np.array([0, 1, 1]), A, anchor=1, scale=3.0)
    np.testing.assert_allclose(view.Z, X @ (3.0 * A).T)
    np.testing.assert_allclose(view.p, selection_probabilities(view.Z, 1))


def test_scaling_a_up_narrows_the_neighbourhood():
    X, y = np.random.default_rng(0).normal(size=(30, 2)), np.arange(30) % 3
    wide, narrow = (toy.neighbourhood(X, y, np.eye(2), 4, scale) for scale in (0.1, 5.0))
    assert narrow.effective_neighbours < wide.effective_neighbours
    assert wide.effective_neighbours == pytest.approx(29, rel=0.1)  # nearly uniform over the others


def test_the_learnt_map_gives_the_points_more_of_their_own_class():
    problem = toy.toy_problem(max_iter=30)
    assert problem.X.shape == (60, 2) and len(problem.classes) == int(problem.y.max()) + 1
    np.testing.assert_array_equal(problem.initial, np.eye(2))

    def mean_p_correct(A):
        return np.mean([toy.neighbourhood(problem.X, problem.y, A, i).p_correct for i in range(60)])

    assert mean_p_correct(problem.learned) > mean_p_correct(problem.initial) + 0.1
