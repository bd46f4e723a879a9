"""The replay as a GIF for slides: decoded with Pillow and measured in pixels."""

import io

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from nca_core.plots import colours, gif
from nca_core.training.loop import Snapshot

# With short class names the legend starts right of this column at 800 pixels wide.
PLOT_COLUMNS = slice(0, 560)


def snap(epoch, Z, accuracy=None, fraction=1.0):
    Z = np.asarray(Z, dtype=np.float32)
    return Snapshot(epoch, 0.5, float(epoch), None, Z, test_accuracy=accuracy, fraction=fraction)


def decode(blob: bytes) -> tuple[list[np.ndarray], list[int], Image.Image]:
    image = Image.open(io.BytesIO(blob))
    frames, durations = [], []
    for i in range(image.n_frames):
        image.seek(i)
        frames.append(np.asarray(image.convert("RGB")))
        durations.append(image.info["duration"])
    return frames, durations, image


def pixels_of(frame: np.ndarray, color: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows and columns of the plot area drawn in ``color``."""
    rgb = np.array(gif._rgb(color))
    rows, cols = np.nonzero((frame[:, PLOT_COLUMNS] == rgb).all(-1))
    return rows, cols


def box_shape(frame: np.ndarray, color: str) -> tuple[int, int]:
    """Width and height in pixels of everything drawn in ``color`` in the plot area."""
    rows, cols = pixels_of(frame, color)
    return cols.max() - cols.min(), rows.max() - rows.min()


def test_frames_are_capped_keep_both_ends_and_hold_the_start_and_the_end(rng):
    y = np.repeat([0, 1], 50)
    snaps = [snap(e, rng.normal(size=(100, 2)) * (1 + e / 50)) for e in range(150)]
    frames, durations, image = decode(gif.replay_gif(snaps, y, ["a", "b"], title="run", total_epochs=149))
    assert len(frames) == 60
    assert image.size == (800, 600) and image.info["loop"] == 0
    assert durations[0] == gif.FIRST_FRAME_MS and durations[-1] == gif.LAST_FRAME_MS
    assert set(durations[1:-1]) == {gif.FRAME_MS}
    assert len(decode(gif.replay_gif(snaps[:3], y, ["a", "b"]))[0]) == 3


def test_the_width_sets_the_size_and_a_long_run_stays_a_few_megabytes(rng):
    y = np.repeat(np.arange(10), 300)
    walk = np.cumsum(rng.normal(scale=0.05, size=(121, 3000, 2)), axis=0)
    snaps = [snap(e, walk[e]) for e in range(121)]
    blob = gif.replay_gif(snaps, y, [str(c) for c in range(10)], title="digits", total_epochs=120)
    assert len(blob) < 3_000_000
    assert decode(gif.replay_gif(snaps[:2], y, list("0123456789"), width=400))[2].size == (400, 300)


def test_frames_differ_where_the_embedding_moves_and_only_there(rng):
    y = np.repeat([0, 1], 30)
    still = rng.normal(size=(60, 2))
    moved = still + [3.0, 0.0] * (y[:, None] == 1)
    frames, *_ = decode(gif.replay_gif([snap(0, still), snap(1, still), snap(2, moved)], y, ["a", "b"]))
    plot = (slice(120, 540), PLOT_COLUMNS)  # below the title lines
    assert np.array_equal(frames[0][plot], frames[1][plot])
    assert not np.array_equal(frames[1][plot], frames[2][plot])
    assert not np.array_equal(frames[0][:80], frames[1][:80])  # the title names each epoch


@pytest.mark.parametrize(("width", "height"), [(1.0, 1.0), (3.0, 1.0), (1.0, 3.0)])
def test_one_data_unit_is_as_long_across_as_up(width, height):
    # A rectangle of class 0 among class 1 points spread far along x: a renderer that
    # stretched each axis to fill the plot would draw it several times too tall.
    corners = np.array([[0, 0], [width, 0], [0, height], [width, height]])
    wide = np.array([[-8.0, 0.5], [8.0, 0.5]])
    y = np.array([0, 0, 0, 0, 1, 1])
    frames, *_ = decode(gif.replay_gif([snap(0, np.vstack([corners, wide]))], y, ["a", "b"]))
    color = colours.class_colors(2)[0]
    rows, cols = pixels_of(frames[0], color)
    corner = (cols < cols.min() + 20) & (rows > rows.max() - 20)  # the bottom-left dot alone
    dot = cols[corner].max() - cols[corner].min()
    across, up = (side - dot for side in box_shape(frames[0], color))
    assert min(across, up) > 25
    assert across / up == pytest.approx(width / height, rel=0.06)


def test_axes_stay_put_while_the_run_spreads_out(rng):
    y = np.repeat([0, 1], 20)
    start = rng.normal(size=(40, 2))
    frames, *_ = decode(gif.replay_gif([snap(e, start * (1 + e)) for e in range(4)], y, ["a", "b"]))
    x_ticks = [f[548:] for f in frames]  # tick labels under the plot and the axis name
    y_ticks = [f[116:540, :56] for f in frames]  # tick labels left of the plot
    assert all(np.array_equal(x_ticks[0], t) for t in x_ticks)
    assert all(np.array_equal(y_ticks[0], t) for t in y_ticks)


def test_every_class_has_its_colour_in_the_legend():
    y = np.arange(5)
    frames, *_ = decode(gif.replay_gif([snap(0, np.eye(5, 2))], y, list("abcde")))
    legend = frames[0][:, 600:]
    for color in colours.class_colors(5):
        assert (legend == gif._rgb(color)).all(-1).any(), color


def test_a_3d_run_is_drawn_face_on_so_a_flat_square_stays_square():
    # a unit square in a tilted plane, and far points in the same plane
    u, v = np.array([1.0, 1.0, 0.0]) / np.sqrt(2), np.array([0.0, 0.6, 0.8])
    v = v - (v @ u) * u
    v /= np.linalg.norm(v)
    plane = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [-6, 0.5], [6, 0.5]])
    Z = plane[:, :1] * u + plane[:, 1:] * v
    frames, *_ = decode(gif.replay_gif([snap(0, Z)], np.array([0, 0, 0, 0, 1, 1]), ["a", "b"]))
    across, up = box_shape(frames[0], colours.class_colors(2)[0])
    assert across > 20 and abs(across - up) <= 2


def test_the_caption_gives_the_epoch_and_the_latest_accuracy():
    snaps = [
        snap(0, np.zeros((2, 2)), 0.5),
        snap(1, np.zeros((2, 2)), fraction=0.5),
        snap(1, np.zeros((2, 2)), 0.75),
    ]
    assert gif._captions(snaps, 10, 5) == [
        "epoch 0 of 10   ·   test 5-NN accuracy 50%",
        "epoch 0.5 of 10   ·   test 5-NN accuracy 50%",
        "epoch 1 of 10   ·   test 5-NN accuracy 75%",
    ]


def test_no_snapshots_is_an_error():
    with pytest.raises(ValueError, match="at least one snapshot"):
        gif.replay_gif([], np.zeros(0, int), ["a"])


def test_the_caption_does_not_round_an_almost_perfect_score_up_to_100():
    snaps = [snap(0, np.zeros((2, 2)), 0.5), snap(1, np.zeros((2, 2)), 0.997)]
    assert gif._captions(snaps, 1, 5)[-1] == "epoch 1 of 1   ·   test 5-NN accuracy 99.7%"


def ideal(shape, radius: float, size: int) -> np.ndarray:
    """The pixels of a ``size`` square that ``shape`` covers, centred in it with its box
    ``radius`` pixels from the centre to each side, written out here (ray casting) as the
    reference for what Pillow draws."""
    centres = (np.arange(size) - size // 2) / radius
    u, v = np.meshgrid(centres, centres)
    if shape.outline:  # centred on the box round it, as ``drawn`` centres what is drawn
        middle = (np.min(shape.outline, axis=0) + np.max(shape.outline, axis=0)) / 2
        u, v = u + middle[0], v + middle[1]

    def inside(scale: float) -> np.ndarray:
        if not shape.outline:
            return np.hypot(u, v) <= scale
        corners = np.asarray(shape.outline, dtype=np.float64) * scale
        crossings = np.zeros(u.shape, dtype=bool)
        for (x0, y0), (x1, y1) in zip(corners, np.roll(corners, -1, axis=0)):
            spans = (y0 > v) != (y1 > v)
            crossings ^= spans & (u < x0 + (v - y0) * (x1 - x0) / np.where(y1 == y0, 1, y1 - y0))
        return crossings

    return inside(1.0) & ~inside(shape.hole) if shape.hole else inside(1.0)


def drawn(frame: np.ndarray, color: str, size: int) -> list[np.ndarray]:
    """Each patch of ``color`` (legend markers included), left to right, as the pixels of a
    ``size`` square centred on the box round it."""
    patches, count = ndimage.label((frame == gif._rgb(color)).all(-1))
    masks = []
    for rows, cols in sorted((np.nonzero(patches == i) for i in range(1, count + 1)), key=lambda rc: rc[1].min()):
        middle = ((rows.min() + rows.max()) // 2, (cols.min() + cols.max()) // 2)
        mask = np.zeros((size, size), dtype=bool)
        mask[rows - middle[0] + size // 2, cols - middle[1] + size // 2] = True
        masks.append(mask)
    return masks


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    return (a & b).sum() / (a | b).sum()


def test_each_class_is_drawn_in_its_own_shape_and_in_no_other():
    """Eleven classes, one point each, far apart; at 1600 pixels wide a point's box is 24
    pixels across (12 from its centre to each side). Each class's pixels match its shape's outline better than any other's,
    centred on the box round them (a star's box is not centred on its middle). Class 10
    has class 0's colour: its point lies right of class 0's; the legend's are rightmost."""
    Z = np.array([[k % 4, k // 4] for k in range(11)], dtype=np.float64) * 3
    frames, *_ = decode(gif.replay_gif([snap(0, Z)], np.arange(11), [str(k) for k in range(11)], width=1600))
    colours_drawn = colours.class_colors(11)
    for k, shape in enumerate(colours.class_shapes(11)):
        patches = drawn(frames[0], colours_drawn[k], 41)
        assert len(patches) == (4 if k in (0, 10) else 2)  # a point and its legend marker
        mask = patches[1 if k == 10 else 0]
        scores = {other.name: overlap(mask, ideal(other, 12, 41)) for other in colours.SHAPES}
        best = max(scores, key=scores.get)
        assert best == shape.name and scores[best] > 0.6, (shape.name, scores)


def test_in_a_crowd_of_2000_points_each_is_still_drawn_eight_pixels_across():
    """The GIF draws smaller points for larger sets; the smallest stay big enough for a shape."""
    Z = np.zeros((2000, 2))
    Z[-1], Z[-2] = [40.0, 40.0], [-40.0, -40.0]  # two far points alone, to be measured
    y = np.zeros(2000, dtype=int)
    y[-1] = 1
    frames, *_ = decode(gif.replay_gif([snap(0, Z)], y, ["crowd", "alone"]))
    (alone, _legend) = drawn(frames[0], colours.class_colors(2)[1], 41)
    rows, cols = np.nonzero(alone)
    assert min(np.ptp(rows), np.ptp(cols)) + 1 >= 8
