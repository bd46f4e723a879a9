"""scipy's L-BFGS-B, the optimiser scikit-learn's NCA uses, one iteration at a time.

``scipy.optimize.minimize`` runs to the end in one call and reports each iterate to a
callback. To hand iterates to the training loop (which snapshots, evaluates and may stop
between them), the minimisation runs in a worker thread that passes each iterate over
and waits until the next is asked for: only one of the two threads computes at any time,
so the loss may change shared state (the encoder's weights) without locks. Stopping early
raises ``StopIteration`` in the callback, which ends the search with the iterate kept.

Convergence follows scikit-learn's settings: ``ftol`` on the relative fall of the loss,
``gtol`` on the largest gradient entry, both set to the estimator's ``tol``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

import numpy as np

__all__ = ["LBFGS"]

Loss = Callable[[np.ndarray], tuple[float, np.ndarray]]

_NO_LIMIT = np.iinfo(np.int32).max  # the training loop counts iterations, not scipy


class LBFGS:
    """Minimise ``loss(x) -> (value, gradient)`` over a flat float64 vector, step by step.

    ``x`` and ``f`` are the current iterate and its loss. Once the search has ended,
    ``converged`` is True and ``step`` moves no more; ``stalled`` says it ended without
    meeting ``ftol`` or ``gtol`` (a failed line search), and ``message`` says why in
    scipy's words.
    """

    def __init__(self, loss: Loss, x0: np.ndarray, *, ftol: float = 1e-5, gtol: float = 1e-5, history: int = 10):
        self.loss, self.ftol, self.gtol, self.history = loss, ftol, gtol, history
        self.x = np.array(x0, dtype=np.float64)
        self.f, g = loss(self.x)
        self._start = (self.x.copy(), self.f, g)  # scipy's first evaluation is this one
        self.converged = self.stalled = False
        self.message = ""
        self._asks: queue.Queue[bool] = queue.Queue(maxsize=1)  # True: go on; False: stop
        self._events: queue.Queue[tuple] = queue.Queue(maxsize=1)
        self._worker: threading.Thread | None = None

    def step(self) -> float:
        """Run to the next iterate and return its loss; the loss as it is once ended."""
        if self.converged:
            return self.f
        if self._worker is None:
            self._worker = threading.Thread(target=self._minimise, name="nca-lbfgs", daemon=True)
            self._worker.start()
        else:
            self._asks.put(True)
        kind, payload = self._events.get()
        if kind == "error":
            self.converged, self._worker = True, None
            raise payload
        if kind == "iterate":
            self.x, self.f = payload
        else:  # the search ended at its last iterate
            self.converged, self.stalled, self.message = True, not payload.success, payload.message
            self.x, self.f, self._worker = np.array(payload.x), float(payload.fun), None
        return self.f

    def close(self) -> None:
        """End a search still under way (the worker waits for its next ask)."""
        worker, self._worker = self._worker, None
        if worker is not None and worker.is_alive():
            self._asks.put(False)
            worker.join()

    def _evaluate(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        start_x, start_f, start_g = self._start
        if start_x is not None and np.array_equal(x, start_x):
            self._start = (None, None, None)
            return start_f, start_g
        return self.loss(x)

    def _minimise(self) -> None:
        from scipy.optimize import minimize

        options = {"maxiter": _NO_LIMIT, "maxfun": _NO_LIMIT, "maxcor": self.history,
                   "ftol": self.ftol, "gtol": self.gtol}  # fmt: skip
        try:
            result = minimize(self._evaluate, self.x.copy(), jac=True, method="L-BFGS-B",
                              callback=self._hand_over, options=options)  # fmt: skip
        except BaseException as exc:  # handed to the caller's thread, raised there
            self._events.put(("error", exc))
            return
        self._events.put(("done", result))  # after close() nobody reads it: the queue has room

    def _hand_over(self, intermediate_result) -> None:
        """scipy's callback: give the iterate (a copy: scipy reuses its array) and wait."""
        self._events.put(("iterate", (np.array(intermediate_result.x), float(intermediate_result.fun))))
        if not self._asks.get():
            raise StopIteration
