"""Epoch strategies: candidate neighbours, the memory bank, batch-only neighbours."""

import math
import threading

import pytest
import torch

from nca_core.training.bank import BankEpochs, MemoryBank
from nca_core.training.candidates import CandidateEpochs
from nca_core.training.encoders import LinearEncoder
from nca_core.training.epochs import FLOAT32_RESTARTS, LBFGSEpochs, make_epochs
from nca_core.training.gradients import objective_and_gradient
from nca_core.training.minibatch import BatchEpochs, MinibatchEpochs
from nca_core.training.problem import Problem
from tests.training.plans import plan_of


class _NoStep:
    """An optimiser stand-in that keeps the gradient for inspection."""

    def __init__(self, encoder):
        self.encoder = encoder

    def zero_grad(self):
        self.encoder.weight.grad = None

    def step(self):
        pass


@pytest.mark.parametrize("objective", ["f", "g"])
def test_candidates_covering_everyone_give_the_exact_objective(problem, objective):
    X, y, A = problem
    encoder = LinearEncoder(A)
    problem = Problem(encoder, X, y, objective)
    plan = plan_of(problem, optimizer="adam", learning_rate=0.1, batch_size=len(X), n_candidates=len(X) - 1)
    epochs = CandidateEpochs(problem, plan, torch.Generator().manual_seed(0))
    epochs.optimizer = _NoStep(encoder)
    value = epochs.run(1)
    exact_encoder = LinearEncoder(A)
    exact = objective_and_gradient(exact_encoder, X, y, objective)
    assert value == pytest.approx(exact, rel=1e-10)
    torch.testing.assert_close(encoder.weight.grad, exact_encoder.weight.grad)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_covering_candidates_with_a_learnt_student_t_and_weight_decay_match_the_exact_step(problem, objective):
    """The closed-form step's gradients in the map and in the kernel's dof, with an L2
    penalty, against the exact engine's on the same pairs."""
    from nca_core.objective.kernels import StudentTKernel

    X, y, A = problem
    grads = []
    for make in ("candidates", "exact"):
        encoder, kernel = LinearEncoder(A), StudentTKernel(1.5, learn=True)
        if make == "exact":
            value = objective_and_gradient(encoder, X, y, objective, weight_decay=0.1, kernel=kernel)
        else:
            problem_ = Problem(encoder, X, y, objective, kernel=kernel, weight_decay=0.1)
            plan = plan_of(problem_, optimizer="adam", learning_rate=0.1, batch_size=len(X), n_candidates=len(X) - 1)
            epochs = CandidateEpochs(problem_, plan, torch.Generator().manual_seed(0))
            epochs.optimizer = _NoStep(encoder)
            value = epochs.run(1)
        grads.append((value, encoder.weight.grad, kernel.raw_dof.grad))
    (v, grad_A, grad_dof), (v_exact, grad_A_exact, grad_dof_exact) = grads
    assert v == pytest.approx(v_exact, rel=1e-10)
    torch.testing.assert_close(grad_A, grad_A_exact)
    assert float(grad_dof_exact) != 0.0
    torch.testing.assert_close(grad_dof, grad_dof_exact)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_a_uniform_sample_stands_in_for_the_points_beyond_the_candidates(problem, objective):
    """Two candidates each, and a sample as large as the data: every other point is in it
    once with weight n / n, so the objective is the exact one."""
    X, y, A = problem
    epochs = _two_candidates(Problem(LinearEncoder(A), X, y, objective), sample_size=len(X))
    epochs.optimizer = _NoStep(epochs.problem.encoder)
    value = epochs.run(1)
    exact = objective_and_gradient(LinearEncoder(A), X, y, objective)
    assert value == pytest.approx(exact, rel=1e-10)
    without_sample = _two_candidates(Problem(LinearEncoder(A), X, y, objective), sample_size=1)
    without_sample.optimizer = _NoStep(without_sample.problem.encoder)
    assert abs(without_sample.run(1) - exact) > 3 * abs(value - exact)


def _two_candidates(problem, sample_size):
    request = {"optimizer": "adam", "learning_rate": 0.1, "batch_size": len(problem.X), "n_candidates": 2}
    return CandidateEpochs(problem, plan_of(problem, **request, sample_size=sample_size), torch.Generator().manual_seed(0))


def test_memory_bank_update_is_a_momentum_average():

    bank = MemoryBank(torch.zeros(4, 2, dtype=torch.float64), momentum=0.25)
    bank.update(torch.tensor([1, 3]), torch.tensor([[4.0, 8.0], [-4.0, 0.0]], dtype=torch.float64))
    expected = torch.tensor([[0, 0], [3, 6], [0, 0], [-3, 0]], dtype=torch.float64)
    assert torch.equal(bank.embeddings, expected)
    bank.update(torch.tensor([1]), torch.tensor([[0.0, 0.0]], dtype=torch.float64))
    assert bank.embeddings[1].tolist() == [0.75, 1.5]
    with pytest.raises(ValueError, match="momentum"):
        MemoryBank(torch.zeros(2, 2), momentum=1.0)


def test_memory_bank_rows_carry_no_gradient_and_are_not_aliased():

    Z = torch.randn(5, 2, requires_grad=True)
    bank = MemoryBank(Z, momentum=0.5)
    assert not bank.embeddings.requires_grad
    bank.update(torch.tensor([0]), Z[:1] * 3)
    assert not torch.equal(bank.embeddings[0], Z[0].detach())  # the source was not written


def _one_step(problem, bank_mode, augment=None):
    """One full-batch step in memory/batch mode with a stand-in optimiser; returns the grad."""
    X, y, A = problem
    encoder = LinearEncoder(A)
    problem = Problem(encoder, X, y, "f", augment=augment)
    generator = torch.Generator().manual_seed(0)
    if bank_mode:
        with torch.no_grad():
            bank = MemoryBank(encoder(X) + 0.5, momentum=0.5)  # stale on purpose
        plan = plan_of(problem, optimizer="adam", learning_rate=0.1, batch_size=len(X), neighbors="memory")
        epochs = BankEpochs(problem, plan, generator, bank=bank)
    else:
        plan = plan_of(problem, optimizer="adam", learning_rate=0.1, batch_size=len(X), neighbors="batch")
        bank, epochs = None, BatchEpochs(problem, plan, generator)
    before = None if bank is None else bank.embeddings.clone()
    epochs.optimizer = _NoStep(encoder)
    epochs.run(1)
    return encoder, bank, before


def test_memory_mode_takes_gradients_through_anchors_only_and_then_refreshes_the_bank(problem):
    from tests.objective.reference import log_class_mass, objective_terms

    X, y, A = problem
    encoder, bank, before = _one_step(problem, bank_mode=True)
    A_ref = A.clone().requires_grad_(True)
    Z = X @ A_ref.T
    value = objective_terms(log_class_mass(Z, y, before, y, torch.arange(len(X))), "f").mean()
    (-value).backward()  # the bank is a constant: no gradient through the references
    torch.testing.assert_close(encoder.weight.grad, A_ref.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(bank.embeddings, 0.5 * before + 0.5 * (X @ A.T), rtol=1e-12, atol=1e-12)


def test_batch_mode_takes_neighbours_from_the_batch_with_gradients_through_both(problem):
    from tests.objective.reference import reference_objective

    X, y, A = problem
    encoder, _, _ = _one_step(problem, bank_mode=False)
    A_ref = A.clone().requires_grad_(True)
    (-reference_objective(X @ A_ref.T, y, "f") / len(X)).backward()
    torch.testing.assert_close(encoder.weight.grad, A_ref.grad, rtol=1e-10, atol=1e-12)


def test_bank_and_batch_modes_are_refused_with_lbfgs_and_nearest_needs_a_per_anchor_objective(problem):
    from nca_core.objective.kernels import StudentTKernel

    X, y, A = problem
    with pytest.raises(ValueError, match="needs a minibatch optimizer"):
        plan_of(Problem(LinearEncoder(A), X, y), optimizer="lbfgs", neighbors="memory")
    mcml = Problem(LinearEncoder(A), X, y, objective="mcml")
    for request in ({"n_candidates": 5}, {"neighbors": "nearest"}):
        with pytest.raises(ValueError, match="work with objective 'f' or 'g'"):
            plan_of(mcml, optimizer="adam", learning_rate=0.1, **request)
    student = Problem(LinearEncoder(A), X, y, kernel=StudentTKernel(1.0))
    plan = plan_of(student, optimizer="adam", learning_rate=0.1, neighbors="nearest")
    assert isinstance(make_epochs(student, plan), CandidateEpochs)


def _mirrored(X, generator):
    """A row-wise stand-in augmentation: features in reverse order (deterministic)."""
    assert isinstance(generator, torch.Generator)  # the strategy hands over its generator
    return X.flip(1)


def test_memory_mode_steps_on_the_augmented_anchors_and_banks_their_embeddings(problem):
    from tests.objective.reference import log_class_mass, objective_terms

    X, y, A = problem
    encoder, bank, before = _one_step(problem, bank_mode=True, augment=_mirrored)
    A_ref = A.clone().requires_grad_(True)
    Z = X.flip(1) @ A_ref.T
    value = objective_terms(log_class_mass(Z, y, before, y, torch.arange(len(X))), "f").mean()
    (-value).backward()
    torch.testing.assert_close(encoder.weight.grad, A_ref.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(
        bank.embeddings, 0.5 * before + 0.5 * (X.flip(1) @ A.T), rtol=1e-12, atol=1e-12
    )


def test_batch_mode_steps_on_the_augmented_batch(problem):
    from tests.objective.reference import reference_objective

    X, y, A = problem
    encoder, _, _ = _one_step(problem, bank_mode=False, augment=_mirrored)
    A_ref = A.clone().requires_grad_(True)
    (-reference_objective(X.flip(1) @ A_ref.T, y, "f") / len(X)).backward()
    torch.testing.assert_close(encoder.weight.grad, A_ref.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("options", [{"neighbors": "all"}, {"neighbors": "all", "n_candidates": 5}])
def test_augmenting_needs_anchors_encoded_on_their_own(problem, options):
    X, y, A = problem
    augmented = Problem(LinearEncoder(A), X, y, augment=_mirrored)
    with pytest.raises(ValueError, match="shift and augment need a minibatch optimizer with neighbors='memory'"):
        plan_of(augmented, optimizer="adam", learning_rate=0.1, **options)
    with pytest.raises(ValueError, match="shift and augment need"):
        plan_of(augmented, optimizer="lbfgs")


class _RateLog(_NoStep):
    """A stand-in optimiser that records the step size of every step."""

    def __init__(self, encoder):
        super().__init__(encoder)
        self.param_groups, self.rates = [{"lr": None}], []

    def step(self):
        self.rates.append(self.param_groups[0]["lr"])


@pytest.mark.parametrize("decay_epochs, expected", [
    (None, [0.1] * 8),
    (2, [0.1 * (1 + math.cos(math.pi * k / 8)) / 2 for k in range(8)]),
    (1, [0.1 * (1 + math.cos(math.pi * k / 4)) / 2 for k in range(4)] + [0.0] * 4),
])  # fmt: skip
def test_the_step_size_falls_along_a_half_cosine_step_by_step(problem, decay_epochs, expected):
    X, y, A = problem
    encoder = LinearEncoder(A)
    problem = Problem(encoder, X, y, "f")
    schedule = {"learning_rate_schedule": "cosine", "max_iter": decay_epochs} if decay_epochs else {}
    plan = plan_of(problem, optimizer="adam", learning_rate=0.1, batch_size=30, neighbors="memory", **schedule)
    epochs = make_epochs(problem, plan, torch.Generator().manual_seed(0))
    epochs.optimizer = _RateLog(encoder)
    epochs.optimizer.param_groups[0]["lr"] = 0.1
    epochs.run(1), epochs.run(2)  # 120 points in batches of 30: 4 steps an epoch
    assert epochs.optimizer.rates == pytest.approx(expected, abs=1e-15)


def _shifted_images_step(dtype, offset):
    """The gradient (as float64) of one memory-bank step in ``dtype`` on 4 x 4 images that
    RandomShift moves by a pixel."""
    from nca_core.training.augmentation import RandomShift

    gen = torch.Generator().manual_seed(0)
    centres = torch.tensor([0.0, 1.0, 12.0], dtype=torch.float64)  # class 2 lies far from 0 and 1
    y = torch.arange(3).repeat_interleave(40)
    X = centres[y, None] + torch.randn(120, 16, generator=gen, dtype=torch.float64) + offset
    A = 0.3 * torch.randn(2, 16, generator=gen, dtype=torch.float64)
    encoder = LinearEncoder(A.to(dtype))
    problem = Problem(encoder, X.to(dtype), y, "g", augment=RandomShift((4, 4), 1))
    plan = plan_of(problem, optimizer="adam", learning_rate=0.1, batch_size=120, neighbors="memory")
    epochs = make_epochs(problem, plan, torch.Generator().manual_seed(1))
    epochs.optimizer = _NoStep(encoder)
    epochs.run(1)
    return encoder.weight.grad.double()


@pytest.mark.parametrize("offset", [0.0, 1e3])
def test_a_float32_step_on_shifted_images_matches_float64(offset):
    """The user's dtype on far-apart classes, near and far from the origin: the same shifts
    (one generator) give the float64 step's gradient."""
    want = _shifted_images_step(torch.float64, offset)
    got = _shifted_images_step(torch.float32, offset)
    tolerance = 1e-4 if offset == 0 else 1e-3  # float32 holds 1e3 to about 6e-5
    torch.testing.assert_close(got, want, rtol=0, atol=tolerance * float(want.abs().max()))


def test_a_point_drawn_twice_is_masked_in_both_draws():
    from nca_core.training.candidates import _sampled_candidates

    candidates = torch.tensor([[5, 7, -1], [1, 2, 3]])
    sample = torch.tensor([5, 9, 5, 3, 0])
    mask = _sampled_candidates(candidates, sample, n=10)
    assert mask.tolist() == [[True, False, True, False, False], [False, False, False, True, False]]


def test_the_drawn_candidates_mask_matches_a_direct_search_with_many_repeats():
    """Draws repeated two and three times, candidates missing (-1): the mask is exactly
    'this draw is one of the row's candidates'."""
    from nca_core.training.candidates import _sampled_candidates

    generator = torch.Generator().manual_seed(0)
    n = 30
    candidates = torch.randint(-1, n, (50, 6), generator=generator)
    sample = torch.randint(n, (40,), generator=generator)  # 40 draws of 30 points: many repeats
    assert len(torch.unique(sample)) < 30
    want = [[int(s) in set(row.tolist()) - {-1} for s in sample] for row in candidates]
    assert _sampled_candidates(candidates, sample, n).tolist() == want


@pytest.mark.parametrize("student_t", [False, True])
@pytest.mark.parametrize("objective", ["f", "g"])
def test_nearest_step_in_float32_matches_float64_far_from_the_origin_with_a_far_class(
    problem, objective, student_t
):
    """The approximate step's objective and gradient in A, float32 against float64, with
    one class 30 units away and every point 1e3 from the origin; Gaussian and Student-t."""
    from nca_core.objective.kernels import GaussianKernel, StudentTKernel

    X, y, A = problem
    X = X.clone()
    X[y == 0] += 30.0
    X += 1e3
    results = {}
    for dtype in (torch.float32, torch.float64):
        problem_ = Problem(
            LinearEncoder(A.to(dtype)), X.to(dtype), y, objective,
            kernel=StudentTKernel(1.0) if student_t else GaussianKernel(),
        )  # fmt: skip
        plan = plan_of(problem_, optimizer="adam", learning_rate=0.1, batch_size=len(X), n_candidates=4, sample_size=16)
        epochs = CandidateEpochs(problem_, plan, torch.Generator().manual_seed(0))
        epochs.optimizer = _NoStep(epochs.problem.encoder)
        value = epochs.run(1)
        results[dtype] = (value, epochs.problem.encoder.weight.grad.double())
    (v32, g32), (v64, g64) = results[torch.float32], results[torch.float64]
    assert v32 == pytest.approx(v64, rel=1e-3, abs=1e-4)
    torch.testing.assert_close(g32, g64, rtol=0, atol=2e-3 * float(g64.abs().max()))


def test_a_problem_takes_its_devices_block_size_unless_given_one():
    from nca_core.objective.engine import DEFAULT_BLOCK_ELEMENTS

    X, y = torch.randn(30, 4), torch.arange(30) % 3
    encoder = LinearEncoder(torch.eye(2, 4))
    assert Problem.sorted_by_class(encoder, X, y).block_elements == DEFAULT_BLOCK_ELEMENTS  # on the CPU
    assert Problem.sorted_by_class(encoder, X, y, block_elements=900).block_elements == 900


@pytest.mark.parametrize(("dtype", "restarts"), [(torch.float32, FLOAT32_RESTARTS), (torch.float64, 0)])
def test_only_float32_blockwise_searches_restart(dtype, restarts):
    """Float32's rounding spoils L-BFGS's memory, so its searches are confirmed by fresh
    ones; float64's (over the whole-matrix engine's limit) take scikit-learn's path as it is."""
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(450, 3, generator=gen, dtype=dtype)
    y = torch.arange(450) % 3
    problem = Problem.sorted_by_class(LinearEncoder(torch.eye(2, 3, dtype=dtype)), X, y)
    epochs = make_epochs(problem, plan_of(problem, optimizer="lbfgs"))
    try:
        assert isinstance(epochs, LBFGSEpochs) and epochs.lbfgs.restarts == restarts
    finally:
        epochs.close()


def test_strategies_whose_steps_skip_the_exact_engine_let_its_matrices_go_after_the_start(problem):
    """The start's objective fills the workspace with the exact engine's matrices: an exact
    minibatch run keeps them for its steps; the others, which never use them, let them go
    (at a million points they are several hundred megabytes)."""
    X, y, A = problem
    kept = {}
    for strategy, neighbors in ((MinibatchEpochs, "all"), (CandidateEpochs, "nearest"), (BatchEpochs, "batch"),
                                (BankEpochs, "memory")):  # fmt: skip
        p = Problem(LinearEncoder(A.clone()), X, y, "f")
        plan = plan_of(p, optimizer="adam", learning_rate=0.01, batch_size=16, neighbors=neighbors)
        strategy(p, plan, torch.Generator().manual_seed(0)).start_value()
        kept[strategy.__name__] = sorted(p.workspace._buffers)
    assert kept["MinibatchEpochs"] == ["exponent", "pairs", "references"]
    assert kept["CandidateEpochs"] == kept["BatchEpochs"] == kept["BankEpochs"] == []


def test_two_threads_on_one_problem_fill_workspaces_of_their_own(problem):
    """A Problem shared by two runs in two threads (or by L-BFGS's worker and its caller):
    each thread's engine writes its matrices into its own workspace, not into the other's."""
    X, y, A = problem
    p = Problem(LinearEncoder(A.clone()), X, y, "f")
    seen = []
    worker = threading.Thread(target=lambda: seen.append(p.workspace))
    worker.start()
    worker.join()
    assert p.workspace is p.workspace and seen[0] is not p.workspace


def test_a_candidate_step_gathers_its_rows_into_one_buffer_sized_once(problem):
    """The rows a step gathers vary from step to step; the buffer they go into is made once,
    for the most a step can gather (batch * (candidates + 1) + sample), not at each new largest."""
    X, y, A = problem
    p = Problem(LinearEncoder(A.clone()), X, y, "f")
    plan = plan_of(p, optimizer="adam", learning_rate=0.01, batch_size=16, n_candidates=4, sample_size=8)
    epochs = CandidateEpochs(p, plan, torch.Generator().manual_seed(0))
    epochs.prepare(1)
    buffers = set()
    for anchors in epochs.batches():
        epochs.step(anchors)
        buffers.add(p.workspace._buffers["gathered"].data_ptr())
    assert len(buffers) == 1 and p.workspace._buffers["gathered"].numel() == (16 * 5 + 8) * X.shape[1]


def test_the_estimators_sample_size_reaches_the_candidate_step(problem):
    """sample_size travels from the estimator's parameters through its plan to the step: a
    sample of every point makes two candidates' first epoch the exact one, a single draw
    does not; a sample of no point is refused with the other parameters."""
    from sklearn.utils._param_validation import InvalidParameterError

    from nca_core import NCA

    X, y, A = problem
    X, y = X.numpy(), y.numpy()

    def first_epoch(sample_size):
        model = NCA(2, init=A.numpy(), optimizer="adam", learning_rate=1e-12, batch_size=len(X), n_candidates=2,
                    sample_size=sample_size, max_iter=1, random_state=0, dtype="float64")  # fmt: skip
        return model.fit(X, y).objective_curve_[1]

    exact = objective_and_gradient(LinearEncoder(A), torch.as_tensor(X), torch.as_tensor(y), "f")
    assert first_epoch(len(X)) == pytest.approx(exact, rel=1e-9)
    assert abs(first_epoch(1) - exact) > 1e-4
    with pytest.raises(InvalidParameterError, match="'sample_size' parameter"):
        NCA(sample_size=0).fit(X, y)
