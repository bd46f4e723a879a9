import numpy as np
import pytest

from nca_core.plots import axes, colours, figures, replay


def test_scatter_has_one_trace_per_class_in_class_order_and_colour(run):
    snaps, y = run
    fig = figures.embedding_scatter(snaps[0].embedding, y, ["a", "b", "c"], ranges=[[-1, 1], [-2, 2]])
    assert [t.name for t in fig.data] == ["a", "b", "c"]
    assert [t.marker.color for t in fig.data] == colours.class_colors(3)
    assert list(fig.layout.xaxis.range) == [-1, 1] and fig.layout.uirevision == "embedding"
    np.testing.assert_array_equal(fig.data[1].customdata, np.arange(20, 40))


def test_three_columns_give_a_3d_scatter(rng):
    fig = figures.embedding_scatter(rng.normal(size=(10, 3)), np.zeros(10, int), ["only"])
    assert fig.data[0].type == "scatter3d"


def test_heatmap_and_images(rng):
    A = rng.normal(size=(3, 16))
    heat = figures.map_heatmap(A)
    assert heat.data[0].z.shape == (3, 16) and heat.data[0].zmid == 0
    grid = figures.component_images(A, (4, 4))
    assert len(grid.data) == 3 and np.asarray(grid.data[0].z).shape == (4, 4)


def test_neighbour_links_draw_only_likely_neighbours(rng):
    Z = rng.normal(size=(30, 2))
    y = np.arange(30) % 3
    p = np.zeros(30)
    p[[1, 2, 3]] = [0.7, 0.2, 0.1]
    fig = figures.neighbour_links(Z, y, ["a", "b", "c"], 0, p, title="t", min_probability=0.15)
    lines = [t for t in fig.data if t.mode == "lines"]
    assert len(lines) == 2  # p = 0.1 is below the threshold
    assert lines[0].line.width > lines[1].line.width


def test_line_widths_are_proportional_to_p_ij_and_at_least_a_pixel():
    widest = figures.LINK_WIDEST
    widths = figures.link_widths(np.array([0.0, 0.5, 0.25, 0.4, 0.01]))
    assert widths.tolist() == pytest.approx([1.0, widest, widest / 2, widest * 0.8, 1.0])
    assert figures.link_widths(np.zeros(3)).tolist() == [1.0, 1.0, 1.0]


def test_every_2d_embedding_uses_one_scale_for_both_axes(run):
    snaps, y = run
    classes = ["a", "b", "c"]
    figs = [
        figures.embedding_scatter(snaps[0].embedding, y, classes),
        figures.embedding_scatter(snaps[0].embedding, y, classes, ranges=[[-1, 1], [-8, 8]]),
        replay.animation(snaps, y, classes),
        figures.neighbour_links(snaps[0].embedding, y, classes, 0, np.full(60, 0.1)),
    ]
    for fig in figs:
        assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
        assert fig.layout.xaxis.automargin and fig.layout.yaxis.automargin  # tick labels not clipped


def test_3d_views_orbit_on_drag_and_start_face_on_to_a_flat_structure(rng):
    t = rng.uniform(0, 2 * np.pi, 200)
    flat = np.c_[np.cos(t), np.zeros(200), np.sin(t)] * 5 + rng.normal(size=(200, 3)) * 0.01
    fig = figures.embedding_scatter(flat, np.zeros(200, int), ["ring"], ranges=axes.padded_ranges([flat]))
    scene = fig.layout.scene
    assert scene.dragmode == "turntable"
    eye = np.array([scene.camera.eye.x, scene.camera.eye.y, scene.camera.eye.z])
    # the ring lies in the x-z plane: the eye looks mostly along y, so it is seen face-on
    assert abs(eye[1]) / np.linalg.norm(eye) > 0.8
    assert scene.aspectmode == "manual" and scene.aspectratio.y < 0.1  # one scale on every axis


def test_rows_of_a_are_drawn_with_square_pixels(rng):
    grid = figures.component_images(rng.normal(size=(2, 256)), (16, 16))
    assert grid.layout.yaxis.scaleanchor == "x" and grid.layout.yaxis2.scaleanchor == "x2"


def test_colour_words_match_the_figures():
    import plotly.colors

    top = plotly.colors.get_colorscale(colours.DIVERGING_COLORSCALE)[-1][1]
    red, _, blue = plotly.colors.unlabel_rgb(plotly.colors.convert_colors_to_same_type(top)[0][0])
    assert (colours.DIVERGING_WORDS["positive"] == "blue") == (blue > red)
    fig = figures.neighbour_links(np.eye(3, 2), np.array([0, 0, 1]), ["a", "b"], 0, np.array([0, 0.5, 0.5]))
    lines = [t.line.color for t in fig.data if t.mode == "lines"]
    assert lines == [colours.SAME_CLASS_LINE[0], colours.OTHER_CLASS_LINE[0]]


def test_hover_text_names_the_class_over_the_text_with_short_coordinates():
    Z = np.array([[0.123456789, 1.0], [2.0, 3.0]])
    fig = figures.embedding_scatter(
        Z, np.array([0, 1]), ["cultivar 1", "cultivar 2"], hover_text=["#7", "#9"]
    )
    assert list(fig.data[1].text) == ["#9"]
    assert fig.data[0].hovertemplate == "<b>cultivar 1</b><br>%{text}<br>(%{x:.3g}, %{y:.3g})<extra></extra>"


def test_an_image_grid_makes_room_for_two_line_titles():
    """The Inspect tab's first title ("chosen" over "#46476: 5") was clipped on one line."""
    from nca_core.plots.figures import image_grid

    images = np.zeros((3, 4))
    one = image_grid(images, (2, 2), ["a", "b", "c"])
    two = image_grid(images, (2, 2), ["chosen<br>#1: 5", "#2: 5", "#3: 4"])
    assert two.layout.margin.t > one.layout.margin.t
    assert two.layout.height - one.layout.height == two.layout.margin.t - one.layout.margin.t
    assert two.layout.annotations[0].text == "chosen<br>#1: 5"


def test_class_k_has_shape_k_in_2d_and_in_3d_and_a_hollow_one_a_rim_that_shows(rng):
    y = np.arange(11)
    flat = figures.embedding_scatter(rng.normal(size=(11, 2)), y, [str(k) for k in y])
    assert [t.marker.symbol for t in flat.data] == [s.plotly for s in colours.class_shapes(11)]
    assert [t.marker.color for t in flat.data] == colours.class_colors(11)
    hollow = [t for t, s in zip(flat.data, colours.class_shapes(11)) if s.hole]
    assert hollow and all(t.marker.line.width >= 1.5 for t in hollow)
    deep = figures.embedding_scatter(rng.normal(size=(11, 3)), y, [str(k) for k in y])
    assert [t.marker.symbol for t in deep.data] == [s.plotly_3d for s in colours.class_shapes(11)]


def test_a_clicked_points_figure_draws_each_class_in_its_shape(rng):
    y = np.arange(12) % 4
    fig = figures.neighbour_links(rng.normal(size=(12, 2)), y, list("abcd"), 0, np.full(12, 1 / 11))
    classes = [t for t in fig.data if t.name in list("abcd")]
    assert [t.marker.symbol for t in classes] == [s.plotly for s in colours.class_shapes(4)]


def test_every_figure_the_app_draws_has_a_title_a_screen_reader_meets_first(rng, run):
    """A Plotly figure has no accessible name of its own: its title is its first words."""
    from nca_core.plots import epoch_grid

    snaps, y = run
    A = rng.normal(size=(2, 16))
    drawn = {
        "heatmap": figures.map_heatmap(A),
        "rows of A": figures.component_images(A, (4, 4)),
        "pictures": figures.image_grid(A, (4, 4), ["a", "b"], title="the chosen point and its picks"),
        "3-D": figures.embedding_scatter(rng.normal(size=(6, 3)), np.arange(6) % 2, ["a", "b"], title="3-D"),
        "replay": replay.animation(snaps, y, ["a", "b", "c"], title="NCA on rings"),
        "epochs": epoch_grid.epoch_grid(snaps[:2], y, ["a", "b", "c"], title="NCA on rings"),
    }
    for name, fig in drawn.items():
        assert fig.layout.title.text, name
    assert figures.image_grid(A, (4, 4), ["a", "b"]).layout.title.text is None  # only when asked
