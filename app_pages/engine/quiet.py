"""What a server lets go of once no tab has been open for a while.

After a class, every session is gone but the server still holds what they shared: whole
datasets (MNIST's arrays, about 220 MB), Compare's fitted baselines and scores, the Train
page's chosen starts, the frames of runs kept for a reload, and the heap pages all of it
was freed into. A ``QuietRelease`` watches how many tabs are open and, once none has been
for ``QUIET_SECONDS``, calls each of its releases (the app's caches, ``ui.quiet``), collects
the cycles they freed and gives the heap back to the system. A class in progress always has
a tab open, so its datasets are never let go under it; the next visitor after a quiet spell
loads what it asks for again, once.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable, Sequence

from .clock import SYSTEM_CLOCK, Clock
from .process import return_free_heap

__all__ = ["CHECK_SECONDS", "QUIET_SECONDS", "QuietRelease"]

_LOG = logging.getLogger(__name__)

# Five minutes with no tab open: past Streamlit's two minutes for a closed tab to reconnect,
# and past the five a finished run is kept for its page's reload (``kept_runs.KEEP_ENDED``). A
# lecturer's short break costs the next visitor a dataset load of a few seconds.
QUIET_SECONDS = 300.0
# How often the watcher counts the open tabs: a count is a dictionary's length.
CHECK_SECONDS = 15.0


class QuietRelease:
    """Calls ``releases`` once ``open_tabs()`` has been 0 for ``quiet_seconds`` on ``clock``,
    then collects and trims the heap; again every ``quiet_seconds`` while the server stays
    quiet (a visitor who came and went between two checks left caches behind too).

    ``check()`` does one round, for a test that moves a ``ManualClock``; ``watch()`` starts a
    thread that checks every ``CHECK_SECONDS``.
    """

    def __init__(
        self,
        open_tabs: Callable[[], int],
        releases: Sequence[Callable[[], object]],
        clock: Clock = SYSTEM_CLOCK,
        quiet_seconds: float = QUIET_SECONDS,
    ):
        self._open_tabs = open_tabs
        self._releases = tuple(releases)
        self._clock = clock
        self.quiet_seconds = quiet_seconds
        self._quiet_since: float | None = None
        self.released = 0  # how many times it has let go
        self._stop = threading.Event()

    def check(self) -> bool:
        """Let go if the server has been quiet long enough; whether it did."""
        now = self._clock.now()
        if self._open_tabs() > 0:
            self._quiet_since = None
            return False
        if self._quiet_since is None:
            self._quiet_since = now
        if now - self._quiet_since < self.quiet_seconds:
            return False
        for release in self._releases:
            try:
                release()
            except Exception:  # one release that fails must not keep the others, or the trim
                _LOG.exception("letting go of %s failed", getattr(release, "__qualname__", release))
        gc.collect()  # a session's state and its runs' frames are held in cycles
        return_free_heap()
        self._quiet_since = now  # the next round after another quiet spell
        self.released += 1
        return True

    def watch(self, every: float = CHECK_SECONDS) -> threading.Thread:
        """Check every ``every`` seconds in a daemon thread, until ``stop()``."""

        def loop() -> None:
            while not self._clock.wait(self._stop, every):
                self.check()

        thread = threading.Thread(target=loop, name="nca-quiet-release", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()
