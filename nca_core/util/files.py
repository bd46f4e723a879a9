"""Files that appear whole or not at all."""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["FileLocks", "atomic_file", "cache_dir", "write_atomic"]

# mkstemp creates files only their owner can read; a file written in place gets 0o666 less
# the umask, commonly this
_NEW_FILE_MODE = 0o644


@contextlib.contextmanager
def atomic_file(path: Path, *, suffix: str = ".part", check: Callable[[Path], None] | None = None) -> Iterator[BinaryIO]:
    """A binary file written beside ``path`` under a temporary name and renamed onto it
    when the block ends without an error, so a reader never sees half a file.

    ``check``, if given, gets the finished temporary file's path before the rename and
    raises to refuse it (a checksum, say). Whatever raises, the temporary file is removed
    and ``path`` is left as it was. ``suffix`` ends the temporary name (keep a real
    extension last where something reads the file by its name).
    """
    path = Path(path)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.chmod(temp, path.stat().st_mode & 0o777 if path.exists() else _NEW_FILE_MODE)
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
        if check is not None:
            check(Path(temp))
        os.replace(temp, path)
    finally:
        Path(temp).unlink(missing_ok=True)


def write_atomic(path: Path, content: bytes) -> None:
    """``content`` at ``path``, whole or not at all (``atomic_file``)."""
    with atomic_file(path) as out:
        out.write(content)


def cache_dir(name: str) -> Path:
    """Where the project keeps ``name`` (decoded data, fitted models, search costs) between
    runs: $NCA_CACHE_DIR/name, else the user cache's nca-explorer/name."""
    if os.environ.get("NCA_CACHE_DIR"):
        return Path(os.environ["NCA_CACHE_DIR"]) / name
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "nca-explorer" / name


class FileLocks:
    """A fixed number of locks, one chosen by a file's path: calls that make the same file
    take turns (and so, now and then, do two that make different files), however many
    files a process makes. Hold one lock of a set at a time."""

    def __init__(self, count: int = 64):
        self._locks = tuple(threading.Lock() for _ in range(count))

    def __call__(self, path: Path) -> threading.Lock:
        return self._locks[hash(str(path)) % len(self._locks)]
