"""Every job still in memory, and the collection that frees the ended ones nothing shows.

A closed tab's session, and its job with it, can be freed only by the cycle collector, which
an idle server seldom runs: after a class of thirty, about 35 MB stayed on the heap until a
collection (benchmarks/load_test.py). While no job trains (a collection stops every thread a
moment) and ended ones remain, the server collects, less and less often while that frees
none (a tab left open on its finished run).
"""

from __future__ import annotations

import gc
import threading
import time
import weakref
from typing import Protocol

from .process import return_free_heap


class Job(Protocol):
    """What the collection reads of a job (``jobs.TrainingJob``)."""

    ticket: int

    @property
    def alive(self) -> bool: ...

__all__ = ["collect_ended", "job_created", "return_free_heap_soon"]

_jobs: weakref.WeakValueDictionary[int, Job] = weakref.WeakValueDictionary()  # by ticket
_jobs_lock = threading.Lock()  # a job added while another thread reads the jobs
COLLECT_SECONDS = 30.0
COLLECT_MAX_SECONDS = 3600.0


class _Collector:
    def __init__(self):
        self.lock = threading.Lock()
        self.every = COLLECT_SECONDS
        self.next = 0.0

    def job_created(self) -> None:
        with self.lock:
            self.every, self.next = COLLECT_SECONDS, 0.0

    def collect(self) -> bool:
        """Collect and give the heap back when it is due; whether it did."""
        with self.lock:
            jobs = _every_job()
            now = time.monotonic()
            if not jobs or now < self.next or any(job.alive for job in jobs):
                return False
            kept = len(jobs)
            del jobs
            gc.collect()
            return_free_heap()
            freed = kept > len(_jobs)
            self.every = COLLECT_SECONDS if freed else min(2 * self.every, COLLECT_MAX_SECONDS)
            self.next = now + self.every
            return True


_collector = _Collector()


def _every_job() -> list[Job]:
    with _jobs_lock:
        return list(_jobs.values())


def job_created(job: Job) -> None:
    """Keep ``job`` among the jobs the collector looks at, and trim the heap soon after it is
    freed."""
    weakref.finalize(job, return_free_heap_soon)
    with _jobs_lock:
        _jobs[job.ticket] = job
    _collector.job_created()


def collect_ended() -> bool:
    """Free the ended jobs nothing refers to any more, when due; whether it collected.
    Called now and then (``kept_runs.RunRegistry``)."""
    return _collector.collect()


# A job's frames live as long as the session that shows them: Streamlit drops a closed tab's
# session a few minutes later, and its frames are freed then, long after the job ended. So
# a job's collection asks for a trim too, a moment later (a finalizer runs before the object
# it watches frees what it holds); one trim serves every job collected meanwhile.
TRIM_DELAY_SECONDS = 1.0
_trim_pending = threading.Lock()


def return_free_heap_soon() -> None:
    if not _trim_pending.acquire(blocking=False):
        return  # a trim is already on its way

    def trim() -> None:
        _trim_pending.release()
        return_free_heap()

    timer = threading.Timer(TRIM_DELAY_SECONDS, trim)
    timer.daemon = True
    timer.start()
