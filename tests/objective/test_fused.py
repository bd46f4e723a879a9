"""The fused Triton schedule against the float64 autograd reference: through Triton's
interpreter on the CPU (in a process of its own: ``interpreted``), and compiled on a CUDA
device where there is one. float32 kernels, float64 reference, on the same float32 points."""

from __future__ import annotations

from importlib.util import find_spec
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from nca_core.objective.fused import class_tiles
from tests.objective.interpreted import fused_sums, interpreter_pool
from tests.objective.reference import log_class_mass, objective_terms
from tests.without import run_without

needs_triton = pytest.mark.skipif(
    find_spec("triton") is None, reason="triton is not installed (the optional extra gpu)"
)


@pytest.fixture(scope="module")
def interpreter():
    with interpreter_pool() as pool:
        yield pool


@pytest.fixture(params=["interpreter", "cuda"])
def fused(request):
    """fused(Z, y, anchors, objective, block_rows, block_columns, value) -> (grad, total,
    value_sum or None)."""
    if request.param == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("no CUDA device: the compiled kernels are checked on a GPU")

        def on_cuda(Z, y, anchors, *rest):
            grad, total, value = fused_sums(Z.cuda(), y.cuda(), anchors.cuda(), *rest)
            return grad.cpu(), total, value

        return on_cuda
    pool = request.getfixturevalue("interpreter")
    return lambda *args: pool.submit(fused_sums, *args).result()


def _clusters(seed: int, n: int = 157, d: int = 5, n_classes: int = 4, spread: float = 1.0):
    """n points sorted by class, around class centres ``spread`` apart (overlapping at 1)."""
    rng = np.random.default_rng(seed)
    y = np.sort(rng.integers(0, n_classes, n))
    Z = rng.normal(size=(n_classes, d))[y] * spread + rng.normal(size=(n, d))
    return Z, y


def _far_apart():
    """Classes 40 apart along one axis; the first two points of class 0 put inside classes 2
    and 3 (their class mates 40 and more away: p_i about e^-1600, below any float) and one
    point of class 1 moved 60 from everything (every neighbour's kernel value about e^-3600)."""
    Z, y = _clusters(1, spread=0.0)
    Z[:, 0] += 40.0 * y
    misplaced, far = np.flatnonzero(y == 0)[:2], np.flatnonzero(y == 1)[0]
    Z[misplaced] = Z[y == 2][0] + 0.3, Z[y == 3][0] + 0.3
    Z[far, 1] += 60.0
    return Z, y


def _lone_point():
    """A fifth class of one point: an anchor without a class mate."""
    Z, y = _clusters(2)
    y[-1] = y.max() + 1
    return Z, y


CASES = {
    "ordinary": lambda: _clusters(0),
    "far apart": _far_apart,
    "far from the origin": lambda: (_clusters(3)[0] + 5e3, _clusters(3)[1]),
    "lone point": _lone_point,
}


def _reference(Z: torch.Tensor, y: torch.Tensor, anchors: torch.Tensor, objective: str):
    """The sum of the anchors' terms and its gradient, by autograd in float64."""
    Z = Z.double().requires_grad_(True)
    total = objective_terms(log_class_mass(Z[anchors], y[anchors], Z, y, anchors), objective).sum()
    total.backward()
    return total.item(), Z.grad


def _check(fused, Z64, y, anchors, objective, tiles=(16, 32), value=False):
    Z = torch.tensor(Z64, dtype=torch.float32)
    y = torch.tensor(y)
    want_total, want_grad = _reference(Z, y, anchors, objective)
    grad, total, value_sum = fused(Z, y, anchors, objective, *tiles, value)
    assert torch.isfinite(grad).all()
    assert total == pytest.approx(want_total, rel=1e-5, abs=1e-5)
    if value:
        assert value_sum == total  # the value alone runs the same first kernel, without the sums
    scale = float(want_grad.abs().max())
    torch.testing.assert_close(grad.double(), want_grad, rtol=0, atol=_float32_error(Z, y) * scale)
    return grad, want_grad


def _float32_error(Z: torch.Tensor, y: torch.Tensor) -> float:
    """What float32 leaves of the gradient, relative to its largest entry: the kernels form
    each logit as 2 a.b - |a|^2 - |b|^2 from a tile's centre c (about its class mean), which
    rounds at about 2^-24 (|a - c|^2 + |b - c|^2); a weight exp(l) carries that relative
    error. A few times that for the point farthest from its class's mean: about 1e-5 for
    clusters of unit spread, 6e-3 for a point 115 from the rest of its class."""
    Z = Z.double()
    spread = max(float(((Z[y == c] - Z[y == c].mean(0)) ** 2).sum(1).max()) for c in torch.unique(y))
    return 8.0 * 2.0**-24 * spread


@needs_triton
@pytest.mark.parametrize("objective", ["f", "g"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_fused_kernels_give_the_reference_sums_and_gradient(fused, case, objective):
    """157 points (no multiple of either tile), every point an anchor; the value alone too
    in the ordinary case."""
    Z, y = CASES[case]()
    _check(fused, Z, y, torch.arange(len(y)), objective, value=case == "ordinary")


@needs_triton
@pytest.mark.parametrize("objective", ["f", "g"])
def test_a_subset_of_anchors_is_scored_against_every_point(fused, objective):
    """60 anchors of 157, tiles the other way round (32 anchors or points per program)."""
    Z, y = _clusters(4)
    anchors = torch.sort(torch.randperm(len(y), generator=torch.Generator().manual_seed(0))[:60]).values
    grad, _ = _check(fused, Z, y, anchors, objective, tiles=(32, 16))
    others = torch.ones(len(y), dtype=torch.bool)
    others[anchors] = False
    assert grad[others].abs().max() > 0  # points that are no anchor still feel the anchors' pull


@needs_triton
def test_no_anchors_sum_to_nothing(fused):
    Z, y = _clusters(5, n=40)
    grad, total, value = fused(torch.tensor(Z, dtype=torch.float32), torch.tensor(y), torch.arange(0), "g", 16, 16, True)
    assert total == value == 0.0 and not grad.any()


@needs_triton
def test_the_far_anchors_hold_their_terms_where_p_underflows(fused):
    """g of points whose class mates are 40 and more away: p_i is below the smallest
    float64, so only the class mates' own log-sum-exp keeps log p_i and the pull towards
    the class, which is the largest entry of the gradient."""
    Z, y = _far_apart()
    anchors = torch.arange(len(y))
    Z32, labels = torch.tensor(Z, dtype=torch.float32), torch.tensor(y)
    log_p = log_class_mass(Z32.double(), labels, Z32.double(), labels, anchors)
    misplaced = np.flatnonzero(y == 0)[:2]
    assert (log_p[misplaced] < -1000.0).all()  # e^-1000 underflows even float64
    _, want = _check(fused, Z, y, anchors, "g")
    assert int(want.abs().max(1).values.argmax()) in misplaced


# The most shared memory a block may take on an H100 or H200 (227 KiB).
SM90_SHARED_MEMORY = 232448


@needs_triton
@pytest.mark.slow
@pytest.mark.parametrize("d", [32, 128])
def test_the_kernels_compile_for_an_h100_as_the_schedule_launches_them(d, monkeypatch):
    """What the interpreter cannot check: that the kernels compile for sm_90 (no GPU needed),
    with the arguments, tiles and warps the schedule launches them with, and that each
    fits a block's shared memory there."""
    import triton
    from triton.backends.compiler import GPUTarget

    from nca_core.objective import fused, fused_kernels

    if not isinstance(fused_kernels.anchor_pass, triton.runtime.JITFunction):
        pytest.skip("TRITON_INTERPRET is set in this process: its kernels cannot compile")
    launches = []

    class Recorder:
        def __init__(self, kernel):
            self.kernel = kernel

        def __getitem__(self, grid):
            return lambda *args, **kwargs: launches.append((self.kernel, args, kwargs))

    recorded = SimpleNamespace(
        anchor_pass=Recorder(fused_kernels.anchor_pass), reference_pass=Recorder(fused_kernels.reference_pass)
    )
    monkeypatch.setattr(fused, "_kernels", lambda: recorded)
    monkeypatch.setattr(fused, "_check_device", lambda Z: None)
    Z, y = torch.randn(300, d), torch.arange(300) // 100
    schedule = fused.FusedSchedule("g")
    schedule.sums(Z, y, torch.arange(300), None)
    schedule.value_sum(Z, y, torch.arange(300), None)
    assert len(launches) == 3
    for kernel, args, kwargs in launches:
        warps = kwargs.pop("num_warps")
        types = {torch.float32: "*fp32", torch.int32: "*i32"}
        signature = {
            name: types[value.dtype] if isinstance(value, torch.Tensor) else "i32"
            for name, value in zip(kernel.arg_names, args)
        }
        signature.update(dict.fromkeys(kwargs, "constexpr"))
        source = triton.compiler.ASTSource(kernel, signature=signature, constexprs=kwargs)
        compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
        assert compiled.metadata.shared <= SM90_SHARED_MEMORY


def test_class_tiles_keep_each_class_whole_or_alone():
    """Small classes share a tile; a class that does not fit starts its own, full tiles
    first; no tile is longer than asked."""
    starts, lengths = class_tiles([5, 3, 40, 0, 7, 16, 1], 16)
    assert list(zip(starts, lengths)) == [(0, 8), (8, 16), (24, 16), (40, 8), (48, 7), (55, 16), (71, 1)]
    assert class_tiles([], 16) == ([], [])


def test_on_the_cpu_the_engine_keeps_its_own_schedules():
    from nca_core.objective.engine import GaussianSchedule, schedule_for

    assert isinstance(schedule_for(torch.zeros(10, 3), None, "f"), GaussianSchedule)


@needs_triton
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_the_engine_takes_the_fused_kernels_for_float32_up_to_their_width(monkeypatch):
    from nca_core.objective import fused
    from nca_core.objective.engine import FusedSchedule, GaussianSchedule, schedule_for

    monkeypatch.setattr(fused, "FUSED_ON_CUDA", False)  # until a GPU run shows they win
    assert isinstance(schedule_for(torch.zeros(10, 32, device="cuda"), None, "g"), GaussianSchedule)
    monkeypatch.setattr(fused, "FUSED_ON_CUDA", True)
    assert isinstance(schedule_for(torch.zeros(10, 32, device="cuda"), None, "g"), FusedSchedule)
    for Z in (torch.zeros(10, 200, device="cuda"), torch.zeros(10, 32, device="cuda", dtype=torch.float64)):
        assert isinstance(schedule_for(Z, None, "g"), GaussianSchedule)


def test_the_library_runs_without_triton():
    """With triton unimportable the kernels' module imports, says so, and the engine runs."""
    code = (
        "import json, torch\n"
        "from nca_core.objective import fused_kernels\n"
        "from nca_core.objective.engine import objective_value\n"
        "Z, y = torch.randn(30, 3), torch.arange(30) // 10\n"
        "print(json.dumps([fused_kernels.AVAILABLE, objective_value(Z, y, torch.arange(30), 'f') > 0]))\n"
    )
    assert run_without("triton", code) == [False, True]
