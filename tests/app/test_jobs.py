"""The background job runner, without Streamlit: a job's life from its slot to its end, who
may end it, and the memory it gives back. Its jobs run on a clock the test moves
(``engine_helpers``), but for one that times a real run."""

import gc
import threading
import weakref
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from engine_helpers import Engine, frames, rings_stream, wait_until

from app_pages.engine import collection, process
from app_pages.engine.jobs import TrainingJob
from app_pages.engine.slots import JobSlots
from nca_core import NCA, datasets
from nca_core.training.encoders import LinearEncoder
from nca_core.training.epochs import make_epochs
from nca_core.training.loop import train
from nca_core.training.problem import Problem
from tests.training.plans import plan_of


@pytest.fixture
def engine():
    with Engine() as engine:
        yield engine


# The real runs below train on one thread, as the app trains a small set: on two cores busy
# with other tests, two threads took 17 s for 50 epochs of the rings that one thread trains in 2 s.


def test_runs_to_the_end():
    job = TrainingJob(rings_stream(max_iter=5), JobSlots(1), threads=1)
    job.join(60)
    assert job.state == "finished" and [s.epoch for s in job.snapshots] == list(range(6))


class GatedSteps:
    """A real minibatch strategy whose steps each wait for the test's leave (``allowed``),
    90 an epoch: with one frame an epoch, the stream hands the job its next frame 90 steps
    on (a long MNIST epoch, in small)."""

    def __init__(self):
        gen = torch.Generator().manual_seed(0)
        X, y = torch.randn(90, 3, generator=gen, dtype=torch.float64), torch.arange(90) % 3
        problem = Problem.sorted_by_class(LinearEncoder(torch.eye(2, 3, dtype=torch.float64)), X, y)
        plan = plan_of(problem, optimizer="sgd", learning_rate=0.01, batch_size=1)
        self.epochs = make_epochs(problem, plan, gen)
        self.allowed = threading.Semaphore(0)

    def __getattr__(self, name):
        return getattr(self.epochs, name)

    def steps(self, epoch):
        for step in self.epochs.steps(epoch):
            self.allowed.acquire()
            yield step


def test_stop_ends_a_job_at_the_next_minibatch_not_the_next_frame(engine):
    gated = GatedSteps()
    job = engine.job(lambda should_stop: train(gated, max_iter=10, tol=0.0, should_stop=should_stop))
    try:
        wait_until(lambda: job.snapshots)  # the start; the next frame is 90 steps away
        job.stop()
        gated.allowed.release()  # one step: the stream asks after it
        job.join(30)
        assert not job.alive and job.state == "stopped"
        assert job.latest.fraction == pytest.approx(1 / 90)  # the map it stopped with, one step in
    finally:
        gated.allowed.release(1000)  # a job that missed the stop trains on to its end


def test_stop_does_not_wait_for_the_start_frame_to_be_drawn(engine):
    job = engine.job(hold_first_frame=1.5)
    engine.settle()  # held until a page draws it, which none does here
    job.stop()
    job.join(30)
    assert not job.alive and job.state == "stopped" and len(job.snapshots) == 1
    assert engine.clock.now() == 1000.0  # it never waited for the clock


def test_a_page_that_stops_polling_ends_its_job(engine):
    job = engine.job(max_epochs_per_second=4, heartbeat_timeout=0.5)
    for _ in range(8):  # polled: it trains on, past its timeout
        job.heartbeat()
        engine.advance(0.25)
    engine.advance(0.25)
    assert job.alive  # 0.5 s since the last poll: not past it
    engine.advance(0.25)
    job.join(30)
    assert not job.alive and job.state == "stopped"
    assert job.stop_reason == "the page stopped asking for updates"


def test_a_closed_tab_ends_its_job_within_an_epoch(engine):
    tab_open = [True]
    job = engine.job(max_epochs_per_second=20, connected=lambda: tab_open[0])
    for _ in range(2):
        engine.advance(0.05)
    tab_open[0] = False
    closed_at = len(job.snapshots)
    engine.advance(0.05)
    job.join(30)
    assert not job.alive and job.state == "stopped"
    assert job.stop_reason == "the browser tab was closed"
    assert len(job.snapshots) == closed_at  # it ended at the frame's end, before the next


def test_a_reloaded_tab_takes_up_its_job_within_the_grace_and_a_closed_one_ends_it(engine):
    """A reload closes the tab that started a run: the run trains on for ``reload_grace``
    seconds from the frame at which it finds the tab gone, and the reloaded page adopts it;
    without a reload, it ends once they pass, not before."""
    old_tab, new_tab = [True], [True]
    job = engine.job(max_epochs_per_second=4, connected=lambda: old_tab[0], reload_grace=1.0)
    engine.advance(0.25)
    old_tab[0] = False
    for _ in range(4):  # found gone at the first, 0.75 s of the grace to the fourth
        engine.advance(0.25)
    assert job.alive
    job.adopt(lambda: new_tab[0])
    for _ in range(8):
        engine.advance(0.25)
    assert job.alive and job.stop_reason is None  # past the grace of the first tab
    adopted_at = len(job.snapshots)
    new_tab[0] = False
    for _ in range(4):
        engine.advance(0.25)
    assert job.alive
    engine.advance(0.25)
    job.join(30)
    assert not job.alive and job.stop_reason == "the browser tab was closed"
    assert len(job.snapshots) == adopted_at + 4  # it trained on through the new tab's grace


def test_a_followed_run_goes_on_while_its_tab_is_gone_and_ends_once_nobody_follows(engine):
    """Under a class's load the lecturer's tab can drop its connection for longer than the
    grace while thirty pages follow the run: it must not end for all of them. Followers'
    draws (``followed``) count as watching, within the same grace; once they stop, the
    run ends as for any closed tab."""
    tab = [True]
    job = engine.job(max_epochs_per_second=4, connected=lambda: tab[0], reload_grace=1.0)
    engine.advance(0.25)
    tab[0] = False
    for _ in range(12):  # three seconds with the tab gone, a follower drawing every frame
        job.watch.followed()
        engine.advance(0.25)
    assert job.alive and job.stop_reason is None
    for _ in range(2):  # the followers leave: the grace runs from their last draw
        engine.advance(0.25)
    assert job.alive
    for _ in range(2):
        engine.advance(0.25)
    job.join(30)
    assert not job.alive and job.stop_reason == "the browser tab was closed"


def test_slots_queue_jobs_in_order(engine):
    slots = JobSlots(1)
    first = engine.job(slots=slots, max_epochs_per_second=20)
    engine.settle(first)
    second = engine.job(frames(epochs=2), slots)
    wait_until(lambda: second.queue_position == 1)
    assert second.state == "queued" and not second.snapshots and first.state == "running"
    first.stop()
    second.join(30)
    assert second.state == "finished"


def test_divergence_is_reported_not_raised():
    data = datasets.load("rings")
    nca = NCA(2, optimizer="sgd", objective="g", learning_rate=100.0, device="cpu")
    job = TrainingJob(lambda should_stop: nca.fit_iter(data.X_train, data.y_train), JobSlots(1), threads=1)
    job.join(60)
    assert job.state == "failed" and "diverged" in job.error
    assert job.snapshots  # every finite frame before the divergence survives
    assert all(np.isfinite(s.embedding).all() and np.isfinite(s.objective) for s in job.snapshots)


def test_snapshots_are_thinned_past_the_cap():
    job = TrainingJob(rings_stream(max_iter=50), JobSlots(1), max_snapshots=10, threads=1)
    job.join(60)
    epochs = [s.epoch for s in job.snapshots]
    assert len(epochs) <= 11 and epochs[0] == 0 and epochs[-1] == 50
    assert epochs == sorted(epochs)


def test_thinning_drops_part_way_frames_before_whole_epochs():
    """MNIST takes 59 frames an epoch: thinning all frames alike lost most whole epochs,
    and with them the curves' points (only epoch 0 and the last dozen were left)."""
    data = datasets.load("rings")
    nca = NCA(2, init="pca", optimizer="adam", learning_rate=0.1, batch_size=64, tol=0, max_iter=12)
    stream = lambda should_stop: nca.fit_iter(data.X_train, data.y_train, frames_per_epoch=8)  # noqa: E731
    job = TrainingJob(stream, JobSlots(1), max_snapshots=30, threads=1)
    job.join(60)
    assert [s.epoch for s in job.snapshots if s.fraction >= 1.0] == list(range(13))
    assert len(job.snapshots) <= 31 and any(s.fraction < 1.0 for s in job.snapshots)


def test_thread_count_applies_to_the_job_thread_only():
    before = torch.get_num_threads()
    seen = []

    def stream(should_stop):
        seen.append(torch.get_num_threads())
        return rings_stream(max_iter=1)(should_stop)

    job = TrainingJob(stream, JobSlots(1), threads=1)
    job.join(60)
    assert job.state == "finished" and seen == [1]
    assert torch.get_num_threads() == before


def test_small_sets_train_on_one_thread_and_large_ones_share_the_cores(monkeypatch):
    from app_pages.ui.train.runs import threads_for
    from nca_core.runs.run import Run, recommended_config

    rings = datasets.load("rings")
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(8)))
    assert threads_for(Run(recommended_config(rings), rings), JobSlots(1)) == 1
    large = SimpleNamespace(data=SimpleNamespace(y_train=np.zeros(60000)))
    assert threads_for(large, JobSlots(1)) == 8
    assert threads_for(large, JobSlots(3)) == 2
    assert threads_for(large, JobSlots(16)) == 1


def test_a_replica_pinned_to_some_cores_plans_its_runs_for_those_cores(monkeypatch):
    """Eight replicas on a 16-core machine, each pinned to two cores (taskset): each computes
    one run at a time on two threads, not fifteen runs on sixteen threads each."""
    from app_pages.ui.train.runs import threads_for, turn_capacity

    monkeypatch.setattr("os.cpu_count", lambda: 16)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {4, 5})
    assert turn_capacity() == 1
    large = SimpleNamespace(data=SimpleNamespace(y_train=np.zeros(60000)))
    assert threads_for(large, JobSlots(turn_capacity())) == 2


@pytest.mark.wall_clock
def test_speed_is_wall_clock_epochs_per_second_frame_cap_included():
    """A real run on the rings at a cap of 20 epochs a second, on the system's clock: it
    trains far faster than that (measured in commit 847312f), so the cap rules, and the
    speed the page reads is the cap's."""
    job = TrainingJob(rings_stream(max_iter=1000), JobSlots(1), max_epochs_per_second=20, threads=1)
    assert job.epochs_per_second is None  # not before two snapshots
    try:
        wait_until(lambda: len(job.snapshots) >= 24)
        speed = job.epochs_per_second
    finally:
        job.stop()
        job.join(30)
    # Frames are timed as they are kept, before their wait: one that took longer to compute
    # than the next shortens the interval between them, so the speed is read over 23 of them.
    assert 5 < speed <= 21


def test_the_app_imports_no_compiler_stack():
    """A warm-up torch.optim.Adam here imported torch._dynamo and sympy (1.4 s of every
    first page visit) for fits that no longer need them."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys\nimport app_pages.engine.jobs, app_pages.engine.pacing, app_pages.engine.shared_runs\n"
        "print(sorted(m for m in ('torch._dynamo', 'sympy', 'torch._inductor') if m in sys.modules))"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == "[]"


def test_the_app_gives_training_threads_the_interpreter_lock_back_soon():
    """Beside a page building its picture in Python, each torch call of a small set's frame
    waited a whole 5 ms turn for the interpreter lock: digits trained 30 ms epochs in
    seconds, and a class of twelve trained a few epochs in ten minutes. The engine's start,
    which the app calls, takes shorter turns; importing the engine changes nothing."""
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys\nbefore = sys.getswitchinterval()\n"
        "import app_pages.engine.jobs, app_pages.engine.shared_runs\nfrom app_pages.engine import process\n"
        "imported = sys.getswitchinterval()\nprocess.start()\n"
        "print(before, imported, sys.getswitchinterval(), process.SWITCH_INTERVAL_SECONDS)"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    before, imported, started, declared = map(float, out.stdout.split())
    assert imported == before and started == declared <= 0.001
    assert "process.start()" in (root / "app_pages" / "main.py").read_text()


def _count_trims(monkeypatch) -> list[int]:
    """The heap trims asked for from now on (each ``malloc_trim``'s argument)."""
    trims = []
    monkeypatch.setattr(process, "_malloc_trim", lambda: trims.append)
    return trims


def _trims_asked_for_done() -> None:
    """Wait for the heap trims already asked for, each in a timer's thread, to be done."""
    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.join(30)


def test_a_dropped_job_gives_its_frames_memory_back(monkeypatch):
    # A closed tab's session, and the job's frames with it, go minutes after the job ended:
    # the heap is trimmed then too, not only at the job's end.
    gc.collect()  # earlier tests' jobs go now, and their trims are done before the count
    _trims_asked_for_done()
    # A run registry an earlier test started collects on its own clock, with a trim of its
    # own once no job trains: it would count here as a second trim at this job's end.
    monkeypatch.setattr(collection._collector, "collect", lambda: False)
    trims = _count_trims(monkeypatch)
    monkeypatch.setattr(collection, "TRIM_DELAY_SECONDS", 0.01)
    job = TrainingJob(frames(epochs=3), JobSlots(1))
    job.join(30)
    assert job.state == "finished" and job.snapshots and trims == [0]  # the trim at its end
    gc.collect()  # earlier tests' jobs go now, not while this one goes
    _trims_asked_for_done()
    trims.clear()
    del job
    gc.collect()
    wait_until(lambda: trims)
    _trims_asked_for_done()
    assert trims == [0]


def test_an_idle_server_frees_the_ended_jobs_of_closed_tabs(monkeypatch):
    """A closed tab's session holds its job in reference cycles, which only the cycle
    collector frees, and an idle server seldom runs it: after a class the jobs' frames stayed
    on the heap. While no job trains, ``collect_ended`` collects them, and less often while
    a tab left open keeps its job."""
    trims = _count_trims(monkeypatch)
    monkeypatch.setattr(collection, "_collector", collection._Collector())
    kept = TrainingJob(frames(epochs=3), JobSlots(1))  # a tab left open on its run
    gone = TrainingJob(frames(epochs=3), JobSlots(1))
    kept.join(30)
    gone.join(30)
    session = {"job": gone}
    session["self"] = session  # the cycle a closed tab's session leaves behind
    gone_ref = weakref.ref(gone)
    del gone, session
    gc.disable()  # as on an idle server: nothing allocates enough to start a collection
    try:
        assert gone_ref() is not None
        assert collection.collect_ended()
        assert gone_ref() is None and 0 in trims  # freed, and the heap given back
        assert not collection.collect_ended()  # not due again yet: it freed one
        collection._collector.next = 0.0
        assert collection.collect_ended()  # frees nothing: the open tab's job stays
        assert collection._collector.every == 2 * collection.COLLECT_SECONDS
        with Engine() as engine:
            engine.job(max_epochs_per_second=1)
            engine.settle()
            assert not collection.collect_ended()  # a job trains: no collection stops it
        assert kept.state == "finished"
    finally:
        gc.enable()


def test_runs_under_way_at_once_share_the_cores_frame_by_frame(engine):
    """One turn of the cores, two runs under way: both move frame by frame, and a paused run
    gives its turn to the other rather than holding it. A run holding its turn while its
    frame is on screen would leave the other waiting for it, never for the clock."""
    slots, turns = JobSlots(2), JobSlots(1)
    first = engine.job(slots=slots, max_epochs_per_second=4, turns=turns)
    second = engine.job(slots=slots, max_epochs_per_second=4, turns=turns)
    for _ in range(3):
        engine.advance(0.25)
    assert len(first.snapshots) == len(second.snapshots) == 4
    first.pause()
    engine.advance(0.25)
    shown = len(second.snapshots)
    for _ in range(5):
        engine.advance(0.25)
    assert len(second.snapshots) == shown + 5 and len(first.snapshots) == 4
    assert (first.state, second.state) == ("paused", "running")


def test_a_job_stopped_while_waiting_for_its_turn_ends_at_once(engine):
    turns = JobSlots(1)
    turns.acquire(0, lambda: False)  # the cores are taken, and stay so
    job = engine.job(frames(epochs=5), turns=turns)
    wait_until(lambda: turns.position(job.ticket) == 1)
    assert job.alive and not job.snapshots
    job.stop()
    job.join(30)
    assert job.state == "stopped" and not job.alive


def test_every_place_in_line_has_an_estimate_of_its_wait():
    """Each slot frees when its run's time left runs out; each run ahead in line then holds
    one for as long as a run takes in all (the median of the running ones)."""
    slots = JobSlots(2)
    slots.acquire(1, lambda: False, lambda: (10.0, 20.0))  # 30 s in all
    slots.acquire(2, lambda: False, lambda: (4.0, 46.0))  # 50 s in all
    done = threading.Event()
    for ticket in (3, 4, 5):
        threading.Thread(target=slots.acquire, args=(ticket, done.is_set), daemon=True).start()
        wait_until(lambda t=ticket: slots.position(t) == t - 2)
    # slots free at 4 and 10; runs ahead hold one for 40 s (the median of 30 and 50)
    assert [slots.wait_estimate(t) for t in (3, 4, 5)] == [4.0, 10.0, 44.0]
    done.set()
    wait_until(lambda: all(slots.position(t) == 0 for t in (3, 4, 5)))
