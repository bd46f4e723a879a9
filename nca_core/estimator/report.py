"""What a fit says while it runs, as scikit-learn's NCA says it: verbose lines on stdout
and a ConvergenceWarning when training ends short of convergence."""

from __future__ import annotations

import contextlib
import time
import warnings
from typing import ClassVar

from sklearn.exceptions import ConvergenceWarning

from ..training.loop import Snapshot

__all__ = ["Report"]


class Report:
    """scikit-learn's verbose output on stdout: how the map started, one line per iteration
    (objective as scikit-learn sums it, seconds), the training time, and a
    ConvergenceWarning when training ends short of convergence."""

    _STARTS: ClassVar[dict[str, str]] = {
        "pca": "Finding principal components... ",
        "lda": "Finding most discriminative components... ",
    }

    def __init__(self, estimator, verbose: int):
        self.name, self.verbose = type(estimator).__name__, verbose
        self.clock, self.last = time.perf_counter(), 0.0

    @contextlib.contextmanager
    def timing_start(self, settings):
        method = settings["init"] if isinstance(settings["init"], str) else None
        start = time.perf_counter()
        if self.verbose and method in self._STARTS:
            print(self._STARTS[method], end="", flush=True)
        yield
        if self.verbose and method in self._STARTS:
            print(f"done in {time.perf_counter() - start:5.2f}s")

    def pretrain_epoch(self, epoch: int, loss: float) -> None:
        if self.verbose:
            print(f"[{self.name}] pre-training epoch {epoch:>4}: reconstruction error {loss:.6f}")

    def epoch(self, snap: Snapshot, scale: float) -> None:
        """One line; ``scale`` turns a per-point objective into scikit-learn's sum."""
        if not self.verbose:
            return
        if snap.epoch == 0:
            header = f"{'Iteration':>10} {'Objective Value':>20} {'Time(s)':>10}"
            print(f"[{self.name}]\n[{self.name}] {header}\n[{self.name}] {'-' * len(header)}")
        print(
            f"[{self.name}] {snap.epoch:>10} {snap.objective * scale:>20.6e} {snap.elapsed - self.last:>10.2f}"
        )
        self.last = snap.elapsed

    def finish(self, converged: bool, message: str = "") -> None:
        if not self.verbose:
            return
        if not converged:
            reason = message or "max_iter reached before the objective settled"
            warnings.warn(f"[{self.name}] NCA did not converge: {reason}", ConvergenceWarning, stacklevel=4)
        print(f"[{self.name}] Training took {time.perf_counter() - self.clock:8.2f}s.")
