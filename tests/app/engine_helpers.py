"""Jobs of the training engine on a clock the test moves, and streams of frames to feed them.

A test starts its jobs through an ``Engine`` (each test module's ``engine`` fixture): they
share one ``ManualClock``, and every one still running is stopped when the test ends (a
failed assertion leaves no job training into the next test). ``settle`` lets each job reach
its next wait on the clock, after which what it has kept stays put until the clock moves or
a control is clicked: a test asserts counts and order, not seconds.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator

import numpy as np

from app_pages.engine.clock import ManualClock
from app_pages.engine.jobs import TrainingJob
from app_pages.engine.slots import JobSlots
from nca_core import NCA, datasets
from nca_core.training.loop import Snapshot

_EMBEDDING = np.zeros((4, 2), np.float32)  # every synthetic frame's points: their size is all a job reads


def frames(
    epochs: int | None = None, per_epoch: int = 1, clock: ManualClock | None = None, compute: float = 0.0
) -> Callable[[Callable[[], bool]], Iterator[Snapshot]]:
    """A job's ``make_stream``: the start frame (epoch 0), then ``per_epoch`` frames of each
    of ``epochs`` epochs (None: no end), as ``NCA.fit_iter`` yields them; each takes
    ``compute`` seconds of ``clock`` to compute, and ``should_stop`` ends the stream before
    the next."""

    def stream(should_stop: Callable[[], bool]) -> Iterator[Snapshot]:
        yield frame(0, 1.0)
        for epoch in itertools.count(1) if epochs is None else range(1, epochs + 1):
            for k in range(1, per_epoch + 1):
                if should_stop():
                    return
                yield frame(epoch, k / per_epoch)

    def frame(epoch: int, fraction: float) -> Snapshot:
        if compute:
            clock.advance(compute)
        return Snapshot(epoch, 0.0, 0.0, None, _EMBEDDING, fraction=fraction)

    return stream


ENDLESS = frames()


def rings_stream(**kwargs) -> Callable[[Callable[[], bool]], Iterator[Snapshot]]:
    """A real run on the rings (linear map, Adam), its frames from ``NCA.fit_iter``."""
    data = datasets.load("rings")
    nca = NCA(
        2, init="pca", optimizer="adam", learning_rate=0.1, batch_size=128, tol=0, device="cpu", **kwargs
    )
    return lambda should_stop: nca.fit_iter(data.X_train, data.y_train, should_stop=should_stop)


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll ``condition`` until it holds; ``timeout`` real seconds bound only a failure."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.005)
    raise AssertionError(f"not within {timeout} s: {condition}")


class Engine:
    """Training jobs on one ``ManualClock`` (``clock``); as a context, each is stopped at its end."""

    def __init__(self):
        self.clock = ManualClock()
        self.jobs: list[TrainingJob] = []

    def job(self, stream=ENDLESS, slots: JobSlots | None = None, **kwargs) -> TrainingJob:
        """A job on this engine's clock: an endless stream of one frame an epoch, and a
        training slot of its own, unless told otherwise."""
        job = TrainingJob(stream, slots or JobSlots(1), clock=self.clock, **kwargs)
        self.jobs.append(job)
        return job

    def settle(self, *jobs: TrainingJob) -> None:
        """Until each of ``jobs`` (all of them, by default) still alive waits on the clock,
        or has ended: what it keeps stays put until the clock moves or a click."""
        jobs = jobs or tuple(self.jobs)
        wait_until(lambda: self.clock.waiting == sum(job.alive for job in jobs))

    def advance(self, seconds: float, *jobs: TrainingJob) -> None:
        """Move the clock, once every job waits, and let them reach their next waits."""
        self.settle(*jobs)
        self.clock.advance(seconds)
        self.settle(*jobs)

    def run_until(self, done: Callable[[], bool], *jobs: TrainingJob, limit: int = 10_000) -> None:
        """Move the clock to the end of each next wait, the jobs settled in between, until
        ``done()``."""
        for _ in range(limit):
            self.settle(*jobs)
            if done():
                return
            if not self.clock.advance_to_next():
                raise AssertionError("nothing waits on the clock, and it is not done")
        raise AssertionError(f"not done after {limit} moves of the clock")

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> None:
        for job in self.jobs:
            job.stop()
        for job in self.jobs:
            job.join(30)
