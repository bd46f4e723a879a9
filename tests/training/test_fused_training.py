"""Training through the fused Triton schedule: fits and an app's Run where the engine takes
the fused kernels (through triton's interpreter on the CPU, in a process of its own whose
engine takes them wherever they apply: ``interpreter_pool(engine_takes_fused=True)``; and
compiled, on a CUDA device where there is one), beside the same fits through the CPU's
schedules in this process, and the float64 fit.

Every call the CPU's fit makes to ``GaussianSchedule`` (each step's sums, and the value
reported at the start), the fused engine's fit makes to ``FusedSchedule``, and it makes no
other; both float32 fits end where the float64 fit ends, within float32's rounding."""

from __future__ import annotations

from importlib.util import find_spec

import numpy as np
import pytest
import torch

from nca_core.config.rules import DENSE_MAX_SAMPLES
from tests.objective.interpreted import interpreter_pool
from tests.training.schedule_calls import counted_fit, counted_run

pytestmark = [
    pytest.mark.slow,  # the worker's start: torch, triton and the library imported afresh
    pytest.mark.skipif(find_spec("triton") is None, reason="triton is not installed (the optional extra gpu)"),
]

# (points, settings): 48 points in batches of 16 (9 steps in 3 epochs); L-BFGS's full
# batch on just more points than the CPU's whole-matrix float64 engine (``objective.dense``)
# takes, so that its evaluations go through the blockwise one.
FITS = {
    "full batch": (DENSE_MAX_SAMPLES + 20, {"optimizer": "lbfgs"}),
    "minibatch": (48, {"optimizer": "adam", "neighbors": "all", "batch_size": 16}),
    "batch alone": (48, {"optimizer": "adam", "neighbors": "batch", "batch_size": 16}),
}

# How far a float32 fit of three epochs may end from the float64 one, relative to the
# embedding's largest entry: a step's gradient carries rounding of about 1e-6 relative in
# either schedule (tests/objective/test_fused.py), which the steps carry on; L-BFGS's, whose
# line search and curvature pairs see it too, ends about 2e-5 away through GaussianSchedule.
FLOAT32_SPREAD = 1e-4


@pytest.fixture(scope="module")
def interpreter():
    with interpreter_pool(engine_takes_fused=True) as pool:
        yield pool


@pytest.fixture(params=["interpreter", "cuda"])
def fused_engine(request):
    """(device, call): the device a fit asks for, and ``call(function, *args)``, which runs
    it where the engine takes the fused kernels."""
    if request.param == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("no CUDA device: the compiled kernels are checked on a GPU")
        from nca_core.objective import fused

        request.getfixturevalue("monkeypatch").setattr(fused, "FUSED_ON_CUDA", True)
        return "cuda", lambda function, *args: function(*args)
    pool = request.getfixturevalue("interpreter")
    return "cpu", lambda function, *args: pool.submit(function, *args).result()


def _clusters(n: int = 48, D: int = 5, n_classes: int = 3):
    """Three overlapping classes in 5-D, float32."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, n_classes, n)
    X = rng.normal(size=(n_classes, D))[y] * 1.5 + rng.normal(size=(n, D))
    return X.astype(np.float32), y


def _schedules(counts: dict, name: str) -> dict:
    """The calls to one schedule, by method."""
    return {key.split(".")[1]: count for key, count in counts.items() if key.startswith(name + ".")}


def _close(Z, want, spread: float = FLOAT32_SPREAD) -> None:
    np.testing.assert_allclose(Z, want, rtol=0, atol=spread * float(np.abs(want).max()))


@pytest.mark.parametrize("objective", ["f", "g"])
@pytest.mark.parametrize("fit", list(FITS))
def test_a_fit_takes_every_step_through_the_fused_kernels_and_ends_where_float64_does(
    fused_engine, fit, objective
):
    """A linear map to 2-D, 3 epochs, float32 through each engine against float64."""
    n, settings = FITS[fit]
    X, y = _clusters(n)
    device, call = fused_engine
    params = {"n_components": 2, "objective": objective, "dtype": "float32", "device": "cpu",
              "random_state": 0, "tol": 0.0, "max_iter": 3, **settings}  # fmt: skip
    Z_fused, curve_fused, calls_fused = call(counted_fit, X, y, {**params, "device": device})
    Z_cpu, _, calls_cpu = counted_fit(X, y, params)
    Z_64, curve_64, _ = counted_fit(X, y, {**params, "dtype": "float64"})
    assert _schedules(calls_cpu, "GaussianSchedule")["sums"] >= 3
    assert calls_fused == {f"FusedSchedule.{method}": n for method, n in _schedules(calls_cpu, "GaussianSchedule").items()}
    _close(Z_fused, Z_64)
    _close(Z_cpu, Z_64)
    np.testing.assert_allclose(curve_fused, curve_64, rtol=FLOAT32_SPREAD)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_an_apps_run_takes_every_step_through_the_fused_kernels_and_ends_where_the_cpu_does(fused_engine, objective):
    """The app's recommended run on wine (minibatch Adam in float32, neighbours from all
    points), 3 epochs; a run has no float64 to compare with."""
    device, call = fused_engine
    changes = {"device": "cpu", "max_iter": 3, "objective": objective}
    A_fused, curve_fused, calls_fused = call(counted_run, "wine", {**changes, "device": device})
    A_cpu, curve_cpu, calls_cpu = counted_run("wine", changes)
    assert _schedules(calls_cpu, "GaussianSchedule")["sums"] >= 3
    assert calls_fused == {f"FusedSchedule.{method}": n for method, n in _schedules(calls_cpu, "GaussianSchedule").items()}
    _close(A_fused, A_cpu)
    np.testing.assert_allclose(curve_fused, curve_cpu, rtol=FLOAT32_SPREAD)
