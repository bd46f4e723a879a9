"""The class palette against the lines drawn from a clicked point: no class may be read as a line."""

import numpy as np
import pytest

from nca_core.plots import colours


def cielab(hex_colour: str) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour "#RRGGBB", written out here as the reference."""
    rgb = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.float64) / 255
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    to_xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = to_xyz @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(a: str, b: str) -> float:
    """CIE76 colour difference: about 2.3 is just noticeable."""
    return float(np.linalg.norm(cielab(a) - cielab(b)))


def test_the_reference_knows_black_white_and_a_grey():
    assert cielab("#000000") == pytest.approx([0, 0, 0], abs=1e-9)
    assert cielab("#FFFFFF") == pytest.approx([100, 0, 0], abs=0.02)
    assert cielab("#777777")[0] == pytest.approx(50.0, abs=0.1)  # the mid grey of CIELAB


@pytest.mark.parametrize(
    "line", [colours.SAME_CLASS_LINE, colours.OTHER_CLASS_LINE], ids=lambda line: line[1]
)
def test_each_line_colour_is_far_from_every_class_colour(line):
    """More than ten just-noticeable differences: the dashed grey's nearest class colour,
    the brown, is 31 away, where a black class would be 9 from the solid black line."""
    nearest = min(colours.PALETTE, key=lambda c: delta_e(line[0], c))
    assert delta_e(line[0], nearest) > 25, f"{line[1]} lines look like class colour {nearest}"


@pytest.mark.parametrize("colour", colours.PALETTE)
def test_no_class_colour_is_black_or_grey(colour):
    """Chroma (distance from the grey axis) above 20: black, greys and white have 0, the
    palette's brown, its least colourful entry, 26."""
    _, a, b = cielab(colour)
    assert np.hypot(a, b) > 20, f"{colour} is too close to black or grey"


def test_the_palette_keeps_its_colours_apart():
    pairs = [(a, b) for i, a in enumerate(colours.PALETTE) for b in colours.PALETTE[i + 1 :]]
    assert min(delta_e(a, b) for a, b in pairs) > 15
