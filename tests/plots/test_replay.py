import numpy as np

from nca_core.plots import colours, replay
from tests.plots.snapshots import snap


def test_animation_caps_frames_and_fixes_axes(rng):
    y = np.repeat([0, 1], 10)
    snaps = [snap(e, rng.normal(size=(20, 2))) for e in range(250)]
    fig = replay.animation(snaps, y, ["a", "b"], max_frames=100)
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
    assert len(fig.frames) == 100
    assert fig.frames[0].name == "0" and fig.frames[-1].name == "249"
    assert fig.layout.xaxis.range is not None
    steps = fig.layout.sliders[0].steps
    assert len(steps) == 100 and list(steps[0].args[0]) == ["0"] and list(steps[-1].args[0]) == ["249"]
    shown = [step.label for step in steps if step.label]  # readable: not a smear of 100 numbers
    assert shown[0] == "0" and 5 <= len(shown) <= replay.SLIDER_TICK_LABELS
    labels = [b.label for b in fig.layout.updatemenus[0].buttons]
    assert labels == ["▶ Play", "❚❚ Pause", "slow", "fast"]
    # points keep their identity: the same customdata per class in every frame
    assert all(np.array_equal(f.data[0].customdata, fig.data[0].customdata) for f in fig.frames)


def test_the_replays_defaults_bound_its_size_whatever_the_run(rng):
    """The Train page's replay and its HTML download use the defaults: at most 100 frames
    of at most 3,000 points, however many frames a run kept and points it drew."""
    y = np.arange(5000) % 3
    snaps = [snap(e, rng.normal(size=(5000, 2))) for e in range(150)]
    fig = replay.animation(snaps, y, ["a", "b", "c"])
    assert len(fig.frames) == 100
    for frame in fig.frames:  # the few past the axes' edge are drawn again there, and no more
        drawn = {trace.name: len(trace.x) for trace in frame.data}
        edge = drawn.pop("past the edge", 0)
        assert sum(drawn.values()) == 3000 and edge < 0.05 * 3000


def test_animation_html_is_standalone(run):
    snaps, y = run
    html = replay.animation(snaps, y, ["a", "b", "c"]).to_html(include_plotlyjs=True)
    assert "Plotly.newPlot" in html
    assert 'src="http' not in html  # plotly.js is inlined, so the file plays offline
    assert len(html) > 1_000_000


def test_replay_title_follows_the_frames_and_names_the_run(run):
    snaps, y = run
    fig = replay.animation(snaps, y, ["a", "b", "c"], title="NCA on rings")
    assert fig.layout.title.text == "NCA on rings<br>epoch 0   objective 0.5000"
    assert fig.frames[3].layout.title.text == "NCA on rings<br>epoch 3   objective 0.5300"
    # plotly.js only applies a frame's layout (the title) when the frame is redrawn
    steps = fig.layout.sliders[0].steps
    assert all(step.args[1]["frame"]["redraw"] for step in steps)
    assert all(b.args[1]["frame"]["redraw"] for b in fig.layout.updatemenus[0].buttons if b.args[0] is None)


def test_replay_controls_do_not_overlap():
    """The buttons sit in a row above a full-width slider (at 1024 px they overlapped)."""
    y = np.zeros(5, int)
    fig = replay.animation([snap(e, np.ones((5, 2)) * e) for e in range(3)], y, ["a"])
    buttons, slider = fig.layout.updatemenus[0], fig.layout.sliders[0]
    assert slider.x == 0 and slider.len == 1
    assert slider.pad.t > buttons.pad.t + 30  # the slider starts below the row of buttons
    assert fig.layout.margin.b >= 100


def test_a_replay_of_frames_drawn_unevenly_shows_even_epochs_and_names_whole_ones():
    """A live run draws frames as the clock allows: many in one epoch, few in another. The
    replay picks frames evenly spaced in epochs, and the slider names whole epochs at an
    even step, not whichever frames the spacing lands on (4.5, 6.03, 6.82, 7.54)."""
    rng = np.random.default_rng(0)
    fractions = {e: [1.0] if e < 4 else [0.03, 0.07, 0.11, 0.5, 0.82, 1.0] for e in range(1, 41)}
    snaps = [snap(0, rng.normal(size=(6, 2)))]
    snaps += [snap(e, rng.normal(size=(6, 2)), fraction=f) for e in range(1, 41) for f in fractions[e]]
    fig = replay.animation(snaps, np.repeat([0, 1], 3), ["a", "b"], max_frames=60)
    assert len(fig.frames) == 60
    shown = [step.label for step in fig.layout.sliders[0].steps if step.label]
    assert shown == ["0", "5", "10", "15", "20", "25", "30", "35", "40"]
    done = [float(f.name) for f in fig.frames]
    assert max(np.diff(done)) <= 3 * 40 / 59  # no stretch of the run left out


def test_a_network_that_starts_as_one_dot_opens_on_its_first_telling_frame():
    rng = np.random.default_rng(1)
    scales = [1e-4, 1e-3, 0.5, 1.0, 1.0]
    snaps = [snap(e, rng.normal(size=(30, 2)) * s) for e, s in enumerate(scales)]
    fig = replay.animation(snaps, np.repeat([0, 1, 2], 10), ["a", "b", "c"])
    assert fig.layout.sliders[0].active == 2 and "epoch 2 " in fig.layout.title.text
    np.testing.assert_array_equal(fig.data[0].x, fig.frames[2].data[0].x)


def test_every_frame_of_the_replay_draws_class_k_in_shape_k(rng):
    y = np.repeat([0, 1, 2], 5)
    fig = replay.animation([snap(e, rng.normal(size=(15, 2))) for e in range(4)], y, ["a", "b", "c"])
    shapes = [s.plotly for s in colours.class_shapes(3)]
    for data in [fig.data, *(frame.data for frame in fig.frames)]:
        assert [t.marker.symbol for t in data if t.name in ("a", "b", "c")] == shapes
