"""Our Adam and SGD take the same steps as torch.optim's."""

import pytest
import torch

from nca_core.training.optimizers import SGD, Adam, cosine_factor


def _trajectory(make, steps=25):
    gen = torch.Generator().manual_seed(0)
    w = torch.nn.Parameter(torch.randn(4, 3, generator=gen, dtype=torch.float64))
    target = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    opt = make([w])
    path = []
    for _ in range(steps):
        opt.zero_grad()
        ((w - target) ** 4).sum().backward()
        opt.step()
        path.append(w.detach().clone())
    return torch.stack(path)


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (lambda p: Adam(p, lr=0.05), lambda p: torch.optim.Adam(p, lr=0.05)),
        (lambda p: SGD(p, lr=0.01), lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True)),
    ],
    ids=["adam", "sgd"],
)
def test_steps_match_torch_optim(ours, theirs):
    torch.testing.assert_close(_trajectory(ours), _trajectory(theirs), rtol=1e-12, atol=1e-12)


def test_a_first_step_imports_no_compiler():
    import subprocess
    import sys

    code = (
        "import sys, torch\nfrom nca_core.training.optimizers import Adam\n"
        "w = torch.nn.Parameter(torch.zeros(3)); opt = Adam([w], lr=0.1)\n"
        "w.grad = torch.ones(3); opt.step()\nprint('torch._dynamo' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_cosine_factor_falls_from_one_to_zero_along_a_half_cosine():
    assert [cosine_factor(p) for p in (0.0, 0.5, 1.0)] == pytest.approx([1.0, 0.5, 0.0], abs=1e-15)
    assert cosine_factor(0.25) == pytest.approx((1 + 2**-0.5) / 2)
    assert cosine_factor(-1.0) == 1.0 and cosine_factor(3.0) == 0.0  # clamped to the run
