"""Fetching files from mirrors so that nothing unverified is ever left where it is trusted.

A download streams into a temporary file in the target folder; only when its decompressed
content matches its pins is it renamed into place. Any failure (HTTP error, refused
connection, timeout, truncated or altered body) deletes the temporary file and moves on to
the next mirror.
"""

from __future__ import annotations

import http.client
import logging
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from ..util.files import atomic_file
from ._errors import DatasetError

__all__ = ["ProgressCallback", "download"]

_log = logging.getLogger(__name__)

ProgressCallback = Callable[[str, int, int | None], None]
"""Called as ``progress(file_name, bytes_done, bytes_total_or_None)``."""

_CHUNK = 1 << 16


def download(
    file_name: str,
    target: Path,
    mirrors: Sequence[str],
    verify: Callable[[Path], object],
    progress: ProgressCallback | None = None,
    timeout: float = 30.0,
) -> None:
    """Fetch ``file_name`` from the first mirror that serves an acceptable copy.

    ``verify(path)`` checks a finished temporary file (for instance its pinned checksum) and
    raises DatasetError saying why a copy is refused. Raises DatasetError listing what each
    mirror did when none succeeds.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    failures = []
    for mirror in mirrors:
        url = mirror.rstrip("/") + "/" + file_name
        if not url.startswith(("https://", "http://127.0.0.1", "http://localhost")):
            failures.append(f"{url}: refused, only https mirrors are used")
            continue
        try:
            # the real extension last: the checksum is taken of the decompressed content
            with atomic_file(target, suffix=f".part{target.suffix}", check=verify) as out:
                _stream(url, out, file_name, progress, timeout)
            _log.info("downloaded %s from %s", file_name, url)
            return
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError, DatasetError) as exc:
            failures.append(f"{url}: {getattr(exc, 'reason', exc)}")
    raise DatasetError(
        f"could not download {file_name} into {target.parent}: "
        + "; ".join(failures or ["no mirrors configured"]).rstrip(".")
        + ". Connect to the internet and retry, or copy the file there by hand."
    )


def _stream(url: str, out, file_name: str, progress: ProgressCallback | None, timeout: float) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "nca-explorer"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        done = 0
        while chunk := response.read(_CHUNK):
            out.write(chunk)
            done += len(chunk)
            if progress is not None:
                progress(file_name, done, total)
        if total is not None and done != total:
            raise OSError(f"connection closed after {done} of {total} bytes")
