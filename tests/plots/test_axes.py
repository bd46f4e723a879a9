import numpy as np
import pytest

from nca_core.plots import axes


def test_padded_ranges_cover_every_frame(run):
    snaps, _ = run
    ranges = axes.padded_ranges([s.embedding for s in snaps])
    everything = np.concatenate([s.embedding for s in snaps])
    assert ranges[0][0] < everything[:, 0].min() and ranges[0][1] > everything[:, 0].max()


def test_steady_ranges_contain_the_data_on_grid_lines_and_ignore_small_moves(run):
    snaps, _ = run
    arrays = [s.embedding for s in snaps]
    padded = axes.padded_ranges(arrays)
    steady = axes.steady_ranges(arrays)
    for (plo, phi), (slo, shi) in zip(padded, steady):
        assert slo <= plo and shi >= phi
        step = axes._grid_step(phi - plo)
        assert (shi - slo) / step <= 10
        assert slo / step == pytest.approx(round(slo / step)) and shi / step == pytest.approx(
            round(shi / step)
        )


def test_steady_ranges_hold_still_until_a_point_crosses_a_grid_line():
    frame = np.array([[-14.0, -1.0], [14.0, 1.0]])  # a span of 28: a grid of 5
    assert axes.steady_ranges([frame], pad=0.0) == [[-15.0, 15.0], [-1.0, 1.0]]
    grown = frame * [1.05, 1.0]  # 14.7: still inside the grid line at 15
    assert axes.steady_ranges([frame, grown], pad=0.0) == [[-15.0, 15.0], [-1.0, 1.0]]
    crossed = frame * [1.1, 1.0]  # 15.4 crosses it
    assert axes.steady_ranges([frame, crossed], pad=0.0) == [[-20.0, 20.0], [-1.0, 1.0]]


def test_settled_ranges_move_in_few_steps_while_a_run_spreads_and_refit_when_it_gathers():
    base = np.array([[-14.0, -5.0], [14.0, 5.0]])
    spreading = [base * (1 + 0.02 * e) for e in range(60)]  # doubles, 2% a frame

    def changes(frames) -> int:
        return len({repr(axes.settled_ranges(frames[: e + 1])) for e in range(len(frames))})

    assert changes(spreading) <= 2 < changes_of_steady(spreading)
    for e in range(60):  # every frame inside its axes, off their edges, and not lost in a corner
        (x0, x1), (y0, y1) = axes.settled_ranges(spreading[: e + 1])
        (a0, b0), (a1, b1) = spreading[e]
        dx, dy = 0.015 * (x1 - x0), 0.015 * (y1 - y0)  # a point on the edge is drawn half cut off
        assert x0 + dx <= a0 and x1 - dx >= a1 and y0 + dy <= b0 and y1 - dy >= b1, e
        assert max((a1 - a0) / (x1 - x0), (b1 - b0) / (y1 - y0)) >= 0.4
    gathered = [base * 3, base * 3, base]  # a run that first spreads, then gathers
    assert axes.settled_ranges(gathered) == axes.settled_ranges([base])
    assert axes.settled_ranges(gathered[:2]) != axes.settled_ranges([base])


def test_settling_ranges_frame_by_frame_are_the_settled_ranges_of_every_frame_so_far():
    rng = np.random.default_rng(3)
    # a run that spreads, gathers and has a far-flung point now and then
    frames = [rng.normal(size=(300, 2)) * (1 + np.sin(e / 6)) * [3, 1] + [e / 4, 0] for e in range(80)]
    for e in range(0, 80, 9):
        frames[e][0] = [1e4, -1e4]
    settling = axes.SettlingRanges()
    for e in range(len(frames)):
        assert settling.ranges(frames[: e + 1]) == axes.settled_ranges(frames[: e + 1]), e
    thinned = frames[::2]  # a buffer past its cap keeps every other frame: the ranges start over
    assert settling.ranges(thinned) == axes.settled_ranges(thinned)
    other = [frame * 10 for frame in frames[:5]]  # fewer frames, and others
    assert settling.ranges(other) == axes.settled_ranges(other) != axes.settled_ranges(frames)
    wrapped = [{"points": f} for f in frames[:10]]  # frames that hold their points
    assert axes.SettlingRanges().ranges(wrapped, points=lambda f: f["points"]) == axes.settled_ranges(frames[:10])


def test_settling_ranges_look_at_each_frame_once(monkeypatch):
    looked = []
    bulk_box = axes.bulk_box
    monkeypatch.setattr(axes, "bulk_box", lambda points, share: looked.append(1) or bulk_box(points, share))
    frames = [np.array([[-1.0, -1.0], [1.0, 1.0]]) * (1 + e) for e in range(50)]
    settling = axes.SettlingRanges()
    for e in range(len(frames)):
        settling.ranges(frames[: e + 1])
    assert len(looked) == len(frames)


def test_settling_ranges_settle_a_frame_that_arrives_while_they_look(monkeypatch):
    """A live run's worker appends to the list of frames a page is reading: a frame kept
    while the page settles the ones before it is settled at the next redraw, not skipped."""
    small = np.array([[-1.0, -1.0], [1.0, 1.0]])
    frames = [small, small * 1.1]
    late = small * 50  # kept by the worker while the page looks at the frames before it
    bulk_box = axes.bulk_box

    def looking(points, share):
        if len(frames) == 2:
            frames.append(late)
        return bulk_box(points, share)

    monkeypatch.setattr(axes, "bulk_box", looking)
    settling = axes.SettlingRanges()
    settling.ranges(frames)
    assert len(frames) == 3
    assert settling.ranges(frames) == axes.settled_ranges(frames) != axes.settled_ranges(frames[:2])


def changes_of_steady(frames) -> int:
    return len({repr(axes.steady_ranges(frames[: e + 1])) for e in range(len(frames))})


def test_settled_ranges_ignore_non_finite_points_and_survive_a_single_point():
    frame = np.array([[0.0, 1.0], [np.nan, 2.0], [2.0, np.inf], [1.0, 3.0]])
    (x0, x1), (y0, y1) = axes.settled_ranges([frame])  # rows with a NaN or inf left out
    assert x0 <= 0.0 and 1.0 <= x1 < 2.0 and y0 <= 1.0 and 3.0 <= y1 and np.isfinite([x0, x1, y0, y1]).all()
    (x0, x1), (y0, y1) = axes.settled_ranges([np.array([[3.0, 0.0]])])
    assert x0 < 3.0 < x1 and x1 - x0 >= 1.0 and y0 < 0.0 < y1 and y1 - y0 >= 1.0


def test_grid_step_is_one_two_or_five_times_a_power_of_ten():
    assert axes._grid_step(37.0) == 5.0
    assert axes._grid_step(12.0) == 2.0
    assert axes._grid_step(4.0) == 1.0
    assert axes._grid_step(0.3) == pytest.approx(0.05)


def test_a_pictures_height_follows_the_datas_aspect_within_bounds():
    from nca_core.plots.axes import picture_height

    iris_like = [[-4.0, 4.0], [-0.5, 0.5]]  # a flat set: a flat chart, not a band in a tall box
    assert picture_height(iris_like) == 300
    assert picture_height([[-10.0, 10.0], [-10.0, 10.0]]) == 480  # round: what fits below the controls
    assert picture_height([[0.0, 10.0], [0.0, 6.0]]) == 360  # 600 px wide at one scale
    assert picture_height([[1.0, 1.0], [0.0, 1.0]]) == 480  # a degenerate range
