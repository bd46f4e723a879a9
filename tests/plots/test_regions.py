"""k-NN decision regions as one picture (nca_core/plots/regions.py)."""

import base64
import io

import numpy as np
import pytest
from PIL import Image

from nca_core.plots.colours import class_colors
from nca_core.plots.regions import decision_regions, region_box


@pytest.mark.parametrize("ranges", [[[-10.0, 10.0], [-10.0, 10.0]], [[0.0, 40.0], [-1.0, 1.0]], [[-1.0, 1.0], [0.0, 30.0]]])
@pytest.mark.parametrize("width", [300, 640, 1600])
@pytest.mark.parametrize("height", [360, 400, 900])
def test_region_box_covers_what_a_one_scale_chart_shows_at_any_width_and_height(ranges, width, height):
    (x0, x1), (y0, y1) = ranges
    per_pixel = max((x1 - x0) / width, (y1 - y0) / height)  # as embedding_spec's domains
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    (bx0, bx1), (by0, by1) = region_box(ranges, (360, 900))
    assert bx0 <= cx - per_pixel * width / 2 + 1e-9 and bx1 >= cx + per_pixel * width / 2 - 1e-9
    assert by0 <= cy - per_pixel * height / 2 + 1e-9 and by1 >= cy + per_pixel * height / 2 - 1e-9


@pytest.mark.parametrize("ranges", [[[-10.0, 10.0], [-10.0, 10.0]], [[0.0, 40.0], [-1.0, 1.0]]])
@pytest.mark.parametrize("heights", [(400,), (360, 900)])
def test_region_box_is_no_larger_than_the_widest_and_narrowest_charts_show(ranges, heights):
    """Pixels outside every chart's view are wasted: the box is exactly the union."""
    (x0, x1), (y0, y1) = ranges

    def shown(width, height):
        per_pixel = max((x1 - x0) / width, (y1 - y0) / height)
        return per_pixel * width, per_pixel * height

    sizes = [(w, h) for w in (300, 1600) for h in heights]
    (bx0, bx1), (by0, by1) = region_box(ranges, heights)
    assert bx1 - bx0 == pytest.approx(max(shown(w, h)[0] for w, h in sizes))
    assert by1 - by0 == pytest.approx(max(shown(w, h)[1] for w, h in sizes))


def test_points_that_are_not_finite_do_not_vote_and_none_finite_gives_no_regions():
    Z = np.array([[-2.0, 0.0], [np.nan, 0.0], [2.0, 0.0], [np.inf, 1.0]])
    y = np.array([0, 1, 1, 0])
    regions = decision_regions(Z, y, 2, [[-3.0, 3.0], [-1.0, 1.0]], k=1, pixels=60)
    assert (regions.votes[:, 0] == 0).all() and (regions.votes[:, -1] == 1).all()
    assert decision_regions(np.full((3, 2), np.nan), np.zeros(3, int), 1, [[0.0, 1.0], [0.0, 1.0]]) is None


def test_regions_are_the_k_nn_vote_at_each_cell_with_the_top_row_highest():
    rng = np.random.default_rng(0)
    Z = np.concatenate([rng.normal([0, 5], 1, (30, 2)), rng.normal([0, -5], 1, (30, 2))]).astype(np.float32)
    y = np.repeat([1, 0], 30)  # class 1 above, class 0 below
    box = [[-8.0, 8.0], [-10.0, 10.0]]
    regions = decision_regions(Z, y, 2, box, k=3, pixels=400)
    rows, columns = regions.votes.shape
    assert rows * columns == pytest.approx(400, rel=0.2) and rows > columns  # square cells
    assert (regions.votes[0] == 1).all() and (regions.votes[-1] == 0).all()
    # every cell against a float64 brute-force vote at its centre
    xs = -8.0 + (np.arange(columns) + 0.5) * 16.0 / columns
    ys = 10.0 - (np.arange(rows) + 0.5) * 20.0 / rows
    centres = np.stack(np.meshgrid(xs, ys), -1).reshape(-1, 2)
    d = ((centres[:, None, :] - Z.astype(np.float64)[None]) ** 2).sum(-1)
    nearest = np.argsort(d, axis=1, kind="stable")[:, :3]
    expected = (y[nearest].sum(1) >= 2).astype(int)
    np.testing.assert_array_equal(regions.votes.ravel(), expected)
    picture = Image.open(io.BytesIO(base64.b64decode(regions.url.split(",", 1)[1])))
    assert picture.size == (columns, rows)
    colours = [tuple(int(h[i : i + 2], 16) for i in (1, 3, 5)) for h in class_colors(2)]
    assert picture.convert("RGB").getpixel((0, 0)) == colours[1] and picture.convert("RGB").getpixel((0, rows - 1)) == colours[0]
