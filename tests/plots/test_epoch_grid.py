"""Epochs side by side: the chosen frames, one scale for every panel and both axes."""

from __future__ import annotations

import numpy as np
import pytest

from nca_core.plots.epoch_grid import chosen_frames, epoch_grid
from nca_core.training.loop import Snapshot


def frame(epoch: int, Z: np.ndarray, fraction: float = 1.0, test: float | None = None) -> Snapshot:
    return Snapshot(epoch, 0.5, 0.1 * epoch, None, Z.astype(np.float32), None, test, None, fraction)


def test_the_chosen_epochs_that_were_reached_and_the_last_frame_each_once():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(6, 2))
    frames = [frame(0, Z), frame(1, Z, 0.5), frame(1, Z), frame(2, Z), frame(3, Z), frame(4, Z, 0.25)]
    chosen = chosen_frames(frames, epochs=(0, 1, 2, 5, 10))
    assert [(f.epoch, f.fraction) for f in chosen] == [(0, 1.0), (1, 1.0), (2, 1.0), (4, 0.25)]
    assert chosen_frames(frames[:4], epochs=(0, 2))[-1] is frames[3]  # the last is epoch 2: once
    assert len(chosen_frames(frames[:4], epochs=(0, 2))) == 2


def test_every_panel_has_one_scale_that_holds_the_growing_map():
    """A learnt map grows: the last frame spans ten times the start's. Every panel shares the
    same ranges, and each panel's y axis is anchored to its x axis at ratio 1."""
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(3), 20)
    start = rng.normal(size=(60, 2))
    frames = [frame(0, start, test=0.4), frame(1, 3 * start), frame(10, 10 * start + 100, test=0.9)]
    fig = epoch_grid(frames, y, ["a", "b", "c"], columns=2)
    layout = fig.to_plotly_json()["layout"]
    xs = [layout[k]["range"] for k in sorted(layout) if k.startswith("xaxis") and "range" in layout[k]]
    ys = [layout[k]["range"] for k in sorted(layout) if k.startswith("yaxis") and "range" in layout[k]]
    assert len(xs) == len(ys) == 3 and all(r == xs[0] for r in xs) and all(r == ys[0] for r in ys)
    last = 10 * start + 100
    assert xs[0][0] <= np.quantile(last[:, 0], 0.05) and xs[0][1] >= np.quantile(last[:, 0], 0.95)
    assert layout["yaxis2"]["scaleanchor"] == "x2" and layout["yaxis2"]["scaleratio"] == 1
    titles = [a["text"] for a in layout["annotations"]]
    assert titles == ["start · test kNN 40%", "epoch 1", "epoch 10 · test kNN 90%"]
    points = [t for t in fig.data if t.xaxis == "x3"]
    assert sum(len(t.x) for t in points) == 60 and [t.showlegend for t in fig.data[:3]] == [True] * 3
    assert not any(t.showlegend for t in fig.data[3:])


def test_a_grid_of_nothing_or_of_a_line_says_why():
    with pytest.raises(ValueError, match="no frames"):
        epoch_grid([], np.zeros(0), [])
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        epoch_grid([frame(0, np.zeros((3, 1)))], np.zeros(3, dtype=int), ["a"])


def test_each_class_has_its_shape_in_every_panel_and_a_legible_one_in_the_legend():
    from nca_core.plots.colours import class_shapes

    Z = np.random.default_rng(2).normal(size=(9, 2))
    fig = epoch_grid([frame(0, Z), frame(1, Z)], np.arange(9) % 3, ["a", "b", "c"])
    shapes = [s.plotly for s in class_shapes(3)]
    assert [t.marker.symbol for t in fig.data] == shapes * 2
    assert fig.layout.legend.itemsizing == "constant"  # the panels' markers are a few pixels


def _colour_extent(image: np.ndarray, box, rgb) -> tuple[int, int]:
    """The width and height, in pixels, of where ``rgb`` is drawn inside ``box``."""
    left, top, right, bottom = box
    inside = (image[top + 1 : bottom, left + 1 : right] == rgb).all(-1)
    rows, cols = np.nonzero(inside)
    return (0, 0) if not len(rows) else (int(cols.max() - cols.min()), int(rows.max() - rows.min()))


def test_the_png_for_slides_has_a_panel_per_frame_on_one_scale_and_a_legend():
    """One PNG: its size is the layout's, every panel shows every class in its colour, a
    map ten times wider is drawn ten times wider (one scale for all panels), and the
    legend under the panels has each class's colour."""
    import io

    from PIL import Image

    from nca_core.plots.colours import class_colors
    from nca_core.plots.epoch_png import epoch_grid_png, grid_layout, panel_caption

    rng = np.random.default_rng(3)
    y = np.repeat(np.arange(3), 30)
    start = rng.normal(size=(90, 2)) * 0.3 + np.array([[0, 0], [1, 0], [0, 1]])[y]
    frames = [frame(0, start, test=0.4), frame(1, 4 * start), frame(5, 10 * start, test=0.9), frame(6, 10 * start)]
    classes = ["a", "b", "c"]
    png = epoch_grid_png(frames, y, classes, columns=3, title="NCA on three blobs", k=5, width=1200)
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    layout = grid_layout(4, classes, columns=3, width=1200)
    assert image.size == layout.size and image.size[0] == 1200
    assert len(layout.boxes) == 4 and layout.boxes[3][1] > layout.boxes[0][3]  # two rows
    pixels = np.asarray(image.convert("RGB"))
    colours = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in class_colors(3)]
    extents = [[_colour_extent(pixels, box, rgb) for rgb in colours] for box in layout.boxes]
    assert all(w > 0 and h > 0 for panel in extents for w, h in panel)  # every class in every panel
    for c in range(3):
        small, large = extents[0][c][0], extents[2][c][0]
        assert 6 < large / max(small, 1) < 14  # ten times wider, on one scale
        assert extents[2][c] == extents[3][c]  # the same map is drawn the same
    legend = pixels[layout.legend_top :]
    assert all((legend == rgb).all(-1).any() for rgb in colours)
    assert panel_caption(frames[0], 5) == "start · test 5-NN 40%"
    assert panel_caption(frames[2]) == "epoch 5 · test kNN 90%"


def test_the_png_says_why_it_cannot_draw():
    from nca_core.plots.epoch_png import epoch_grid_png

    with pytest.raises(ValueError, match="no frames"):
        epoch_grid_png([], np.zeros(0), [])
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        epoch_grid_png([frame(0, np.zeros((3, 1)))], np.zeros(3, dtype=int), ["a"])


def test_maps_of_the_same_points_are_drawn_as_epochs_are_under_their_own_captions():
    """PCA, LDA and NCA side by side (the gallery's wine figure): the panels an epoch grid
    draws, captioned with the maps' names, each caption once per panel."""
    from nca_core.plots.epoch_png import epoch_grid_png, panel_caption, panels_png

    rng = np.random.default_rng(4)
    y = np.repeat(np.arange(2), 10)
    frames = [frame(0, rng.normal(size=(20, 2))), frame(3, 3 * rng.normal(size=(20, 2)), test=0.75)]
    captions = [panel_caption(f, 5) for f in frames]
    drawn = panels_png([f.embedding for f in frames], y, ["a", "b"], captions, title="t", width=800)
    assert drawn == epoch_grid_png(frames, y, ["a", "b"], title="t", k=5, width=800)
    renamed = panels_png([f.embedding for f in frames], y, ["a", "b"], ["PCA 2-D", "NCA 2-D"], width=800)
    assert renamed != panels_png([f.embedding for f in frames], y, ["a", "b"], captions, width=800)
    with pytest.raises(ValueError, match="2 panels and 1 captions"):
        panels_png([f.embedding for f in frames], y, ["a", "b"], ["PCA 2-D"])


def test_maps_of_different_sizes_each_fill_their_panel_on_scales_of_their_own():
    """A network's map ten times smaller than the linear one's: on one scale it is a dot, on
    its own scale it fills its panel as the other does."""
    import io

    from PIL import Image

    from nca_core.plots.colours import class_colors
    from nca_core.plots.epoch_png import grid_layout, panels_png

    rng = np.random.default_rng(5)
    y = np.repeat(np.arange(2), 40)
    Z = rng.normal(size=(80, 2)) + np.array([[0, 0], [3, 0]])[y]
    rgb = tuple(int(class_colors(2)[0][i : i + 2], 16) for i in (1, 3, 5))
    widths = {}
    for one_scale in (True, False):
        png = panels_png([Z, Z / 10], y, ["a", "b"], ["linear", "deep"], columns=2, width=1000, one_scale=one_scale)
        pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
        boxes = grid_layout(2, ["a", "b"], columns=2, width=1000, gap=40 if one_scale else 90).boxes
        widths[one_scale] = [_colour_extent(pixels, box, rgb)[0] for box in boxes]
    assert widths[True][1] < widths[True][0] / 5
    assert 0.8 < widths[False][1] / widths[False][0] < 1.25
