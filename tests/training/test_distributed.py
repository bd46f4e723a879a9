"""The one-process group, the environment helpers, and two real gloo processes under torchrun.

tests/test_cli.py already trains USPS end to end under torchrun; here two processes check
the objective and gradient of one call against the single-process call, in float64.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import distributed as dist

from nca_core.training.distributed import (
    LOCAL,
    LocalGroup,
    active_world_size,
    barrier,
    init_from_environment,
    process_device,
    shutdown,
)
from nca_core.training.encoders import LinearEncoder
from nca_core.training.gradients import objective_and_gradient

TORCHRUN_ENV = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@pytest.fixture
def no_torchrun(monkeypatch):
    for name in TORCHRUN_ENV:
        monkeypatch.delenv(name, raising=False)
    assert not dist.is_initialized()


def _sorted_wine(wine, n=None):
    X, y = wine
    order = np.argsort(y, kind="stable")[:n]
    return torch.tensor(X[order], dtype=torch.float64), torch.tensor(y[order], dtype=torch.int64)


# LOCAL ----------------------------------------------------------------------------------


def test_local_is_a_one_process_group_owning_every_row():
    assert isinstance(LOCAL, LocalGroup)
    assert (LOCAL.rank, LOCAL.world_size) == (0, 1)
    X = torch.arange(12.0).reshape(6, 2)
    assert torch.equal(X[LOCAL.rows], X)


def test_local_embed_returns_one_embedding_with_and_without_gradient(wine):
    X, _ = _sorted_wine(wine)
    encoder = LinearEncoder(
        torch.randn(2, 13, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    )
    Z_mine, Z_all = LOCAL.embed(encoder, X)
    torch.testing.assert_close(Z_mine, X @ encoder.weight.T, rtol=0, atol=1e-12)
    assert Z_mine.requires_grad and not Z_all.requires_grad
    assert torch.equal(Z_mine, Z_all) and Z_all.data_ptr() == Z_mine.data_ptr()  # a view, not a copy


def test_local_owns_every_anchor_and_sums_nothing():
    anchors = torch.tensor([4, 0, 2])
    assert LOCAL.my_anchors(anchors) is anchors
    total = torch.tensor([1.5, -2.0])
    assert LOCAL.sum_(total) is total
    assert total.tolist() == [1.5, -2.0]


def test_objective_and_gradient_with_local_matches_autograd_on_the_nca_formula(wine):
    """The single-process reference of the two-process test, checked against explicit NCA maths."""
    X, y = _sorted_wine(wine, 60)
    A = torch.randn(2, 13, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) * 0.3
    encoder = LinearEncoder(A)
    value = objective_and_gradient(encoder, X, y, "f", group=LOCAL)

    A_ref = A.clone().requires_grad_(True)
    Z = X @ A_ref.T
    logits = -(torch.cdist(Z, Z) ** 2)
    logits.fill_diagonal_(-torch.inf)
    p = torch.softmax(logits, dim=1)
    f = (p * (y[:, None] == y[None, :])).sum(1).mean()
    f.backward()
    assert value == pytest.approx(f.item(), rel=1e-10)
    torch.testing.assert_close(encoder.weight.grad, -A_ref.grad, rtol=1e-9, atol=1e-12)


# Environment helpers --------------------------------------------------------------------


def test_without_a_process_group_the_world_is_one_process(no_torchrun):
    assert active_world_size() == 1
    barrier()  # dist.barrier would raise without an initialised group
    shutdown()
    assert not dist.is_initialized()


@pytest.mark.parametrize(
    "env",
    [{}, {"WORLD_SIZE": "1"}, {"WORLD_SIZE": "1", "LOCAL_RANK": "3", "RANK": "3"}],
    ids=["no-variables", "world-of-one", "world-of-one-with-rank"],
)
def test_init_from_environment_outside_torchrun_joins_nothing(no_torchrun, monkeypatch, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert init_from_environment() == (0, 1, "auto")
    assert init_from_environment("cpu") == (0, 1, "cpu")
    assert not dist.is_initialized() and active_world_size() == 1


@pytest.mark.parametrize(
    ("requested", "local_rank", "local_processes", "gpus", "expected"),
    [
        ("auto", 1, 2, 2, "cuda:1"),  # a GPU for every process
        ("auto", 3, 4, 8, "cuda:3"),
        ("auto", 1, 2, 1, "cpu"),  # two processes, one GPU: NCCL would refuse, so gloo on the CPU
        ("auto", 0, 4, 0, "cpu"),
        ("cuda", 1, 2, 2, "cuda:1"),  # "cuda": a GPU of its own, as "auto" gives
        ("cpu", 1, 2, 2, "cpu"),  # a numbered device or the CPU is never overridden
        ("cuda:0", 1, 2, 2, "cuda:0"),
    ],
)
def test_process_device(requested, local_rank, local_processes, gpus, expected):
    assert process_device(requested, local_rank, local_processes, gpus) == expected


def test_cuda_for_more_processes_than_gpus_is_refused_with_the_counts():
    with pytest.raises(ValueError, match="each of the 2 processes on this machine a GPU of its own, but it has 1"):
        process_device("cuda", 1, 2, 1)


# Two processes ----------------------------------------------------------------------------

# Each rank computes objective_and_gradient through a DataParallelGroup and writes the value
# and the encoder's gradients; the test recomputes them with LOCAL in its own process.
_WORKER = """
import json, sys
import numpy as np
import torch
from sklearn.datasets import load_wine
from sklearn.preprocessing import StandardScaler
from nca_core.training.encoders import make_encoder

from nca_core.training.gradients import objective_and_gradient

N = 177  # odd, so the two processes embed unequal shares (89 and 88 rows)
CASES = {
    "linear-f": ("linear", "f", None, 0.0),
    "linear-f-anchors-decay": ("linear", "f", [170, 3, 64, 99, 150, 5, 120], 0.01),
    "linear-g": ("linear", "g", None, 0.0),
    "mlp-f": ("mlp", "f", None, 0.0),
}


def problem():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    order = np.argsort(y, kind="stable")[:N]
    return torch.tensor(X[order]), torch.tensor(y[order])


def encoder(kind):
    init = torch.randn(2, 13, dtype=torch.float64, generator=torch.Generator().manual_seed(0)) * 0.3
    return make_encoder(kind, 13, 2, init=None if kind == "mlp" else init, hidden_sizes=(8,),
                        generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def run(name, group):
    kind, objective, anchors, decay = CASES[name]
    X, y = problem()
    enc = encoder(kind)
    if group is not None:
        group = group(enc, len(X))
        extra = {"group": group}
    else:
        extra = {}
    anchors = None if anchors is None else torch.tensor(anchors)
    value = objective_and_gradient(enc, X, y, objective, anchors, decay, **extra)
    return value, [p.grad.tolist() for p in enc.parameters()], extra.get("group")


if __name__ == "__main__":
    from nca_core.training.distributed import (DataParallelGroup, active_world_size, barrier,
                                      init_from_environment, shutdown)

    rank, world_size, _ = init_from_environment("cpu")
    report = {"rank": rank, "world_size": world_size, "active": active_world_size(), "cases": {}}
    for name in CASES:
        value, grads, group = run(name, DataParallelGroup)
        rows = group.rows
        report["cases"][name] = {"value": value, "grads": grads, "rows": [rows.start, rows.stop]}
        del group  # each holds a DistributedDataParallel copy: free it before leaving the group
    with open(f"{sys.argv[1]}/rank{rank}.json", "w") as f:
        json.dump(report, f)
    import gc

    gc.collect()  # under load, a DDP reducer still alive at destroy_process_group aborted the process
    barrier()
    shutdown()
"""


def _load_worker(path: Path):
    spec = importlib.util.spec_from_file_location("nca_two_process_worker", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_two_gloo_processes_give_the_single_process_objective_and_gradient(tmp_path, no_torchrun):
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}  # gloo on the CPU
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         str(script), str(tmp_path)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    reports = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    worker = _load_worker(script)

    assert [(r["rank"], r["world_size"], r["active"]) for r in reports] == [(0, 2, 2), (1, 2, 2)]
    for name in worker.CASES:
        value, grads, _ = worker.run(name, None)  # this process: no group, LOCAL
        assert [r["cases"][name]["rows"] for r in reports] == [[0, 89], [89, 177]]
        for report in reports:
            case = report["cases"][name]
            assert case["value"] == pytest.approx(value, rel=1e-12), name
            assert len(case["grads"]) == len(grads)
            for got, expected in zip(case["grads"], grads):
                np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=name)
        assert np.abs(np.asarray(grads[0])).max() > 1e-4, name  # a real gradient, not zeros
