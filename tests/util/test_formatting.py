import pytest

from nca_core.util.formatting import byte_size, percent


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


@pytest.mark.parametrize(
    "n_bytes, text",
    [
        (100, "100 bytes"), (20_096, "20.1 kB"), (322_000, "322 kB"), (1_000_000, "1 MB"), (2.5e9, "2.5 GB"),
        (999.6, "1 kB"), (999_999, "1 MB"), (1.5e12, "1.5 TB"),  # as they read once rounded
    ],
)
def test_byte_sizes_keep_three_significant_digits_in_the_largest_unit(n_bytes, text):
    assert byte_size(n_bytes) == text
