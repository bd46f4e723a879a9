"""The registry by which a reloaded Train page finds its run again."""

import itertools
import time
from types import SimpleNamespace

from app_pages.ui import state

_tokens = itertools.count()


def _active(ended_ago: float | None = None):
    ended = None if ended_ago is None else time.monotonic() - ended_ago
    return SimpleNamespace(token=f"t{next(_tokens)}", job=SimpleNamespace(clock=SimpleNamespace(ended=ended)))


def test_the_registry_keeps_the_latest_runs_and_lets_go_of_those_ended_long_ago():
    registry = state.RunRegistry(kept=3)
    runs = [_active() for _ in range(4)]
    for active in runs:
        registry.add(active)
    assert registry.find(runs[0].token) is None  # the oldest of four, over the three kept
    assert all(registry.find(a.token) is a for a in runs[1:])
    old = _active(ended_ago=state.KEEP_ENDED + 1)
    recent = _active(ended_ago=1.0)
    registry.add(old)
    registry.add(recent)
    assert registry.find(old.token) is None and registry.find(recent.token) is recent
    assert registry.find("a-token-nobody-was-given") is None
