"""A drawn point's p_ij in a frame, against a float64 transcription of the paper's formula."""

import math

import numpy as np
import pytest

from nca_core.runs.picks import SHOWN, class_chances, point_picks, step_point
from nca_core.training.loop import Snapshot


def frame(Z, dof=None) -> Snapshot:
    """A frame as a run hands it out: its embedding in float32."""
    return Snapshot(1, 0.5, 1.0, None, np.asarray(Z, dtype=np.float32), dof=dof)


def reference_p(Z, anchor, dof=None) -> np.ndarray:
    """p_ij = k(|z_i - z_j|^2) / sum_{k != i} k(|z_i - z_k|^2), one pair at a time in float64,
    with the largest log-similarity taken out before exp so that nothing overflows."""
    Z = np.asarray(Z, dtype=np.float64)
    logs = {}
    for j in range(len(Z)):
        if j != anchor:
            s = math.fsum((float(a) - float(b)) ** 2 for a, b in zip(Z[anchor], Z[j]))
            logs[j] = -s if dof is None else -(dof + 1) / 2 * math.log1p(s / dof)
    top = max(logs.values())
    total = math.fsum(math.exp(v - top) for v in logs.values())
    p = np.zeros(len(Z))
    for j, v in logs.items():
        p[j] = math.exp(v - top) / total
    return p


def blobs(rng, centres, per_class=12, spread=0.6):
    Z = np.concatenate([c + spread * rng.normal(size=(per_class, len(c))) for c in centres])
    return Z.astype(np.float32), np.repeat(np.arange(len(centres)), per_class)


@pytest.mark.parametrize("dof", [None, 1.0, 4.5], ids=["gaussian", "student-t 1", "student-t 4.5"])
@pytest.mark.parametrize(
    "centres",
    [
        [(0.0, 0.0), (2.0, 1.0), (-1.0, 2.5)],  # classes that overlap
        [(0.0, 0.0), (300.0, 0.0), (0.0, -900.0)],  # far apart: exp(-s) underflows between them
        [(1e4, -2e4), (1e4 + 2.0, -2e4), (1e4, -2e4 + 3.0)],  # far from the origin
    ],
    ids=["overlapping", "far apart", "far from the origin"],
)
def test_p_ij_and_p_i_match_the_float64_formula(rng, centres, dof):
    Z, y = blobs(rng, centres)
    for anchor in (0, 13, len(Z) - 1):
        picks = point_picks(frame(Z, dof), y, anchor)
        expected = reference_p(Z, anchor, dof)
        np.testing.assert_allclose(picks.p, expected, rtol=1e-9, atol=1e-300)
        assert picks.p[anchor] == 0.0 and picks.p.sum() == pytest.approx(1.0, abs=1e-12)
        assert picks.p_i == pytest.approx(expected[y == y[anchor]].sum(), rel=1e-12)
        assert picks.anchor == anchor


def test_far_apart_classes_leave_all_the_mass_on_the_own_class(rng):
    Z, y = blobs(rng, [(0.0, 0.0), (300.0, 0.0)])
    picks = point_picks(frame(Z), y, 3)
    assert picks.p_i == pytest.approx(1.0, abs=1e-15) and (picks.p[y == 1] == 0.0).all()
    assert picks.same.all()


def test_the_likeliest_come_first_with_their_class_and_ties_by_row():
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [0.0, -1.0], [3.0, 0.0], [0.5, 0.0]])
    y = np.array([0, 0, 1, 1, 0, 1])
    picks = point_picks(frame(Z), y, 0, count=4)
    assert picks.rows.tolist() == [5, 1, 3, 2]  # 1 and 3 tie at distance 1: the lower row first
    assert picks.same.tolist() == [False, True, False, False]
    np.testing.assert_allclose(picks.strongest, reference_p(Z, 0)[[5, 1, 3, 2]], rtol=1e-12)
    assert picks.p_i == pytest.approx(reference_p(Z, 0)[[1, 4]].sum())


def test_at_most_shown_picks_and_only_points_with_some_chance(rng):
    Z, y = blobs(rng, [(0.0, 0.0), (1.0, 1.0)], per_class=20)
    assert len(point_picks(frame(Z), y, 0).rows) == SHOWN
    lonely = np.array([[0.0, 0.0], [0.5, 0.0], [1e5, 0.0]])
    picks = point_picks(frame(lonely), np.array([0, 1, 1]), 0)
    assert picks.rows.tolist() == [1]  # exp(-1e10) is 0: a pick with no chance is no pick


def test_every_coordinate_of_a_3d_embedding_counts():
    """The lines are drawn in the first two coordinates; p_ij is NCA's, in all of them."""
    drawn = frame([[0.0, 0.0, 0.0], [0.1, 0.0, 5.0], [1.0, 0.0, 0.0]])
    picks = point_picks(drawn, np.array([0, 1, 0]), 0)
    assert picks.rows.tolist() == [2, 1]
    np.testing.assert_allclose(picks.p, reference_p(drawn.embedding, 0), rtol=1e-12)


def test_points_that_are_not_finite_are_never_picked_and_pick_nothing():
    """A run that blew up can hold infinite coordinates; the page must not draw NaN lines."""
    Z = np.array([[0.0, 0.0], [1.0, 0.0], [np.inf, 0.0], [0.0, 2.0], [np.nan, 1.0]])
    y = np.array([0, 0, 1, 1, 0])
    picks = point_picks(frame(Z), y, 0)
    finite = [0, 1, 3]
    np.testing.assert_allclose(picks.p[finite], reference_p(Z[finite], 0), rtol=1e-12)
    assert picks.p[2] == 0.0 and picks.p[4] == 0.0 and picks.rows.tolist() == [1, 3]
    lost = point_picks(frame(Z), y, 2)
    assert not lost.p.any() and len(lost.rows) == 0 and lost.p_i == 0.0
    alone = point_picks(frame(np.array([[0.0, 0.0], [np.inf, 0.0]])), np.array([0, 0]), 0)
    assert len(alone.rows) == 0 and alone.p_i == 0.0


@pytest.mark.parametrize("dof", [None, 2.5], ids=["gaussian", "student-t 2.5"])
def test_every_points_p_i_at_once_is_each_points_own(rng, dof):
    Z, y = blobs(rng, [(0.0, 0.0), (1.5, 0.5), (-1.0, 2.0)], per_class=15)
    Z[4] = [np.inf, 0.0]  # a run that blew up: a lost point, which every other leaves out
    chances = class_chances(frame(Z, dof), y, chunk=7)  # chunks that do not divide the rows
    expected = [point_picks(frame(Z, dof), y, row).p_i for row in range(len(Z))]
    np.testing.assert_allclose(chances, expected, rtol=1e-12, atol=1e-300)
    assert chances[4] == 0.0 and 0.0 < chances.min(initial=1.0, where=np.arange(len(Z)) != 4)
    alone = class_chances(frame(np.array([[0.0, 0.0], [np.nan, 0.0]])), np.array([0, 0]))
    assert alone.tolist() == [0.0, 0.0]


def test_stepping_goes_through_the_drawn_points_by_their_numbers_and_wraps_round():
    points = np.array([40, 7, 23, 11, 90])  # training numbers of the drawn rows
    assert step_point(points, None, 1) == 1 and step_point(points, None, -1) == 4  # #7, #90
    assert step_point(points, 1, 1) == 3 and step_point(points, 3, 1) == 2  # 7 -> 11 -> 23
    assert step_point(points, 2, -1) == 3 and step_point(points, 4, 1) == 1  # 23 -> 11, 90 -> 7
    assert step_point(points, 1, -1) == 4  # 7 -> 90
    unsure = np.array([True, False, False, True, True])  # #40, #11, #90
    assert step_point(points, 1, 1, unsure) == 3  # from #7 (not one of them) to #11
    assert step_point(points, 3, 1, unsure) == 0 and step_point(points, 0, 1, unsure) == 4
    assert step_point(points, 2, -1, unsure) == 3 and step_point(points, 2, 1, unsure) == 0  # from #23
    assert step_point(points, 4, 1, unsure) == 3  # wraps round to #11
    assert step_point(points, 2, 1, np.zeros(5, dtype=bool)) is None


@pytest.mark.parametrize("dof", [None, 2.5], ids=["gaussian", "student-t 2.5"])
@pytest.mark.parametrize(
    "centres",
    [
        [(0.0, 0.0), (300.0, 0.0), (0.0, -900.0)],  # far apart: exp(-s) underflows between them
        [(1e4, -2e4), (1e4 + 2.0, -2e4), (1e4, -2e4 + 3.0)],  # far from the origin
    ],
    ids=["far apart", "far from the origin"],
)
def test_every_points_p_i_at_once_matches_the_float64_formula(rng, centres, dof):
    """``class_chances`` on float32 frames, each p_i against the float64 transcription."""
    Z, y = blobs(rng, centres)
    chances = class_chances(frame(Z, dof), y, chunk=5)
    expected = [reference_p(Z, row, dof)[y == y[row]].sum() for row in range(len(Z))]
    np.testing.assert_allclose(chances, expected, rtol=1e-9, atol=1e-12)
