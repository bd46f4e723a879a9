"""scipy's L-BFGS-B, the optimiser scikit-learn's NCA uses, one iteration at a time.

``scipy.optimize.minimize`` runs to the end in one call and reports each iterate to a
callback. To hand iterates to the training loop (which snapshots, evaluates and may stop
between them), the minimisation runs in a worker thread that passes each iterate over
and waits until the next is asked for: only one of the two threads computes at any time,
so the loss may change shared state (the encoder's weights) without locks of its own.
Stopping early raises ``StopIteration`` in the callback, which ends the search.

Convergence follows scikit-learn's settings: ``ftol`` on the relative fall of the loss,
``gtol`` on the largest gradient entry, both set to the estimator's ``tol``.

A loss computed in float32 carries its rounding into the gradient differences L-BFGS keeps,
and a search can end by those rules on a step they spoilt, short of the optimum (a fresh
search from there goes on). With ``restarts``, a search that ends that way is started
again from its end with an empty memory, until a restart falls by no more than ``ftol``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager

import numpy as np

__all__ = ["LBFGS"]

Loss = Callable[[np.ndarray], tuple[float, np.ndarray]]

_NO_LIMIT = np.iinfo(np.int32).max  # the training loop counts iterations, not scipy


class LBFGS:
    """Minimise ``loss(x) -> (value, gradient)`` over a flat float64 vector, step by step.

    ``x`` and ``f`` are the current iterate and its loss. Once the search has ended (met
    ``ftol`` or ``gtol``, failed, or was closed), ``converged`` is True and ``step`` moves
    no more; ``stalled`` says it ended without meeting ``ftol`` or ``gtol`` (a failed line
    search, an error in the loss, or ``close``), and ``message`` says why. ``within`` (a
    context factory) is entered around the first evaluation and around the whole search,
    in the thread that evaluates the loss. ``restarts``: at most this many fresh searches
    after one that ends by ``ftol`` or ``gtol`` (see the module's docstring).
    """

    def __init__(
        self, loss: Loss, x0: np.ndarray, *, ftol: float = 1e-5, gtol: float = 1e-5, history: int = 10,
        within: Callable[[], AbstractContextManager] = contextlib.nullcontext, restarts: int = 0,
    ):  # fmt: skip
        self.loss, self.within, self.restarts = loss, within, restarts
        self.options = {"maxiter": _NO_LIMIT, "maxfun": _NO_LIMIT, "maxcor": history, "ftol": ftol, "gtol": gtol}
        self.x = np.array(x0, dtype=np.float64)
        with within():
            self.f, g = loss(self.x)
        self._start = (self.x.copy(), self.f, g)  # scipy's first evaluation is this one
        self.converged = self.stalled = False
        self.message = ""
        # A handoff: the worker releases ``_ready`` when it has an event and waits on ``_go``.
        self._ready, self._go = threading.Lock(), threading.Lock()
        self._ready.acquire()
        self._go.acquire()
        self._event: tuple = ()
        self._going_on = True
        self._worker: threading.Thread | None = None

    def step(self) -> float:
        """Run to the next iterate and return its loss; the loss as it is once ended."""
        if self.converged:
            return self.f
        if self._worker is None:
            self._worker = threading.Thread(target=self._minimise, name="nca-lbfgs", daemon=True)
            self._worker.start()
        else:
            self._go.release()
        self._ready.acquire()
        kind, payload = self._event
        if kind == "iterate":
            self.x, self.f = payload
            return self.f
        self.converged, self._worker = True, None
        if kind == "error":  # x and f stay at the last iterate
            self.stalled, self.message = True, f"the loss raised {type(payload).__name__}: {payload}"
            raise payload
        self.stalled, self.message = not payload.success, payload.message  # ended at its last iterate
        self.x, self.f = np.array(payload.x), float(payload.fun)
        return self.f

    def close(self) -> None:
        """End the search where it is (the worker waits for its next ask); ``step`` then
        moves no more."""
        if not self.converged:
            self.converged, self.stalled, self.message = True, True, "closed before the search ended"
        worker, self._worker = self._worker, None
        if worker is not None and worker.is_alive():
            self._going_on = False
            self._go.release()
            worker.join()

    def _evaluate(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        start_x, start_f, start_g = self._start
        if start_x is not None and np.array_equal(x, start_x):
            self._start = (None, None, None)
            return start_f, start_g
        return self.loss(x)

    def _search(self, x0: np.ndarray):
        from scipy.optimize import minimize

        return minimize(self._evaluate, x0, jac=True, method="L-BFGS-B", callback=self._hand_over, options=self.options)

    def _minimise(self) -> None:
        try:
            with self.within():
                result = self._search(self.x.copy())
                for _ in range(self.restarts):
                    if not result.success:
                        break
                    ended, result = result, self._restarted(result)
                    if ended.fun - result.fun <= self.options["ftol"] * max(abs(ended.fun), abs(result.fun), 1.0):
                        break
            self._event = ("done", result)
        except BaseException as exc:  # handed to the caller's thread, raised there
            self._event = ("error", exc)
        with contextlib.suppress(RuntimeError):  # already released if the caller stopped waiting
            self._ready.release()

    def _restarted(self, ended):
        """A fresh search from where ``ended`` (a successful one) stopped. One that fails (a
        line search lost in rounding, or a stop) keeps the point it reached, if lower, under
        the verdict of the search before it."""
        result = self._search(np.array(ended.x))
        if result.success:
            return result
        if result.fun < ended.fun:
            ended.x, ended.fun = result.x, result.fun
        return ended

    def _hand_over(self, intermediate_result) -> None:
        """scipy's callback: give the iterate (a copy: scipy reuses its array) and wait."""
        self._event = ("iterate", (np.array(intermediate_result.x), float(intermediate_result.fun)))
        self._ready.release()
        self._go.acquire()
        if not self._going_on:
            raise StopIteration
