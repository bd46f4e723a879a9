import pytest

from nca_core.util.formatting import percent


@pytest.mark.parametrize(
    "fraction, decimals, text",
    [
        (1.0, 0, "100%"),
        (0.997, 0, "99.7%"),  # never rounded up to a perfect score
        (0.9996, 0, ">99.9%"),
        (0.95, 0, "95%"),
        (0.418, 0, "42%"),
        (0.418, 1, "41.8%"),
        (0.9996, 1, "99.96%"),
        (1.0, 1, "100.0%"),
        (0.0, 0, "0%"),
        (0.003, 0, "0.3%"),  # nor down to nothing
        (0.0004, 0, "<0.1%"),
    ],
)
def test_percent_never_rounds_to_all_or_nothing_unless_it_is(fraction, decimals, text):
    assert percent(fraction, decimals) == text
