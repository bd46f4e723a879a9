"""The registry by which a reloaded Train page finds its run again."""

import itertools
import time
from types import SimpleNamespace

from app_pages.engine import kept_runs

_tokens = itertools.count()


def _active(ended_ago: float | None = None):
    ended = None if ended_ago is None else time.monotonic() - ended_ago
    job = SimpleNamespace(run_clock=SimpleNamespace(ended=ended), snapshots=[])
    return SimpleNamespace(token=f"t{next(_tokens)}", job=job)


def test_the_registry_keeps_the_latest_runs_and_lets_go_of_those_ended_long_ago():
    registry = kept_runs.RunRegistry(kept=3)
    added = [_active() for _ in range(4)]
    for active in added:
        registry.add(active)
    assert registry.find(added[0].token) is None  # the oldest of four, over the three kept
    assert all(registry.find(a.token) is a for a in added[1:])
    old = _active(ended_ago=kept_runs.KEEP_ENDED + 1)
    recent = _active(ended_ago=1.0)
    registry.add(old)
    registry.add(recent)
    assert registry.find(old.token) is None and registry.find(recent.token) is recent
    assert registry.find("a-token-nobody-was-given") is None


def test_an_idle_registry_lets_go_of_runs_ended_long_ago_by_itself():
    registry = kept_runs.RunRegistry(prune_every=0.05)
    old, recent = _active(ended_ago=kept_runs.KEEP_ENDED + 1), _active(ended_ago=1.0)
    registry._runs.update({old.token: old, recent.token: recent})  # as add() leaves them
    deadline = time.monotonic() + 5
    while old.token in registry._runs and time.monotonic() < deadline:
        time.sleep(0.02)
    assert list(registry._runs) == [recent.token]  # no add() or find() since


def test_a_registry_nobody_holds_is_collected_with_its_pruning_thread_left_to_end():
    import gc
    import weakref

    registry = kept_runs.RunRegistry(prune_every=0.05)
    gone = weakref.ref(registry)
    del registry
    gc.collect()
    assert gone() is None
