"""Fits that count which of the exact engine's schedules they went through, in whatever
process runs them (``tests.objective.interpreted``'s worker, or the test's own)."""

from __future__ import annotations

import collections
import contextlib
import functools


@contextlib.contextmanager
def schedule_calls():
    """A Counter of the calls made, while it is open, to each schedule's ``sums`` and
    ``value_sum`` ("FusedSchedule.sums", ...)."""
    from nca_core.objective import engine

    counts: collections.Counter = collections.Counter()
    saved = []
    for cls in (engine.FusedSchedule, engine.GaussianSchedule, engine.KernelSchedule):
        for name in ("sums", "value_sum"):
            method = getattr(cls, name)
            saved.append((cls, name, method))
            setattr(cls, name, _counted(method, f"{cls.__name__}.{name}", counts))
    try:
        yield counts
    finally:
        for cls, name, method in saved:
            setattr(cls, name, method)


def _counted(method, key: str, counts: collections.Counter):
    @functools.wraps(method)
    def counted(*args, **kwargs):
        counts[key] += 1
        return method(*args, **kwargs)

    return counted


def counted_fit(X, y, params: dict):
    """``NCA(**params).fit(X, y)``: the embedding of X, the objective curve and the schedule
    calls."""
    from nca_core import NCA

    with schedule_calls() as counts:
        model = NCA(**params).fit(X, y)
    return model.transform(X), list(model.objective_curve_), dict(counts)


def counted_run(dataset: str, changes: dict):
    """A ``Run`` of the app's recommended settings for ``dataset`` with ``changes``, streamed
    to its end: the map, the objective curve and the schedule calls."""
    from nca_core import datasets
    from nca_core.runs.run import Run, recommended_config

    data = datasets.load(dataset)
    run = Run(recommended_config(data).replace(**changes), data)
    with schedule_calls() as counts:
        snapshots = list(run.stream())
    return run.model.components_, [s.objective for s in snapshots], dict(counts)
