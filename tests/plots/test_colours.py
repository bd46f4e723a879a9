"""The class palette: apart under simulated colour blindness, visible on white, and never
read as one of the lines drawn from a clicked point (``tests/plots/colour_vision``)."""

import itertools

import numpy as np
import pytest

from nca_core.plots import colours
from tests.plots.colour_vision import VISIONS, ciede2000, cielab, contrast_on_white, rgb, simulate


def lab(hex_colour: str, vision: str = "normal") -> np.ndarray:
    return cielab(simulate(rgb(hex_colour), vision))


def delta_e(a: str, b: str, vision: str = "normal") -> float:
    """CIE76 colour difference: about 2.3 is just noticeable."""
    return float(np.linalg.norm(lab(a, vision) - lab(b, vision)))


def test_the_reference_knows_black_white_and_a_grey():
    assert cielab(rgb("#000000")) == pytest.approx([0, 0, 0], abs=1e-9)
    assert cielab(rgb("#FFFFFF")) == pytest.approx([100, 0, 0], abs=0.02)
    assert cielab(rgb("#777777"))[0] == pytest.approx(50.0, abs=0.1)  # the mid grey of CIELAB


@pytest.mark.parametrize(
    ("lab1", "lab2", "expected"),
    [  # Sharma, Wu and Dalal (2005), table 1: pairs 1, 7, 17 to 20 and 25
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((50.0, 2.5, 0.0), (61.0, -5.0, 29.0), 22.8977),
        ((50.0, 2.5, 0.0), (56.0, -27.0, -3.0), 31.9030),
        ((50.0, 2.5, 0.0), (58.0, 24.0, 15.0), 19.4535),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ],
)
def test_the_reference_ciede2000_matches_its_published_test_data(lab1, lab2, expected):
    assert float(ciede2000(np.array(lab1), np.array(lab2))) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    ("vision", "pair"),
    [  # pairs each kind of dichromat is known to confuse: red and green, green and orange, green and teal
        ("deuteranopia", ("#D62728", "#00A000")),
        ("protanopia", ("#00A000", "#FF8000")),
        ("tritanopia", ("#2CA02C", "#00A0A0")),
    ],
)
def test_each_simulation_keeps_greys_grey_and_merges_the_colours_its_viewers_confuse(vision, pair):
    grey = rgb("#777777")
    np.testing.assert_allclose(simulate(grey, vision), grey, atol=2e-3)  # each matrix's rows sum to 1
    assert float(ciede2000(lab(pair[0]), lab(pair[1]))) > 25
    assert float(ciede2000(lab(pair[0], vision), lab(pair[1], vision))) < 6


def test_ten_classes_get_ten_colours_and_the_eleventh_takes_the_first_again():
    assert len(set(colours.class_colors(10))) == 10
    assert colours.class_colors(11)[10] == colours.class_colors(11)[0]


@pytest.mark.parametrize("vision", VISIONS)
def test_every_pair_of_the_ten_class_colours_stays_apart_under_each_vision(vision):
    labs = {c: lab(c, vision) for c in colours.class_colors(10)}
    differences = {(a, b): float(ciede2000(labs[a], labs[b])) for a, b in itertools.combinations(labs, 2)}
    closest = min(differences, key=differences.get)
    assert differences[closest] >= colours.LEAST_DIFFERENCE, f"{closest} under {vision}: {differences[closest]:.1f}"


@pytest.mark.parametrize("colour", colours.class_colors(10))
def test_every_class_colour_stands_out_from_the_white_page(colour):
    assert contrast_on_white(rgb(colour)) >= colours.LEAST_CONTRAST


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize(
    "line", [colours.SAME_CLASS_LINE, colours.OTHER_CLASS_LINE], ids=lambda line: line[1]
)
def test_each_line_colour_is_far_from_every_class_colour(line, vision):
    """More than ten just-noticeable differences (CIE76), as every viewer sees them: a
    black class would be 9 from the solid black line."""
    nearest = min(colours.PALETTE, key=lambda c: delta_e(line[0], c, vision))
    assert delta_e(line[0], nearest, vision) > 25, f"{line[1]} lines look like class colour {nearest}"


@pytest.mark.parametrize("colour", colours.PALETTE)
def test_no_class_colour_is_black_or_grey(colour):
    """Chroma (distance from the grey axis) above 20: black, greys and white have 0."""
    _, a, b = lab(colour)
    assert np.hypot(a, b) > 20, f"{colour} is too close to black or grey"
