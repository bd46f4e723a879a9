import numpy as np
import pytest

from nca_core import figures
from nca_core.training import Snapshot


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
    assert len(fig.frames) == 100
    assert fig.frames[0].name == "0" and fig.frames[-1].name == "249"
    assert fig.layout.xaxis.range is not None
    assert len(fig.layout.sliders[0].steps) == 100
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


def test_grid_step_is_one_two_or_five_times_a_power_of_ten():
    assert figures._grid_step(37.0) == 5.0
    assert figures._grid_step(12.0) == 2.0
    assert figures._grid_step(4.0) == 1.0
    assert figures._grid_step(0.3) == pytest.approx(0.05)


def test_search_cost_bars_put_time_left_and_megabytes_right():
    from nca_core.comparison import SearchCost

    costs = [SearchCost("raw 64-D", 64, 0.02, 0.5, 3_000_000), SearchCost("NCA 8-D", 8, 0.03, 0.1, 375_000)]
    fig = figures.search_cost_bars(costs)
    time, size = fig.data
    assert list(time.x) == list(size.x) == ["raw 64-D", "NCA 8-D"]
    assert list(time.y) == [0.5, 0.1] and list(size.y) == [3.0, 0.375]
    assert (time.xaxis, size.xaxis) == ("x", "x2")  # two panels, not one grouped chart
    assert [a.text for a in fig.layout.annotations] == ["query time (s)", "stored (MB)"]
    assert fig.layout.showlegend is False
