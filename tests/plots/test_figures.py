import dataclasses

import numpy as np
import pytest

from nca_core.plots import figures
from nca_core.training.loop import Snapshot


def snap(epoch, Z):
    return Snapshot(epoch, 0.5 + epoch / 100, float(epoch), np.eye(2, 3), Z.astype(np.float32))


@pytest.fixture
def run(rng):
    y = np.repeat([0, 1, 2], 20)
    return [snap(e, rng.normal(size=(60, 2)) * (1 + e)) for e in range(5)], y


def test_scatter_has_one_trace_per_class_in_class_order_and_colour(run):
    snaps, y = run
    fig = figures.embedding_scatter(snaps[0].embedding, y, ["a", "b", "c"], ranges=[[-1, 1], [-2, 2]])
    assert [t.name for t in fig.data] == ["a", "b", "c"]
    assert [t.marker.color for t in fig.data] == figures.class_colors(3)
    assert list(fig.layout.xaxis.range) == [-1, 1] and fig.layout.uirevision == "embedding"
    np.testing.assert_array_equal(fig.data[1].customdata, np.arange(20, 40))


def test_three_columns_give_a_3d_scatter(rng):
    fig = figures.embedding_scatter(rng.normal(size=(10, 3)), np.zeros(10, int), ["only"])
    assert fig.data[0].type == "scatter3d"


def test_padded_ranges_cover_every_frame(run):
    snaps, _ = run
    ranges = figures.padded_ranges([s.embedding for s in snaps])
    everything = np.concatenate([s.embedding for s in snaps])
    assert ranges[0][0] < everything[:, 0].min() and ranges[0][1] > everything[:, 0].max()


def test_animation_caps_frames_and_fixes_axes(rng):
    y = np.repeat([0, 1], 10)
    snaps = [snap(e, rng.normal(size=(20, 2))) for e in range(250)]
    fig = figures.animation(snaps, y, ["a", "b"], max_frames=100)
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
    assert len(fig.frames) == 100
    assert fig.frames[0].name == "0" and fig.frames[-1].name == "249"
    assert fig.layout.xaxis.range is not None
    steps = fig.layout.sliders[0].steps
    assert len(steps) == 100 and list(steps[0].args[0]) == ["0"] and list(steps[-1].args[0]) == ["249"]
    shown = [step.label for step in steps if step.label]  # readable: not a smear of 100 numbers
    assert shown[0] == "0" and 5 <= len(shown) <= figures.SLIDER_TICK_LABELS
    labels = [b.label for b in fig.layout.updatemenus[0].buttons]
    assert labels == ["▶ Play", "❚❚ Pause", "slow", "fast"]
    # points keep their identity: the same customdata per class in every frame
    assert all(np.array_equal(f.data[0].customdata, fig.data[0].customdata) for f in fig.frames)


def test_animation_html_is_standalone(run):
    snaps, y = run
    html = figures.animation(snaps, y, ["a", "b", "c"]).to_html(include_plotlyjs=True)
    assert "Plotly.newPlot" in html
    assert 'src="http' not in html  # plotly.js is inlined, so the file plays offline
    assert len(html) > 1_000_000


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


def test_steady_ranges_contain_the_data_on_grid_lines_and_ignore_small_moves(run):
    snaps, _ = run
    arrays = [s.embedding for s in snaps]
    padded = figures.padded_ranges(arrays)
    steady = figures.steady_ranges(arrays)
    for (plo, phi), (slo, shi) in zip(padded, steady):
        assert slo <= plo and shi >= phi
        step = figures._grid_step(phi - plo)
        assert (shi - slo) / step <= 10
        assert slo / step == pytest.approx(round(slo / step)) and shi / step == pytest.approx(
            round(shi / step)
        )


def test_steady_ranges_hold_still_until_a_point_crosses_a_grid_line():
    frame = np.array([[-14.0, -1.0], [14.0, 1.0]])  # a span of 28: a grid of 5
    assert figures.steady_ranges([frame], pad=0.0) == [[-15.0, 15.0], [-1.0, 1.0]]
    grown = frame * [1.05, 1.0]  # 14.7: still inside the grid line at 15
    assert figures.steady_ranges([frame, grown], pad=0.0) == [[-15.0, 15.0], [-1.0, 1.0]]
    crossed = frame * [1.1, 1.0]  # 15.4 crosses it
    assert figures.steady_ranges([frame, crossed], pad=0.0) == [[-20.0, 20.0], [-1.0, 1.0]]


def test_settled_ranges_move_in_few_steps_while_a_run_spreads_and_refit_when_it_gathers():
    base = np.array([[-14.0, -5.0], [14.0, 5.0]])
    spreading = [base * (1 + 0.02 * e) for e in range(60)]  # doubles, 2% a frame

    def changes(frames) -> int:
        return len({repr(figures.settled_ranges(frames[: e + 1])) for e in range(len(frames))})

    assert changes(spreading) <= 2 < changes_of_steady(spreading)
    for e in range(60):  # every frame inside its axes, off their edges, and not lost in a corner
        (x0, x1), (y0, y1) = figures.settled_ranges(spreading[: e + 1])
        (a0, b0), (a1, b1) = spreading[e]
        dx, dy = 0.015 * (x1 - x0), 0.015 * (y1 - y0)  # a point on the edge is drawn half cut off
        assert x0 + dx <= a0 and x1 - dx >= a1 and y0 + dy <= b0 and y1 - dy >= b1, e
        assert max((a1 - a0) / (x1 - x0), (b1 - b0) / (y1 - y0)) >= 0.4
    gathered = [base * 3, base * 3, base]  # a run that first spreads, then gathers
    assert figures.settled_ranges(gathered) == figures.settled_ranges([base])
    assert figures.settled_ranges(gathered[:2]) != figures.settled_ranges([base])


def changes_of_steady(frames) -> int:
    return len({repr(figures.steady_ranges(frames[: e + 1])) for e in range(len(frames))})


def test_settled_ranges_ignore_non_finite_points_and_survive_a_single_point():
    frame = np.array([[0.0, 1.0], [np.nan, 2.0], [2.0, np.inf], [1.0, 3.0]])
    (x0, x1), (y0, y1) = figures.settled_ranges([frame])  # rows with a NaN or inf left out
    assert x0 <= 0.0 and 1.0 <= x1 < 2.0 and y0 <= 1.0 and 3.0 <= y1 and np.isfinite([x0, x1, y0, y1]).all()
    (x0, x1), (y0, y1) = figures.settled_ranges([np.array([[3.0, 0.0]])])
    assert x0 < 3.0 < x1 and x1 - x0 >= 1.0 and y0 < 0.0 < y1 and y1 - y0 >= 1.0


def test_grid_step_is_one_two_or_five_times_a_power_of_ten():
    assert figures._grid_step(37.0) == 5.0
    assert figures._grid_step(12.0) == 2.0
    assert figures._grid_step(4.0) == 1.0
    assert figures._grid_step(0.3) == pytest.approx(0.05)


def test_every_2d_embedding_uses_one_scale_for_both_axes(run):
    snaps, y = run
    classes = ["a", "b", "c"]
    figs = [
        figures.embedding_scatter(snaps[0].embedding, y, classes),
        figures.embedding_scatter(snaps[0].embedding, y, classes, ranges=[[-1, 1], [-8, 8]]),
        figures.animation(snaps, y, classes),
        figures.neighbour_links(snaps[0].embedding, y, classes, 0, np.full(60, 0.1)),
    ]
    for fig in figs:
        assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
        assert fig.layout.xaxis.automargin and fig.layout.yaxis.automargin  # tick labels not clipped


def test_replay_title_follows_the_frames_and_names_the_run(run):
    snaps, y = run
    fig = figures.animation(snaps, y, ["a", "b", "c"], title="NCA on rings")
    assert fig.layout.title.text == "NCA on rings<br>epoch 0   objective 0.5000"
    assert fig.frames[3].layout.title.text == "NCA on rings<br>epoch 3   objective 0.5300"
    # plotly.js only applies a frame's layout (the title) when the frame is redrawn
    steps = fig.layout.sliders[0].steps
    assert all(step.args[1]["frame"]["redraw"] for step in steps)
    assert all(b.args[1]["frame"]["redraw"] for b in fig.layout.updatemenus[0].buttons if b.args[0] is None)


def test_replay_controls_do_not_overlap():
    """The buttons sit in a row above a full-width slider (at 1024 px they overlapped)."""
    y = np.zeros(5, int)
    fig = figures.animation([snap(e, np.ones((5, 2)) * e) for e in range(3)], y, ["a"])
    buttons, slider = fig.layout.updatemenus[0], fig.layout.sliders[0]
    assert slider.x == 0 and slider.len == 1
    assert slider.pad.t > buttons.pad.t + 30  # the slider starts below the row of buttons
    assert fig.layout.margin.b >= 100


def test_3d_views_orbit_on_drag_and_start_face_on_to_a_flat_structure(rng):
    t = rng.uniform(0, 2 * np.pi, 200)
    flat = np.c_[np.cos(t), np.zeros(200), np.sin(t)] * 5 + rng.normal(size=(200, 3)) * 0.01
    fig = figures.embedding_scatter(flat, np.zeros(200, int), ["ring"], ranges=figures.padded_ranges([flat]))
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

    top = plotly.colors.get_colorscale(figures.DIVERGING_COLORSCALE)[-1][1]
    red, _, blue = plotly.colors.unlabel_rgb(plotly.colors.convert_colors_to_same_type(top)[0][0])
    assert (figures.DIVERGING_WORDS["positive"] == "blue") == (blue > red)
    fig = figures.neighbour_links(np.eye(3, 2), np.array([0, 0, 1]), ["a", "b"], 0, np.array([0, 0.5, 0.5]))
    lines = [t.line.color for t in fig.data if t.mode == "lines"]
    assert lines == [figures.SAME_CLASS_LINE[0], figures.OTHER_CLASS_LINE[0]]


# --- search_cost_chart ------------------------------------------------------------------------


def test_search_cost_chart_groups_index_kinds_and_labels_ratios_to_the_first():
    from nca_core.search.costs import SearchCost

    costs = [
        SearchCost("raw 64-D", 64, 0.02, 0.8, 3_000_000),
        SearchCost("raw 64-D", 64, 0.021, 0.2, 4_000_000, "hnsw", 1.5),
        SearchCost("NCA 8-D", 8, 0.03, 0.1, 375_000),
        SearchCost("NCA 8-D", 8, 0.03, 0.05, 1_500_000, "hnsw", 0.5),
    ]
    fig = figures.search_cost_chart(costs)
    assert [a.text for a in fig.layout.annotations] == ["query time (s)", "index size (MB)", "test error (%)"]
    assert len(fig.data) == 6 and fig.layout.barmode == "group"
    exact_time, exact_size, exact_error, hnsw_time, hnsw_size, _ = fig.data
    assert [t.name for t in fig.data if t.showlegend] == ["exact", "HNSW graph"]
    assert list(exact_time.x) == list(hnsw_time.x) == ["raw 64-D", "NCA 8-D"]
    assert list(exact_time.y) == [0.8, 0.1] and list(exact_time.hovertext) == ["reference", "8.0x faster"]
    assert list(hnsw_time.hovertext) == ["4.0x faster", "16.0x faster"]
    assert list(hnsw_size.hovertext) == ["1.3x larger", "2.0x smaller"]  # 4 MB and 1.5 MB against 3 MB
    assert list(exact_size.y) == [3.0, 0.375] and list(exact_error.text) == ["2.00%", "3.00%"]
    assert exact_time.text is None and exact_size.text is None
    assert (exact_time.xaxis, exact_size.xaxis, exact_error.xaxis) == ("x", "x2", "x3")
    assert exact_error.textposition == "inside" and fig.layout.uniformtext.mode == "hide"  # never two in one
    assert exact_time.hovertemplate == "%{x}: %{y:.3g} s<br>%{hovertext}"
    assert exact_error.hovertemplate == "%{x}: %{y:.2f}%"


def test_search_cost_chart_draws_no_bars_of_timer_noise():
    """Times under the noise level are not compared: a pair of them says "too quick" on
    hover, and where every time is, the time panel says so instead of drawing bars."""
    from nca_core.search.costs import SearchCost

    mixed = [
        SearchCost("raw 64-D", 64, 0.02, 0.04, 3_000_000),
        SearchCost("raw 64-D", 64, 0.02, 0.2, 4_000_000, "hnsw", 1.5),
        SearchCost("NCA 8-D", 8, 0.03, 0.01, 375_000),
        SearchCost("NCA 8-D", 8, 0.03, 0.3, 1_500_000, "hnsw", 0.5),
    ]
    fig = figures.search_cost_chart(mixed, noise_seconds=0.05)
    assert fig.data[0].xaxis == "x" and list(fig.data[0].hovertext) == ["reference", "too quick"]
    quick = [dataclasses.replace(c, query_seconds=c.query_seconds / 100) for c in mixed]  # all under 5 ms
    fig = figures.search_cost_chart(quick, noise_seconds=0.05)
    assert {t.xaxis for t in fig.data} == {"x2", "x3"}  # sizes and errors only
    assert [t.name for t in fig.data if t.showlegend] == ["exact", "HNSW graph"]
    assert any("50 ms: too quick" in a.text for a in fig.layout.annotations)
    assert fig.layout.xaxis.visible is False and fig.layout.yaxis.visible is False


def test_search_cost_panel_titles_sit_below_the_toolbar_band():
    """Titles are drawn in the top margin, just above the panels; the toolbar that appears
    on hover covered the right-hand one ("test error") on a 1024-pixel screen."""
    from nca_core.search.costs import SearchCost

    fig = figures.search_cost_chart([SearchCost("raw 64-D", 64, 0.02, 0.8, 3_000_000)])
    tallest = max(a.font.size for a in fig.layout.annotations)
    assert fig.layout.margin.t - figures.TOOLBAR_BAND >= tallest


def test_hover_text_names_the_class_over_the_text_with_short_coordinates():
    Z = np.array([[0.123456789, 1.0], [2.0, 3.0]])
    fig = figures.embedding_scatter(
        Z, np.array([0, 1]), ["cultivar 1", "cultivar 2"], hover_text=["#7", "#9"]
    )
    assert list(fig.data[1].text) == ["#9"]
    assert fig.data[0].hovertemplate == "<b>cultivar 1</b><br>%{text}<br>(%{x:.3g}, %{y:.3g})<extra></extra>"


def test_a_pictures_height_follows_the_datas_aspect_within_bounds():
    from nca_core.plots.figures import picture_height

    iris_like = [[-4.0, 4.0], [-0.5, 0.5]]  # a flat set: a flat chart, not a band in a tall box
    assert picture_height(iris_like) == 300
    assert picture_height([[-10.0, 10.0], [-10.0, 10.0]]) == 480  # round: what fits below the controls
    assert picture_height([[0.0, 10.0], [0.0, 6.0]]) == 360  # 600 px wide at one scale
    assert picture_height([[1.0, 1.0], [0.0, 1.0]]) == 480  # a degenerate range


def test_an_image_grid_makes_room_for_two_line_titles():
    """The Inspect tab's first title ("chosen" over "#46476: 5") was clipped on one line."""
    from nca_core.plots.figures import image_grid

    images = np.zeros((3, 4))
    one = image_grid(images, (2, 2), ["a", "b", "c"])
    two = image_grid(images, (2, 2), ["chosen<br>#1: 5", "#2: 5", "#3: 4"])
    assert two.layout.margin.t > one.layout.margin.t
    assert two.layout.height - one.layout.height == two.layout.margin.t - one.layout.margin.t
    assert two.layout.annotations[0].text == "chosen<br>#1: 5"
