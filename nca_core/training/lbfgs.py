"""Limited-memory BFGS, one iteration at a time, with a line search that cannot freeze.

torch's L-BFGS with its strong-Wolfe search can return a step of 0 and then report "no
change" as convergence while the gradient is still large. Here each iteration takes a
strong-Wolfe step (scipy's ``line_search``) along the two-loop L-BFGS direction; if that
search fails, the memory is dropped and a backtracking (Armijo) step is taken along the
steepest descent. Only when even that cannot lower the loss does the run stop, and it says
so (``stalled``). Convergence follows L-BFGS-B's tests: the relative fall of the loss below
``ftol``, or the largest gradient entry below ``gtol``.
"""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Callable

import numpy as np

__all__ = ["LBFGS"]

Loss = Callable[[np.ndarray], tuple[float, np.ndarray]]

_C1, _C2 = 1e-4, 0.9  # sufficient decrease and curvature constants of the strong Wolfe test


class LBFGS:
    """Minimise ``loss(x) -> (value, gradient)`` over a flat float64 vector, step by step."""

    def __init__(
        self, loss: Loss, x0: np.ndarray, *, ftol: float = 1e-5, gtol: float = 1e-5, history: int = 10
    ):
        self.loss, self.ftol, self.gtol = loss, ftol, gtol
        self.x = np.asarray(x0, dtype=np.float64).copy()
        self.f, self.g = loss(self.x)
        self.pairs: deque[tuple[np.ndarray, np.ndarray, float]] = deque(maxlen=history)
        self.converged = self.stalled = False
        self.message = ""
        self._cache: tuple[np.ndarray, float, np.ndarray] | None = None

    def step(self) -> float:
        """One iteration; returns the new loss (``converged`` says whether to go on)."""
        if self.converged:
            return self.f
        if np.abs(self.g).max() <= self.gtol:
            return self._stop("the gradient is below gtol")
        x_new, f_new, g_new = self._wolfe_step()
        wolfe = x_new is not None
        if not wolfe:
            self.pairs.clear()
            x_new, f_new, g_new = self._backtracking_step()
        if x_new is None:
            self.stalled = True
            return self._stop("no step lowers the loss (line search failed)")
        s, y = x_new - self.x, g_new - self.g
        if s @ y > 1e-10 * (y @ y):  # keep only pairs that keep the inverse Hessian positive
            self.pairs.append((s, y, 1.0 / (s @ y)))
        fall = (self.f - f_new) / max(abs(self.f), abs(f_new), 1.0)
        self.x, self.f, self.g = x_new, f_new, g_new
        if np.abs(self.g).max() <= self.gtol:
            self._stop("the gradient is below gtol")
        elif wolfe and fall <= self.ftol:  # a cautious fallback step says nothing about convergence
            self._stop("the relative fall of the loss is below ftol")
        return self.f

    def _stop(self, message: str) -> float:
        self.converged, self.message = True, message
        return self.f

    def _direction(self) -> np.ndarray:
        """-H g by the two-loop recursion; the first step is scaled to unit length."""
        if not self.pairs:
            return -self.g / max(np.linalg.norm(self.g), 1e-300)
        q = self.g.copy()
        alphas = []
        for s, y, rho in reversed(self.pairs):
            alpha = rho * (s @ q)
            q -= alpha * y
            alphas.append(alpha)
        s, y, _ = self.pairs[-1]
        q *= (s @ y) / (y @ y)
        for (s, y, rho), alpha in zip(self.pairs, reversed(alphas)):
            q += (alpha - rho * (y @ q)) * s
        return -q

    def _evaluate(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """The loss at x; the line search asks for value and gradient separately."""
        if self._cache is None or not np.array_equal(self._cache[0], x):
            f, g = self.loss(x)
            self._cache = (x.copy(), f, g)
        return self._cache[1], self._cache[2]

    def _wolfe_step(self):
        """A step meeting the strong Wolfe conditions: the full L-BFGS step when it does (as
        it mostly does), else scipy's search, which starts from that same, cached, point."""
        p = self._direction()
        slope = p @ self.g
        if slope >= 0:  # not a descent direction (rounding): let the fallback handle it
            return None, None, None
        x_new = self.x + p
        f_new, g_new = self._evaluate(x_new)
        if np.isfinite(f_new) and f_new <= self.f + _C1 * slope and abs(g_new @ p) <= -_C2 * slope:
            return x_new, f_new, g_new
        return self._searched_step(p)

    def _searched_step(self, p: np.ndarray):
        from scipy.optimize import line_search

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # LineSearchWarning: a failed search returns None
            alpha, *_ = line_search(
                lambda x: self._evaluate(x)[0], lambda x: self._evaluate(x)[1],
                self.x, p, self.g, self.f, c1=_C1, c2=_C2, maxiter=20,
            )  # fmt: skip
        if alpha is None or alpha <= 0:
            return None, None, None
        x_new = self.x + alpha * p
        f_new, g_new = self._evaluate(x_new)
        return x_new, f_new, g_new

    def _backtracking_step(self, shrink: float = 0.5, tries: int = 60):
        """Armijo backtracking along -g from a unit-length step."""
        p = -self.g / max(np.linalg.norm(self.g), 1e-300)
        slope = p @ self.g
        alpha = 1.0
        for _ in range(tries):
            x_new = self.x + alpha * p
            f_new, g_new = self._evaluate(x_new)
            if np.isfinite(f_new) and f_new <= self.f + 1e-4 * alpha * slope and f_new < self.f:
                return x_new, f_new, g_new
            alpha *= shrink
        return None, None, None
