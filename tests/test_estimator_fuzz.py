"""The estimator's input checks under random shapes, dtypes and values."""

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from nca_core import NCA

values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.floats(min_value=-(2.0**100), max_value=2.0**100, width=32),
)


@st.composite
def problems(draw):
    n = draw(st.integers(0, 12))
    D = draw(st.integers(0, 4))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int64]))
    elements = values if dtype != np.int64 else st.integers(-1000, 1000)
    X = draw(hnp.arrays(dtype, (n, D), elements=elements))
    y = draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, 2)))
    return X, y


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(), d=st.sampled_from([None, 1, 2]), optimizer=st.sampled_from(["lbfgs", "adam"]))
def test_fit_succeeds_or_raises_a_value_error(problem, d, optimizer):
    X, y = problem
    model = NCA(d, optimizer=optimizer, max_iter=3, device="cpu", batch_size=4)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
    except ValueError as exc:
        assert str(exc)
        return
    except FloatingPointError as exc:  # TrainingDiverged: huge inputs can overflow the map
        assert "diverged" in str(exc)
        assert np.isfinite(model.components_).all()
        return
    assert np.isfinite(model.components_).all()
    assert model.transform(X).shape == (len(X), model.components_.shape[0])
