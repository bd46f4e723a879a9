"""A cache of decoded arrays beside (or away from) the source files, verified on load.

Each entry is an uncompressed .npz plus a JSON sidecar that records the npz's SHA-256 and
the size and modification time of every source file. An entry is used only when all of
them still match and the caller's ``check`` accepts its arrays (their pinned content), so
an edited or replaced source, or an entry altered in place, is decoded and verified again.
Both files are written to temporary names and renamed into place, sidecar last.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..util.files import atomic_file, write_atomic

__all__ = ["cached_arrays"]

_log = logging.getLogger(__name__)


def _fingerprint(sources: list[Path]) -> dict[str, list[int]]:
    return {str(p.resolve()): [p.stat().st_size, p.stat().st_mtime_ns] for p in sources}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def cached_arrays(
    cache_dir: Path,
    key: str,
    sources: list[Path],
    build: Callable[[], dict[str, np.ndarray]],
    check: Callable[[dict[str, np.ndarray]], object] | None = None,
) -> dict[str, np.ndarray]:
    """Return ``build()``'s arrays, from the cache when a valid entry exists.

    ``check(arrays)`` raises ValueError (DatasetError) when a cached entry's arrays are not
    what ``build`` gives; the entry is then built again. A cache that cannot be written only
    costs speed: the arrays are built every time.
    """
    data_path, meta_path = cache_dir / f"{key}.npz", cache_dir / f"{key}.json"
    try:
        meta = json.loads(meta_path.read_text())
        if meta["sources"] == _fingerprint(sources) and meta["sha256"] == _sha256(data_path):
            with np.load(data_path, allow_pickle=False) as stored:
                arrays = {name: stored[name] for name in stored.files}
            if check is not None:
                check(arrays)
            return arrays
    except (OSError, ValueError, KeyError, TypeError) as exc:
        if meta_path.exists():
            _log.info("decoded cache entry %s is not used (%s); decoding again", data_path, exc)
    arrays = build()
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with atomic_file(data_path) as out:
            np.savez(out, **arrays)
        meta = {"sources": _fingerprint(sources), "sha256": _sha256(data_path)}
        write_atomic(meta_path, json.dumps(meta).encode())
    except OSError:
        pass  # a read-only or full cache only costs speed
    return arrays
