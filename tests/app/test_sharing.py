"""Identical requests read one run: computed once, each page at its own pace on a clock the
test moves, each page's Pause and Stop its own, and each page's frames its own reading's."""

import threading

import numpy as np
import pytest
from engine_helpers import Engine, wait_until

from app_pages.engine import shared_runs
from app_pages.engine.frames import frame_bytes
from app_pages.engine.pacing import Pace
from app_pages.engine.slots import JobSlots
from nca_core import datasets
from nca_core.runs.run import Run, recommended_config

FULL_SPEED = Pace(0.0, False)
CAPPED = Pace(20.0, False)  # 20 epochs a second: a 40-epoch run lasts two seconds of the clock


def rings_run(epochs: int = 40, **changes) -> Run:
    data = datasets.load("rings")
    return Run(recommended_config(data).replace(max_iter=epochs, device="cpu", **changes), data)


@pytest.fixture
def engine():
    with Engine() as engine:
        yield engine


def page_job(engine, run: Run, pace: Pace, slots: JobSlots, turns: JobSlots | None = None, share=True):
    """A page's job for ``run``, one frame an epoch, as the Train page starts one: with
    ``share``, reading the run an identical request started where it may still be joined."""

    def make_stream(should_stop):
        return run.stream(frames_per_epoch=1, should_stop=should_stop)

    shared = shared_runs.join(shared_runs.share_key("rings", run, 1), run, make_stream) if share else None
    stream = None if share else make_stream
    epochs = run.config.max_iter
    return engine.job(stream, slots, pace=pace, total_epochs=epochs, threads=1, turns=turns, shared=shared)


@pytest.fixture
def streams(monkeypatch):
    """How many times a run's stream was started (each start computes the run anew)."""
    started = []
    stream = Run.stream

    def counted(self, *args, **kwargs):
        started.append(self)
        return stream(self, *args, **kwargs)

    monkeypatch.setattr(Run, "stream", counted)
    return started


def test_pages_asking_for_the_same_run_read_it_computed_once(engine, streams):
    slots, turns = JobSlots(1), JobSlots(1)
    first = page_job(engine, rings_run(), CAPPED, slots, turns)
    for _ in range(4):
        engine.advance(0.05)
    second = page_job(engine, rings_run(), CAPPED, slots, turns)  # one slot: no line for it
    engine.settle()
    assert second.state == "running" and slots.running == 1
    engine.run_until(lambda: not (first.alive or second.alive))
    assert first.state == second.state == "finished" and first.shared.source is second.shared.source
    assert len(streams) == 1
    assert [id(s) for s in second.snapshots] == [id(s) for s in first.snapshots]  # the same frames
    assert second.snapshots[0].epoch == 0 and second.latest.epoch == 40  # seen from its start
    assert len(first.snapshots) == len(second.snapshots) == 41  # each at its own pace, every frame
    # the same frames a run of its own computes ("same seed, same run")
    own = page_job(engine, rings_run(), FULL_SPEED, JobSlots(1), share=False)
    own.join(60)
    assert own.shared is None and len(streams) == 2
    for mine, theirs in zip(own.snapshots, first.snapshots, strict=True):
        np.testing.assert_array_equal(mine.embedding, theirs.embedding)


def test_a_page_that_stops_or_pauses_leaves_the_others_training(engine):
    slots, turns = JobSlots(1), JobSlots(1)
    stopping, pausing, watching = (page_job(engine, rings_run(), CAPPED, slots, turns) for _ in range(3))
    for _ in range(5):
        engine.advance(0.05)
    assert len(stopping.snapshots) == len(pausing.snapshots) == len(watching.snapshots) == 6
    assert slots.running == 1  # three pages, one run under way
    stopping.stop()
    pausing.pause()
    engine.run_until(lambda: not watching.alive)
    assert watching.state == "finished" and watching.latest.epoch == 40
    assert stopping.state == "stopped" and stopping.latest.epoch == 5
    assert pausing.state == "paused" and pausing.latest.epoch == 5  # held at the frame it showed
    # a page's own last frame is a run of its own to show (``Run.at``), not where the run went on to
    trained = watching.shared.run
    stopped = trained.at(stopping.latest)
    assert stopped.model.n_iter_ == 5 and trained.model.n_iter_ == 40
    np.testing.assert_array_equal(stopped.model.components_, stopping.latest.components)
    pausing.resume()
    engine.run_until(lambda: not pausing.alive)
    assert pausing.state == "finished" and pausing.latest is watching.latest


def test_a_finished_run_is_replayed_to_a_later_page_without_a_slot(engine, streams):
    slots = JobSlots(1)
    first = page_job(engine, rings_run(), FULL_SPEED, slots)
    first.join(60)
    assert first.state == "finished"
    busy = engine.job(slots=slots, max_epochs_per_second=20)  # holds the only slot
    engine.settle(busy)
    later = page_job(engine, rings_run(), FULL_SPEED, slots)
    later.join(60)
    assert busy.alive and busy.state == "running"
    assert later.state == "finished" and later.shared.source is first.shared.source and len(streams) == 1
    assert [id(s) for s in later.snapshots] == [id(s) for s in first.snapshots]


def test_a_run_every_page_stopped_is_not_joined_and_other_settings_are_not_shared(engine):
    slots = JobSlots(2)
    alone = page_job(engine, rings_run(), CAPPED, slots)
    for _ in range(2):
        engine.advance(0.05)
    alone.stop()
    alone.join(30)
    after = page_job(engine, rings_run(), FULL_SPEED, slots)
    other = page_job(engine, rings_run(learning_rate=0.05), FULL_SPEED, slots)
    unnamed = page_job(engine, rings_run(), FULL_SPEED, slots, share=False)  # an upload's: shared with no one
    for job in (after, other, unnamed):
        job.join(60)
    assert after.shared.source is not alone.shared.source and after.state == "finished"
    assert other.shared.source is not after.shared.source and unnamed.shared is None
    network = rings_run(encoder="mlp")
    assert shared_runs.share_key("rings", network, 1) is None


def test_pages_of_one_run_hold_one_slot_and_one_place_in_line():
    slots = JobSlots(1)
    never = threading.Event().is_set
    assert slots.acquire(1, never, share="a")
    assert slots.acquire(2, never, share="a")  # at once: its run holds the slot
    assert slots.running == 1
    waiting = []
    for ticket in (3, 4):  # two pages of another run, in line behind it as one
        threading.Thread(target=lambda t=ticket: waiting.append(slots.acquire(t, never, share="b"))).start()
    wait_until(lambda: slots.position(3) == slots.position(4) == 1)
    slots.release(1)
    assert slots.running == 1 and slots.position(3) == 1  # the run's other page holds it still
    slots.release(2)
    wait_until(lambda: waiting == [True, True])
    assert slots.running == 1 and slots.position(3) == slots.position(4) == 0


def test_a_page_that_joined_keeps_the_run_going_when_the_first_one_leaves_before_it_reads():
    """A page may wait before it reads (its job waits for a slot or a turn): the run it
    joined goes on for it all the same, and ends for a page that joins after every reader left."""
    run = rings_run(epochs=6)
    key = ("rings", "left before the joiner read")
    first = shared_runs.join(key, run, lambda stop: run.stream(should_stop=stop))
    assert [s.epoch for s in (next(first) for _ in range(3))] == [0, 1, 2]
    second = shared_runs.join(key, rings_run(epochs=6), None)
    assert second.source is first.source
    first.close()
    assert [s.epoch for s in second] == list(range(7))
    assert shared_runs.join(key, run, None).source is first.source  # finished: replayed to whoever asks
    other = rings_run(epochs=6)
    third = shared_runs.join(("rings", "left part-way"), other, lambda stop: other.stream(should_stop=stop))
    next(third)
    next(third)
    third.close()  # nobody reads on: the run ends where it was
    assert third.source.ended and shared_runs.join(("rings", "left part-way"), other, None).source is not third.source


def test_a_shared_run_holds_its_frames_budget_and_takes_no_one_new_past_it():
    run = rings_run(epochs=12)
    size = frame_bytes(next(iter(rings_run(epochs=1).stream())))
    shared = shared_runs.SharedRun(run, lambda stop: run.stream(should_stop=stop), max_bytes=4 * size)
    first, second = shared.reader(lambda: True), shared.reader(lambda: True)
    assert [s.epoch for s in (next(first) for _ in range(4))] == [0, 1, 2, 3]
    assert shared.joinable  # every frame so far kept, for a page that joins now
    assert [s.epoch for s in (next(second) for _ in range(2))] == [0, 1]
    assert next(first).epoch == 4 and not shared.joinable  # past the budget: frames 0 and 1 go
    assert [s.epoch for s in second] == list(range(2, 13))  # the reader behind read every frame
    # meanwhile the run went on, holding four frames: the reader left behind skips to them
    assert [s.epoch for s in first] == [9, 10, 11, 12]


def test_a_failure_reaches_every_page_reading_the_run():
    def failing(stop):
        yield from rings_run(epochs=3).stream(should_stop=stop)
        raise RuntimeError("the device went away")

    shared = shared_runs.SharedRun(rings_run(epochs=3), failing)
    readers = [shared.reader(lambda: True) for _ in range(2)]
    for reader in readers:
        with pytest.raises(RuntimeError, match="went away"):
            list(reader)
    assert shared.joinable is False
