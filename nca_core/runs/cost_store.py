"""Search costs measured once per machine and kept on disk, so a later visit reads them.

Timing every index of a large set takes long, and what it measures depends on the data,
the map and the machine, not on the visit. Each cost is a small JSON file (never a
pickle: the file is read back) named by a digest of what was searched and of the machine,
and holds the date it was measured; measuring again overwrites it. A file that cannot be
read is measured anew; a cache that cannot be written only costs the next visit a
measurement. At most ``MAX_STORED_COSTS`` files are kept, the least recently used let go.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..search.costs import SearchCost
from ..util.device import processor_name
from ..util.files import FileLocks, cache_dir, write_atomic

__all__ = [
    "StoredCost",
    "cost_store_dir",
    "machine_description",
    "measured_once",
    "now_utc",
    "vectors_digest",
]


@dataclass(frozen=True)
class StoredCost:
    """A ``SearchCost``, when it was measured (UTC, ISO 8601) and whether it was read from disk."""

    cost: SearchCost
    measured_at: str
    from_store: bool


def machine_description() -> str:
    """The processor, its cores and the search libraries' versions: what a time depends on."""
    import torch

    from ..search.backends import faiss_available

    faiss = "none"
    if faiss_available():
        import faiss as faiss_module

        faiss = faiss_module.__version__
    return f"{processor_name()}, {os.cpu_count()} cores; torch {torch.__version__}, faiss {faiss}"


def cost_store_dir() -> Path:
    """Where costs are kept (``util.files.cache_dir``)."""
    return cache_dir("search-costs")


def now_utc() -> str:
    """This moment as the store writes dates: UTC, ISO 8601, to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def vectors_digest(*arrays: np.ndarray) -> str:
    """What a set of arrays is, for a cost's description: shapes and the first 2,000 rows'
    bytes (hashing all of MNIST on every visit would cost more than reading the cost)."""
    digest = hashlib.sha256()
    for array in arrays:
        array = np.asarray(array)
        digest.update(f"{array.shape} {array.dtype}".encode())
        digest.update(np.ascontiguousarray(array[:2000]).tobytes())
    return digest.hexdigest()[:16]


# The most cost files kept. The kNN page's table is four costs a map (raw and NCA, exact
# and graph): its quick maps of the six datasets at its six dimensions take 144, but a Train
# page run it reuses is timed under that map's own digest, so every such run adds two more
# (each file under 1 kB): past this many, the least recently used go.
MAX_STORED_COSTS = 1000

_LOCKS = FileLocks()  # calls for the same cost take turns


def measured_once(
    what: dict, measure: Callable[[], SearchCost], *, again: bool = False, store_dir: Path | None = None
) -> StoredCost:
    """The cost of ``what`` (a JSON-able description of the data, map and index searched) on
    this machine: read from ``store_dir`` (default ``cost_store_dir()``) when an earlier call
    measured it, else ``measure()`` and keep it. ``again`` measures and overwrites.

    Calls for the same cost take turns (two first visits would time their searches on the
    same cores and keep the slowed figures); one that waited reads what the other kept.
    """
    key = json.dumps({**what, "machine": machine_description()}, sort_keys=True)
    path = (store_dir or cost_store_dir()) / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    before = _read(path, key)
    with _LOCKS(path):
        kept = _read(path, key)
        if kept is not None and (not again or kept != before):  # another call measured it meanwhile
            return kept
        cost = measure()
        when = now_utc()
        record = {"key": key, "measured_at": when, "cost": dataclasses.asdict(cost)}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(record, indent=1).encode())
            _let_go_of_the_oldest(path.parent, MAX_STORED_COSTS)
        except OSError:
            pass
    return StoredCost(cost, when, False)


def _let_go_of_the_oldest(folder: Path, kept: int) -> None:
    """Delete all but the ``kept`` most recently used cost files in ``folder`` (a read
    marks a file used: ``_read``)."""
    files = list(folder.glob("*.json"))
    if len(files) <= kept:
        return
    for stale in sorted(files, key=_last_used)[: len(files) - kept]:
        stale.unlink(missing_ok=True)


def _last_used(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # gone meanwhile: first to go
        return float("-inf")


def _read(path: Path, key: str) -> StoredCost | None:
    """The cost kept at ``path`` for exactly ``key``; None if absent, unreadable or another's."""
    try:
        record = json.loads(path.read_text())
        if record["key"] != key:
            return None
        kept = StoredCost(SearchCost(**record["cost"]), str(record["measured_at"]), True)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.utime(path)  # used now: the last to go (``_let_go_of_the_oldest``)
    except OSError:
        pass  # a store that cannot be written is still read
    return kept
