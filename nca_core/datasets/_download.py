"""Fetching files from mirrors so that nothing unverified is ever left where it is trusted.

pooch's HTTP downloader (requests underneath) streams each file into a temporary file in
the target folder; only when its decompressed content matches its pins is it renamed into
place (the pins are of decoded arrays, so pooch's own hash of the compressed file cannot
serve). Any failure (HTTP error, refused connection, timeout, truncated or altered body)
deletes the temporary file and moves on to the next mirror.
"""

from __future__ import annotations

import logging
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
        except (OSError, ValueError, DatasetError) as exc:  # requests' errors are OSErrors
            failures.append(f"{url}: {_reason(exc)}")
    raise DatasetError(
        f"could not download {file_name} into {target.parent}: "
        + "; ".join(failures or ["no mirrors configured"]).rstrip(".")
        + ". Connect to the internet and retry, or copy the file there by hand."
    )


def _stream(url: str, out, file_name: str, progress: ProgressCallback | None, timeout: float) -> None:
    import pooch  # imported when a file is fetched: loading a set from disk needs none of it

    fetch = pooch.HTTPDownloader(
        progressbar=_Progress(file_name, progress) if progress is not None else False,
        chunk_size=_CHUNK, timeout=timeout, headers={"User-Agent": "nca-explorer"},
    )  # fmt: skip
    fetch(url, out, None)


def _reason(exc: BaseException) -> str:
    """Why a fetch failed, in a few words: requests nests the cause in reprs of its pools."""
    response = getattr(exc, "response", None)
    if response is not None:
        return f"HTTP {response.status_code} {response.reason}"
    if isinstance(exc, DatasetError) or not exc.args:
        return str(exc)
    cause = exc.args[0] if isinstance(exc.args[0], BaseException) else exc
    cause = getattr(cause, "reason", None) or cause  # a connection pool's: what went wrong
    text = cause.args[0] if cause.args and isinstance(cause.args[0], str) else str(cause)
    return text.rsplit(": ", 1)[-1]  # past "HTTPConnection(host=..., port=...): "


class _Progress:
    """pooch's progress-bar interface (``total``, ``update``, ``reset``, ``close``), passed on
    as ``progress(file_name, bytes_done, bytes_total_or_None)``."""

    def __init__(self, file_name: str, report: ProgressCallback):
        self.file_name, self.report = file_name, report
        self.total, self.done = 0, 0  # pooch sets total from Content-Length (0: not sent)

    def update(self, size: int) -> None:
        self.done = min(self.done + size, self.total) if self.total else self.done + size
        self.report(self.file_name, self.done, self.total or None)

    def reset(self) -> None:
        self.done = 0

    def close(self) -> None:
        pass
