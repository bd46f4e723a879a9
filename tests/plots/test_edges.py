"""Points past the axes drawn on the edge: which rows, where and pointing which way, in the
browser's expressions (evaluated here) and for the replay's fixed ranges."""

import math
import re
from types import SimpleNamespace

import numpy as np
import pytest

from nca_core.plots import axes, edges, live_charts
from tests.plots.vega_lite import CLASSES, valid_vega_lite


def bulk_and_far_points(seed: int = 0, n: int = 3000, far: int = 12) -> np.ndarray:
    """A Gaussian bulk, wider than tall (sd 10 by 6), and ``far`` points 150 to 300 from its
    middle in every direction."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2)) * [10.0, 6.0]
    angle, radius = rng.uniform(0, 2 * np.pi, far), rng.uniform(150, 300, far)
    Z[:far] = radius[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    return Z


def evaluate(expr: str, **names):
    """A Vega expression of the kinds ``edges`` writes, evaluated in Python: && || and one
    conditional ``a ? b : c`` at the top."""
    expr = expr.strip()
    if expr.startswith("(") and expr.endswith(")") and expr.count("(") == 1:
        expr = expr[1:-1]
    if " ? " in expr:
        test, rest = expr.split(" ? ", 1)
        yes, no = rest.split(" : ", 1)
        return evaluate(yes, **names) if evaluate(test, **names) else evaluate(no, **names)
    python = expr.replace("&&", " and ").replace("||", " or ")
    python = re.sub(r"\bPI\b", "pi", python)
    scope = {
        "abs": abs,
        "min": min,
        "max": max,
        "atan2": math.atan2,
        "isFinite": math.isfinite,
        "pi": math.pi,
    }
    return eval(python, {"__builtins__": {}}, {**scope, **names})


class Browser:
    """The chart's signals and scales at a plot of ``width`` pixels (the spec's height), as
    ``live_charts.embedding_spec`` has the browser compute them."""

    def __init__(self, spec: dict, width: float):
        self.width, self.height = width, spec["height"]
        names = {"width": width, "height": self.height}
        self.per_pixel = evaluate(spec["params"][0]["expr"], **names)
        names["units_per_pixel"] = self.per_pixel
        self.domains = [
            [evaluate(b["expr"], **names) for b in spec["encoding"][a]["scale"]["domain"]] for a in "xy"
        ]

    def scale(self, name: str, value: float) -> float:
        (low, high), size = self.domains["xy".index(name)], (self.width if name == "x" else self.height)
        share = (value - low) / (high - low)
        return share * size if name == "x" else (1 - share) * size  # y grows downwards on screen

    def names(self, row) -> dict:
        datum = SimpleNamespace(z1=float(row[0]), z2=float(row[1]), chosen=True)
        return {"datum": datum, "width": self.width, "height": self.height, "units_per_pixel": self.per_pixel,
                "scale": self.scale}  # fmt: skip


def test_the_bulk_fills_the_axes_and_the_far_points_fall_outside_them():
    Z = bulk_and_far_points()
    (x0, x1), (y0, y1) = axes.bulk_ranges([Z])
    outside = (Z[:, 0] < x0) | (Z[:, 0] > x1) | (Z[:, 1] < y0) | (Z[:, 1] > y1)
    assert outside[:12].all() and outside.sum() <= 0.02 * len(Z)  # every far point, and few others
    inner = np.quantile(Z[12:], [0.01, 0.99], axis=0)  # the central 98% of the bulk
    assert (inner[1] - inner[0]) / [x1 - x0, y1 - y0] == pytest.approx([0.85, 0.85], abs=0.1)
    (a0, a1), (b0, b1) = axes.padded_ranges([Z])  # axes over every point: the bulk a speck
    assert (inner[1] - inner[0]).prod() / ((a1 - a0) * (b1 - b0)) < 0.05


def test_a_small_set_keeps_every_point_inside_its_bulk():
    Z = np.random.default_rng(1).normal(size=(150, 2))
    low, high = axes.bulk_box(Z)
    np.testing.assert_array_equal(low, Z.min(0))
    np.testing.assert_array_equal(high, Z.max(0))
    assert axes.bulk_box(np.full((3, 2), np.nan)) is None


def test_settled_ranges_of_a_run_follow_its_bulk_and_hold_still():
    """A run spreading 2% a frame, with far points that wander: the axes move a few times,
    the bulk filling a good part of them throughout, the far points outside."""
    Z = bulk_and_far_points()
    wander = np.random.default_rng(2).normal(size=(60, 12, 2)) * 30.0
    frames = [Z * (1 + 0.02 * e) + np.pad(wander[e], ((0, len(Z) - 12), (0, 0))) for e in range(60)]
    seen = [axes.settled_ranges(frames[: e + 1]) for e in range(60)]
    assert len({repr(r) for r in seen}) <= 4
    for frame, ((x0, x1), (y0, y1)) in zip(frames, seen):
        inner = np.quantile(frame[12:], [0.01, 0.99], axis=0)
        assert ((inner[1] - inner[0]) / [x1 - x0, y1 - y0]).max() >= 0.45
        assert (
            (frame[:12, 0] < x0) | (frame[:12, 0] > x1) | (frame[:12, 1] < y0) | (frame[:12, 1] > y1)
        ).all()


@pytest.mark.parametrize("width", [320, 600, 1000])
def test_the_browser_marks_the_far_points_on_the_edge_pointing_to_them(width):
    Z = bulk_and_far_points()
    ranges = axes.bulk_ranges([Z])
    spec = live_charts.embedding_spec(CLASSES, ranges, height=480)
    layer = edges.beyond_layer(spec, ranges, live_charts.POINT_AREA)
    browser = Browser(spec, width)
    (x0, x1), (y0, y1) = browser.domains
    drawn_outside = (Z[:, 0] < x0) | (Z[:, 0] > x1) | (Z[:, 1] < y0) | (Z[:, 1] > y1)
    kept = np.array([evaluate(layer["transform"][0]["filter"], **browser.names(z)) for z in Z])
    np.testing.assert_array_equal(kept, drawn_outside)  # the far points, and only what is off the plot
    assert kept[:12].sum() >= 8  # on a wide plot a far point may still be on it, drawn as a point
    encoding = layer["encoding"]
    for z in Z[kept]:
        names = browser.names(z)
        x, y = (evaluate(encoding[a]["value"]["expr"], **names) for a in "xy")
        inset = edges.INSET_PIXELS - 1e-6
        assert inset <= x <= width - inset and inset <= y <= browser.height - inset  # wholly on the plot
        assert min(x, width - x, y, browser.height - y) == pytest.approx(edges.INSET_PIXELS)  # at its edge
        there = (browser.scale("x", z[0]) - x, browser.scale("y", z[1]) - y)  # on screen, from the marker
        heading = math.radians(evaluate(encoding["angle"]["value"]["expr"], **names))
        tip = (math.sin(heading), -math.cos(heading))  # the arrowhead's tip, turned clockwise from up
        assert (there[0] * tip[1] - there[1] * tip[0]) == pytest.approx(0, abs=1e-6 * math.hypot(*there))
        assert there[0] * tip[0] + there[1] * tip[1] > 0  # the tip points at the point
        assert evaluate(encoding["opacity"]["value"]["expr"], **names) == edges.MARKER_OPACITY
    inside = browser.names(Z[~kept][0])
    assert evaluate(encoding["opacity"]["value"]["expr"], **inside) == 0  # a point on screen has no marker


def test_a_brushing_panel_with_edges_is_valid_and_selects_only_its_points(rng):
    Z = bulk_and_far_points()
    ranges = axes.bulk_ranges([Z])
    single = live_charts.embedding_spec(CLASSES, ranges, height=380, brushing=True)
    spec = edges.with_edges(single, ranges, live_charts.POINT_AREA)
    rows = live_charts.brushing_rows(Z, np.arange(len(Z)) % 3, CLASSES, np.arange(10))
    valid_vega_lite(spec, rows)
    points, edge = spec["layer"]
    assert [p["name"] for p in spec["params"]] == ["units_per_pixel"]
    assert {p["name"] for p in points["params"]} == {"zoom", live_charts.BOX, live_charts.PICK}
    assert "params" not in edge and edge["mark"]["shape"] == edges.EDGE_MARKER
    assert spec["encoding"] == single["encoding"]  # the axes and colours, shared by both layers
    faded = single["encoding"]["opacity"]["value"]
    browser = Browser(spec, 320)
    for chosen, expected in ((True, edges.MARKER_OPACITY), (False, faded)):
        names = browser.names(Z[0])
        names["datum"].chosen = chosen
        assert evaluate(edge["encoding"]["opacity"]["value"]["expr"], **names) == expected


def test_edge_points_for_fixed_ranges_sit_inside_them_on_the_line_to_each_point():
    Z = bulk_and_far_points()
    ranges = axes.bulk_ranges([Z])
    rows, drawn, headings = edges.edge_points(Z, ranges)
    (x0, x1), (y0, y1) = ranges
    outside = (Z[:, 0] < x0) | (Z[:, 0] > x1) | (Z[:, 1] < y0) | (Z[:, 1] > y1)
    np.testing.assert_array_equal(rows, np.flatnonzero(outside))
    assert (
        (drawn[:, 0] > x0).all()
        and (drawn[:, 0] < x1).all()
        and (drawn[:, 1] > y0).all()
        and (drawn[:, 1] < y1).all()
    )
    middle = np.array([(x0 + x1) / 2, (y0 + y1) / 2])
    away, along = Z[rows] - middle, drawn - middle
    cross = away[:, 0] * along[:, 1] - away[:, 1] * along[:, 0]
    np.testing.assert_allclose(cross, 0, atol=1e-9 * np.abs(away).max() ** 2)
    assert (np.einsum("ij,ij->i", away, along) > 0).all()
    np.testing.assert_allclose(headings, np.degrees(np.arctan2(away[:, 0], away[:, 1])))


def test_the_replay_fits_its_axes_to_the_bulk_and_draws_every_frames_far_points_on_the_edge():
    from nca_core.plots import replay
    from tests.plots.snapshots import snap

    Z = bulk_and_far_points(n=1500)
    frames = [(Z * (0.5 + 0.05 * e)).astype(np.float32) for e in range(11)]  # as snapshots hold them
    y = np.arange(len(Z)) % 3
    fig = replay.animation([snap(e, f) for e, f in enumerate(frames)], y, CLASSES)
    ranges = axes.bulk_ranges(frames)
    assert list(fig.layout.xaxis.range) == ranges[0] and list(fig.layout.yaxis.range) == ranges[1]
    assert fig.layout.xaxis.constrain == fig.layout.yaxis.constrain == "domain"  # the plot shows just them
    for frame, drawn in zip(frames, fig.frames):
        *points, edge = drawn.data
        assert [t.name for t in points] == CLASSES and edge.name == "past the edge"
        rows, where, headings = edges.edge_points(frame, ranges)
        assert set(rows) >= set(range(12))  # every far point
        np.testing.assert_allclose(np.column_stack([edge.x, edge.y]), where, rtol=1e-6)
        np.testing.assert_allclose(edge.marker.angle, headings)
        np.testing.assert_allclose(edge.customdata, frame[rows], rtol=1e-6)
    assert len(fig.data) == len(CLASSES) + 1  # the figure opens with a frame's traces, the edge's too
