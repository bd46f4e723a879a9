"""Each class's shape (``colours.SHAPES``): one declaration that every library can draw."""

import itertools
import math
import re

import plotly.graph_objects as go
import pytest

from nca_core.plots import colours

VEGA_NAMES = {"circle", "square", "cross", "diamond", "triangle-up", "triangle-down"}


def test_the_first_ten_classes_have_ten_shapes_and_no_two_of_110_classes_look_alike():
    shapes = colours.class_shapes(10)
    assert len({s.name for s in shapes}) == len({s.plotly for s in shapes}) == len({s.vega for s in shapes}) == 10
    looks = list(zip(colours.class_colors(110), [s.name for s in colours.class_shapes(110)]))
    assert len(set(looks)) == 110
    eleventh = colours.class_shapes(11)[10]
    assert colours.class_colors(11)[10] == colours.class_colors(11)[0] and eleventh != colours.SHAPES[0]


def test_the_first_eight_classes_have_eight_shapes_in_3d_the_most_plotly_draws_there():
    assert len({s.plotly_3d for s in colours.class_shapes(8)}) == 8


@pytest.mark.parametrize("shape", colours.SHAPES, ids=lambda s: s.name)
def test_plotly_knows_each_shapes_symbols(shape):
    """Plotly's validators reject a symbol they do not draw (in 3-D, all but eight)."""
    assert go.scatter.Marker(symbol=shape.plotly).symbol == shape.plotly
    assert go.scatter3d.Marker(symbol=shape.plotly_3d).symbol == shape.plotly_3d


@pytest.mark.parametrize("shape", colours.SHAPES, ids=lambda s: s.name)
def test_each_vega_shape_is_a_name_vega_knows_or_a_path_about_its_box(shape):
    """Vega-Lite scales a path's box [-1, 1] to the mark's size; the star reaches a little
    past it, to weigh about as much as the others."""
    if shape.vega in VEGA_NAMES:
        assert not shape.hole
        return
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", shape.vega)]
    assert numbers and max(abs(n) for n in numbers) <= 1.3
    assert shape.vega.count("M") == (2 if shape.hole else 1)  # a hollow shape's hole is a second path


@pytest.mark.parametrize("shape", [s for s in colours.SHAPES if s.hole and s.outline], ids=lambda s: s.name)
def test_a_hollow_shapes_hole_winds_the_other_way_so_that_it_stays_empty(shape):
    outer, inner = (re.findall(r"(-?[\d.]+),(-?[\d.]+)", part) for part in shape.vega.split("M")[1:])

    def signed_area(points):
        xy = [(float(x), float(y)) for x, y in points]
        return sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in itertools.pairwise([*xy, xy[0]])) / 2

    assert signed_area(outer) * signed_area(inner) < 0
    assert abs(signed_area(inner)) == pytest.approx(shape.hole**2 * abs(signed_area(outer)))


def outline_area(shape) -> float:
    """The area a shape covers in its box (shoelace), its hole left out; a circle's is pi."""
    if not shape.outline:
        return math.pi * (1 - shape.hole**2)
    xy = [*shape.outline, shape.outline[0]]
    area = abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in itertools.pairwise(xy))) / 2
    return area * (1 - shape.hole**2)


@pytest.mark.parametrize("shape", [s for s in colours.SHAPES if not s.hole], ids=lambda s: s.name)
def test_no_filled_shape_is_a_speck_beside_a_circle(shape):
    """At a few pixels across, a shape with half a circle's ink or less (a thin star) reads
    as a dot."""
    assert outline_area(shape) > 0.5 * math.pi


def test_a_drawn_point_is_at_least_seven_pixels_across():
    from nca_core.plots import live_charts

    assert math.sqrt(live_charts.POINT_AREA) >= 7
