"""The training loop: snapshots, stopping rules and divergence, whatever the strategy."""

import itertools
import threading
from dataclasses import replace

import numpy as np
import pytest
import torch

from nca_core.training.encoders import LinearEncoder
from nca_core.training.epochs import make_epochs
from nca_core.training.loop import Snapshot, TrainingDiverged, train
from nca_core.training.problem import Problem
from tests.training.plans import plan_of


@pytest.fixture
def sorted_problem():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(90, 4, generator=gen, dtype=torch.float64)
    y = torch.randint(0, 3, (90,), generator=gen)
    X[:, 0] += 3.0 * y  # one informative axis, so training has something to learn
    A = torch.randn(2, 4, generator=gen, dtype=torch.float64)
    return Problem.sorted_by_class(LinearEncoder(A), X, y)


class Doubling:
    """A stand-in strategy: doubles A each epoch; from epoch ``bad`` on its value is NaN."""

    converged = stalled = False
    message = ""

    def __init__(self, problem, exact, values, bad=None):
        self.problem, self.exact, self.values, self.bad = problem, exact, values, bad
        self.closed = 0

    def close(self):
        self.closed += 1

    def describe(self):
        return "a doubling stand-in"

    def start_value(self, generator=None):
        return self.problem.value(generator)

    def finished(self, value, previous, tol):
        return self.exact and value == previous

    def steps(self, epoch):
        yield 1, 1, self.run(epoch)

    def run(self, epoch):
        with torch.no_grad():
            self.problem.encoder.weight.mul_(2.0)
        return float("nan") if self.bad is not None and epoch >= self.bad else self.values(epoch)


def test_snapshots_are_copies_taken_at_each_epoch(sorted_problem):
    start, start_value = sorted_problem.encoder.weight.detach().clone().numpy(), sorted_problem.value()
    snaps = list(train(Doubling(sorted_problem, True, float), max_iter=3, tol=0.0))
    assert [s.epoch for s in snaps] == [0, 1, 2, 3]
    for power, snap in enumerate(snaps):
        np.testing.assert_allclose(snap.components, start * 2**power)
        np.testing.assert_allclose(snap.embedding, sorted_problem.X.numpy() @ snap.components.T, rtol=1e-5)
    assert snaps[0].objective == pytest.approx(start_value)


def test_divergence_restores_the_last_finite_map(sorted_problem):
    stream = train(Doubling(sorted_problem, True, float, bad=3), max_iter=5, tol=0.0)
    seen = [next(stream) for _ in range(3)]
    with pytest.raises(TrainingDiverged, match=r"epoch 3.*a doubling stand-in"):
        next(stream)
    torch.testing.assert_close(sorted_problem.encoder.weight, torch.as_tensor(seen[-1].components))


def test_the_loop_stops_when_the_strategy_says_it_has_finished(sorted_problem):
    snaps = list(train(Doubling(sorted_problem, True, lambda epoch: min(epoch, 3)), max_iter=10))
    assert [s.epoch for s in snaps] == [0, 1, 2, 3, 4]  # epoch 4 repeats epoch 3's value


def test_a_minibatch_mean_is_compared_from_the_second_epoch_on(sorted_problem):
    epochs = make_epochs(sorted_problem, plan_of(sorted_problem, optimizer="adam", learning_rate=0.05, batch_size=30))
    assert not epochs.finished(0.5, None, 1e-5)  # the first epoch has nothing to compare with
    assert epochs.finished(0.5, 0.5 + 1e-7, 1e-5)
    assert not epochs.finished(0.5, 0.51, 1e-5)
    assert not epochs.finished(0.5, 0.5, 0.0)  # tol=0: never


def test_accuracy_is_measured_every_few_epochs_and_at_the_last(sorted_problem):
    calls = []

    def evaluate(encoder):
        calls.append(encoder.weight.detach().clone())
        return 0.5, 0.25

    epochs = make_epochs(sorted_problem, plan_of(sorted_problem, optimizer="adam", learning_rate=0.05, batch_size=30), torch.Generator().manual_seed(0))
    snaps = list(train(epochs, max_iter=5, tol=0.0, evaluate=evaluate, eval_every=2))
    assert [s.train_accuracy is not None for s in snaps] == [True, False, True, False, True, True]
    assert snaps[2].test_accuracy == 0.25 and len(calls) == 4
    assert snaps[-1].objective > snaps[1].objective  # Adam on all-point neighbours learns


def test_frames_within_an_epoch_show_the_map_so_far(sorted_problem):
    """Four frames an epoch: three partial ones, evenly spaced, then the finished epoch."""
    epochs = make_epochs(sorted_problem, plan_of(sorted_problem, optimizer="adam", learning_rate=0.05, batch_size=10), torch.Generator().manual_seed(0))
    snaps = list(train(epochs, max_iter=2, tol=0.0, frames_per_epoch=4))
    assert [(s.epoch, s.fraction) for s in snaps] == [
        (0, 1.0), (1, 3 / 9), (1, 5 / 9), (1, 7 / 9), (1, 1.0), (2, 3 / 9), (2, 5 / 9), (2, 7 / 9), (2, 1.0)
    ]  # fmt: skip
    maps = [s.components for s in snaps]
    assert all(not np.array_equal(a, b) for a, b in itertools.pairwise(maps))  # every frame moved
    assert snaps[1].train_accuracy is None and snaps[1].elapsed <= snaps[4].elapsed


def test_a_full_batch_epoch_has_no_partial_frames(sorted_problem):
    epochs = make_epochs(sorted_problem, plan_of(sorted_problem, optimizer="lbfgs", learning_rate=1.0))
    assert [s.fraction for s in train(epochs, max_iter=2, tol=0.0, frames_per_epoch=4)] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("n, batch, frames", [(90, 10, 4), (88, 2, 22), (90, 10, 1)])
def test_partial_frames_are_exactly_frames_per_epoch_minus_one(sorted_problem, n, batch, frames):
    """Integer spacing: 44 batches at 22 frames gave an extra frame with float fractions."""
    problem = Problem.sorted_by_class(sorted_problem.encoder, sorted_problem.X[:n], sorted_problem.y[:n])
    epochs = make_epochs(problem, plan_of(problem, optimizer="sgd", learning_rate=0.001, batch_size=batch), torch.Generator().manual_seed(0))
    partial = [
        s.fraction for s in train(epochs, max_iter=1, tol=0.0, frames_per_epoch=frames) if s.fraction < 1
    ]
    assert len(partial) == frames - 1
    np.testing.assert_allclose(np.diff([0.0, *partial, 1.0]), 1 / frames, atol=1 / (n // batch))


@pytest.mark.parametrize("ending", ["runs out", "closed", "diverges"])
def test_the_strategy_is_closed_once_whatever_ends_training(sorted_problem, ending):
    strategy = Doubling(sorted_problem, exact=False, values=lambda e: 0.5, bad=2 if ending == "diverges" else None)
    stream = train(strategy, max_iter=3, tol=0.0)
    if ending == "closed":
        next(stream), next(stream)
        stream.close()
    elif ending == "diverges":
        with pytest.raises(TrainingDiverged):
            list(stream)
    else:
        assert len(list(stream)) == 4
    assert strategy.closed == 1


class Ended(Doubling):
    """A strategy whose search ends before epoch ``last + 1`` (as L-BFGS learns only when it
    asks for the next iterate): that epoch yields no step."""

    def __init__(self, problem, last):
        super().__init__(problem, exact=False, values=lambda e: float(e))
        self.last = last

    def steps(self, epoch):
        if epoch <= self.last:
            yield from super().steps(epoch)


def test_a_strategy_that_has_ended_takes_no_further_epoch(sorted_problem):
    snapshots = list(train(Ended(sorted_problem, last=2), max_iter=10, tol=0.0))
    assert [s.epoch for s in snapshots] == [0, 1, 2]


class StopRequested:
    """A real strategy, with a stop requested from outside (as a Stop button would) right
    after step ``done`` of ``epoch``."""

    def __init__(self, epochs, epoch: int, done: int):
        self.epochs, self.at, self.request = epochs, (epoch, done), threading.Event()

    def __getattr__(self, name):
        return getattr(self.epochs, name)

    def steps(self, epoch):
        for done, steps, value in self.epochs.steps(epoch):
            if (epoch, done) == self.at:
                self.request.set()
            yield done, steps, value


def _stopped_run(problem, epoch: int, done: int, evaluated: list) -> list[Snapshot]:
    """Snapshots of a 5-epoch run of 9 minibatches an epoch, stopped after step ``done`` of ``epoch``."""
    epochs = make_epochs(problem, plan_of(problem, optimizer="adam", learning_rate=0.05, batch_size=10), torch.Generator().manual_seed(0))
    stopping = StopRequested(epochs, epoch, done)

    def evaluate(encoder):
        evaluated.append(encoder.weight.detach().clone())
        return 0.5, 0.25

    return list(train(stopping, max_iter=5, tol=0.0, evaluate=evaluate, should_stop=stopping.request.is_set))


def test_a_stop_request_ends_the_loop_at_the_next_minibatch(sorted_problem):
    evaluated = []
    snaps = _stopped_run(sorted_problem, epoch=2, done=3, evaluated=evaluated)
    # one frame where it stopped, part-way: the map kept is the last one shown
    assert [(s.epoch, s.fraction) for s in snaps] == [(0, 1.0), (1, 1.0), (2, 3 / 9)]
    np.testing.assert_array_equal(sorted_problem.encoder.weight.detach().numpy(), snaps[-1].components)
    assert len(evaluated) == 2  # the start and epoch 1, nothing after the request


def test_a_stop_requested_in_an_epochs_last_step_skips_its_evaluation(sorted_problem):
    evaluated = []
    snaps = _stopped_run(sorted_problem, epoch=1, done=9, evaluated=evaluated)
    assert [(s.epoch, s.fraction) for s in snaps] == [(0, 1.0), (1, 1.0)]
    assert snaps[-1].train_accuracy is None and len(evaluated) == 1  # the start only


def test_a_stop_probe_belongs_to_the_run_it_is_given_to(sorted_problem):
    """Two runs in two threads: the one asked to stop ends at its start; the other trains on."""

    def run(should_stop):
        epochs = make_epochs(sorted_problem, plan_of(sorted_problem, optimizer="adam", learning_rate=0.05, batch_size=30), torch.Generator().manual_seed(0))
        return [s.epoch for s in train(epochs, max_iter=3, tol=0.0, should_stop=should_stop)]

    results = {}
    workers = [
        threading.Thread(target=lambda: results.update(stopped=run(lambda: True))),
        threading.Thread(target=lambda: results.update(going_on=run(None))),
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert results == {"stopped": [0], "going_on": [0, 1, 2, 3]}


def test_a_snapshots_accuracy_is_the_test_score_when_measured_else_leave_one_out():
    snap = Snapshot(1, 0.5, 0.1, None, np.zeros((2, 2)), train_accuracy=0.8, test_accuracy=0.7)
    assert snap.accuracy == 0.7
    assert replace(snap, test_accuracy=None).accuracy == 0.8
    assert replace(snap, test_accuracy=None, train_accuracy=None).accuracy is None


def test_a_long_epochs_partial_frames_carry_accuracies_every_few_seconds(sorted_problem, monkeypatch):
    """The number under the picture keeps pace with it: asked every epoch, a partial frame is
    evaluated once PARTIAL_EVAL_SECONDS of training have passed since the last evaluation
    (here 0: every partial frame); asked every second epoch, only epochs are."""
    from nca_core.training import loop

    calls = []

    def evaluate(encoder):
        calls.append(1)
        return 0.5, 0.25

    monkeypatch.setattr(loop, "PARTIAL_EVAL_SECONDS", 0.0)
    plan = plan_of(sorted_problem, optimizer="adam", learning_rate=0.05, batch_size=10)
    snaps = list(train(make_epochs(sorted_problem, plan, torch.Generator().manual_seed(0)), max_iter=2, tol=0.0,
                       evaluate=evaluate, frames_per_epoch=3))  # fmt: skip
    partial = [s for s in snaps if s.fraction < 1]
    assert partial and all(s.test_accuracy == 0.25 for s in partial)
    monkeypatch.setattr(loop, "PARTIAL_EVAL_SECONDS", 1e9)
    snaps = list(train(make_epochs(sorted_problem, plan, torch.Generator().manual_seed(0)), max_iter=2, tol=0.0,
                       evaluate=evaluate, frames_per_epoch=3))  # fmt: skip
    assert all(s.test_accuracy is None for s in snaps if s.fraction < 1)
    sparse = list(train(make_epochs(sorted_problem, plan, torch.Generator().manual_seed(0)), max_iter=2, tol=0.0,
                        evaluate=evaluate, eval_every=2, frames_per_epoch=3))  # fmt: skip
    assert all(s.test_accuracy is None for s in sparse if s.fraction < 1)
