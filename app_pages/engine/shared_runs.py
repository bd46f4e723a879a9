"""One run for identical requests: a class pressing Train on the same dataset with the same
settings watches one run, computed once.

The app's runs are deterministic (a fixed seed: "same seed, same run"), so a page that asks
for a run another page already asked for would compute the same frames again. Instead it
joins that run (``join``): a ``SharedRun`` keeps the frames computed so far, and each page's
job reads them at its own pace, from the start, through a ``Frames`` reader. Whichever page
is furthest along computes the next frame, in its own job's thread and turn; the others read
it. Each page's Pause, Step and Stop act on its own reading alone: the run goes on computing
while any page still wants frames, and stops between minibatches once none does.

Only a linear map on one of the registered datasets is shared: a page that stops early is
shown the run as it stood at its own last frame (``Run.at``, which needs the map in each
frame; a network's frames keep no weights), and a user's upload is never shared with
another session.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING

from .frames import MAX_FRAME_BYTES, frame_bytes

if TYPE_CHECKING:
    from nca_core import Snapshot
    from nca_core.runs.run import Run

__all__ = ["Frames", "SharedRun", "join", "share_key"]


def share_key(dataset: str, run: Run, frames_per_epoch: int) -> Hashable | None:
    """What makes two requests on a registered ``dataset`` the same run: the dataset, the
    settings the run resolved (seed included) and the frames it takes in an epoch; None for
    a network's run, which is not shared."""
    if run.config.encoder == "mlp":
        return None
    return (dataset, run.config, frames_per_epoch)


class SharedRun:
    """A run's frames, computed once for every page that reads them (``reader``).

    Every frame is kept from the start while they fit in ``max_bytes``, so that a page may
    join the run later and see it whole. Past that, the run takes no one new and lets go of
    the frames every reader has read, then of the oldest (a page paused far behind skips to
    the oldest kept when it reads on): a run's frames never hold more than a run of a page's
    own would (``frames.MAX_FRAME_BYTES``). A run stopped before its last epoch (every page
    stopped reading) or failed takes no one new either.
    """

    def __init__(
        self, run: Run, make_stream: Callable[[Callable[[], bool]], Iterator[Snapshot]], max_bytes: int = MAX_FRAME_BYTES
    ):
        self.run = run
        self._make_stream = make_stream
        self._max_bytes = max_bytes
        self._cond = threading.Condition()
        self._frames: list[Snapshot] = []
        self._first = 0  # the index of _frames[0]: frames before it were let go
        self._bytes = 0
        self._stream: Iterator[Snapshot] | None = None
        self._computing = False
        self._error: BaseException | None = None
        self._readers: dict[int, Frames] = {}  # open readers, by id
        self.ended = False
        self.joinable = True

    def reader(self, wanted: Callable[[], bool] = lambda: True) -> Frames | None:
        """A reader from the run's first frame, or None where the run takes no one new;
        ``wanted()`` turns false once its page wants no more frames (the run stops when no
        open reader wants any). Close it when done."""
        with self._cond:
            if not self.joinable:
                return None
            frames = Frames(self, wanted)
            self._readers[id(frames)] = frames
            return frames

    def _ready(self, index: int) -> bool:
        with self._cond:
            return index < self._first + len(self._frames) or self.ended

    def _frame(self, reader: Frames) -> Snapshot | None:
        """The reader's next frame, computed here if no one has yet; None at the run's end,
        or when the reader's page stopped wanting frames while another computed it."""
        with self._cond:
            while True:
                reader.index = max(reader.index, self._first)  # frames past the budget let go
                at = reader.index - self._first
                if at < len(self._frames):
                    reader.index += 1
                    self._let_go()
                    return self._frames[at]
                if self._error is not None:
                    raise self._error
                if self.ended or not reader.wanted():
                    return None
                if not self._computing:
                    self._computing = True
                    break
                self._cond.wait(timeout=0.1)
        try:
            if self._stream is None:
                self._stream = iter(self._make_stream(self._unwanted))
            snap = next(self._stream, None)
        except BaseException as exc:
            with self._cond:
                self._error, self.ended, self.joinable, self._computing = exc, True, False, False
                self._cond.notify_all()
            raise
        with self._cond:
            self._computing = False
            self._cond.notify_all()
            if snap is None:
                self._end()
                return None
            self._frames.append(snap)
            self._bytes += frame_bytes(snap)
            reader.index += 1
            self._let_go()
            return snap

    def _end(self) -> None:
        """The stream ended, or was closed: joinable only where it trained to its last epoch."""
        self.ended = True
        last = self._frames[-1] if self._frames else None
        finished = last is not None and last.fraction >= 1.0 and last.epoch >= self.run.config.max_iter
        self.joinable = self.joinable and finished
        stream, self._stream = self._stream, None
        if stream is not None and hasattr(stream, "close"):
            stream.close()

    def _unwanted(self) -> bool:
        """The stream's stop probe: no open reader wants more frames."""
        with self._cond:
            readers = list(self._readers.values())
        return not any(reader.wanted() for reader in readers)

    def _let_go(self) -> None:
        """Past ``max_bytes``: no one new, and the frames every open reader has read go,
        then the oldest, down to the budget (the newest always stays)."""
        if self._bytes <= self._max_bytes:
            return
        self.joinable = False
        read = min((reader.index for reader in self._readers.values()), default=self._first + len(self._frames))
        drop = 0
        while drop < len(self._frames) - 1 and (
            self._first + drop < read or self._bytes > self._max_bytes
        ):
            self._bytes -= frame_bytes(self._frames[drop])
            drop += 1
        del self._frames[:drop]
        self._first += drop

    def _close(self, reader: Frames) -> None:
        with self._cond:
            self._readers.pop(id(reader), None)
            self._cond.notify_all()
            if self._readers or self.ended or self._computing or self._stream is None:
                return
            # nobody reads on: the run ends here, stopped (a later page starts its own), and
            # what its training held goes now
            self._end()


class Frames:
    """One page's reading of a ``SharedRun``: an iterator of its frames from the start.
    ``ready()`` says whether the next one is there without computing; ``wanted`` may be
    set by the page's job once it exists."""

    def __init__(self, source: SharedRun, wanted: Callable[[], bool]):
        self.source, self.wanted, self.index = source, wanted, 0

    @property
    def run(self) -> Run:
        """The run the frames are of."""
        return self.source.run

    def __iter__(self) -> Frames:
        return self

    def __next__(self) -> Snapshot:
        snap = self.source._frame(self)
        if snap is None:
            raise StopIteration
        return snap

    def ready(self) -> bool:
        return self.source._ready(self.index)

    def close(self) -> None:
        self.source._close(self)


# The runs pages may still join, by ``share_key``: each lives as long as a page's job reads it
# (or keeps it, ended, for its results), and no longer.
_runs: weakref.WeakValueDictionary[Hashable, SharedRun] = weakref.WeakValueDictionary()
_lock = threading.Lock()


def join(key: Hashable, run: Run, make_stream: Callable[[Callable[[], bool]], Iterator[Snapshot]]) -> Frames:
    """A reader of the run under way (or finished) for ``key`` that a page may still join,
    else of a new one of ``run``, computed by ``make_stream(should_stop)`` when first read.
    The reader counts from now (the run goes on for it, however long its page waits to
    read): close it when done."""
    with _lock:
        shared = _runs.get(key)
        frames = shared.reader() if shared is not None else None
        if frames is None:
            shared = _runs[key] = SharedRun(run, make_stream)
            frames = shared.reader()
        return frames
