"""Random CSV files never crash from_csv with anything but DatasetError."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nca_core.datasets import Dataset, DatasetError, from_csv

cells = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**40), 10**40).map(str),
    st.sampled_from(["", "nan", "inf", "-inf", "x", "1e400", "0x10", " 3 ", '"a,b"', "∞", "None"]),
    st.text(max_size=5),
)


@st.composite
def csv_files(draw):
    n_cols = draw(st.integers(1, 5))
    n_rows = draw(st.integers(0, 12))
    header = draw(
        st.lists(st.sampled_from(["a", "b", "c", "label", "", "a"]), min_size=n_cols, max_size=n_cols)
    )
    rows = [draw(st.lists(cells, min_size=n_cols, max_size=n_cols)) for _ in range(n_rows)]
    text = "\n".join([",".join(header), *(",".join(r) for r in rows)])
    return text.encode("utf-8", errors="replace")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=st.one_of(csv_files(), st.binary(max_size=200)))
def test_random_files_give_a_dataset_or_a_dataset_error(payload):
    try:
        data = from_csv(payload, "label")
    except DatasetError as exc:
        assert str(exc)  # a message, never an empty error
        return
    assert isinstance(data, Dataset)
    assert np.isfinite(data.X_train).all() and data.n_classes >= 2
    assert len(data.y_train) + len(data.y_test) >= 2
