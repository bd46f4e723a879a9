"""A k-NN index: reference points indexed once, searched exactly or through an HNSW graph.

Exact answers do not depend on the backend. Each backend proposes ``k + 4`` candidates
ranked in its own arithmetic (float32 for FAISS). Where the first ``k + 1`` lie further
apart than the backend's worst-case rounding error, that order is the true one; other
queries are re-ranked by float64 distance ``sum((q - r) ** 2)`` with ties going to the
lower reference index, and one whose k-th distance lies within that error of the last
candidate's (a tie, or a near one, at the boundary) is searched again with four times the
candidates, until the boundary is clear or every reference is a candidate. So exact search
returns the float64 answer with index tie-breaks, whichever backend ran. HNSW results are
ordered the same way but may miss a true neighbour.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from ..util.device import block_elements, resolve_device
from ..util.tensors import cpu_view
from .backends import (
    DEFAULT_BLOCK_ELEMENTS,
    HNSW_EF_SEARCH,
    KDTREE_MAX_DIM,
    FaissSearch,
    Search,
    TorchSearch,
    TreeSearch,
    faiss_available,
)

__all__ = ["BACKENDS", "INDEX_KINDS", "KNNIndex", "choose_index"]

INDEX_KINDS = ("auto", "exact", "hnsw")
BACKENDS = ("auto", "faiss", "kdtree", "torch")
# A graph costs about as much per point built, and per query, as this many exact distance
# evaluations where the choice falls (MNIST, raw and 32-D, 5,000 to 60,000 references;
# measured in commit 1871791).
_GRAPH_COST = 20_000
_MARGIN = 4  # extra candidates, so ties and rounding at the k-th place are seen
_WIDEN = 4


def choose_index(n_ref: int, n_queries: int | None = None) -> str:
    """The index "auto" picks: "hnsw" where a graph should answer at least twice as fast.

    With ``n_queries`` (a one-off search) the graph's build counts against it: exact search
    of 10,000 queries against 60,000 references beats building a graph. Without it (an
    index kept for many queries) only the query cost counts: graphs pay from about 40,000
    references. Small reference sets always get exact search, which is then cheap.
    """
    queries = 1 if n_queries is None else n_queries
    exact = n_ref * queries
    graph = _GRAPH_COST * (queries + (0 if n_queries is None else n_ref))
    return "hnsw" if exact >= 2 * graph else "exact"


def _as_tensor(a, device: torch.device) -> torch.Tensor:
    if not isinstance(a, torch.Tensor):
        a = np.asarray(a)
        t = cpu_view(a)  # shared read-only arrays too: torch views them, never writes
    else:
        t = a.detach()
    if not t.is_floating_point():
        t = t.double()
    return t.to(device)


def _vote(neighbour_labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Majority vote over each row of (n_query, k) class indices ordered nearest first.

    Ties between classes go to the tied class whose member ranks nearest, which is
    deterministic and, for k = 1, the plain nearest neighbour. Plain numpy, one column at a
    time: after a FAISS search, waking torch's thread pool costs more than the vote.
    """
    n_query, k = neighbour_labels.shape
    rows = np.arange(n_query)
    counts = np.zeros((n_query, n_classes), dtype=np.int64)
    first_rank = np.full((n_query, n_classes), k, dtype=np.int64)
    for rank in reversed(range(k)):  # a class's nearest member writes its rank last
        column = neighbour_labels[:, rank]
        counts[rows, column] += 1
        first_rank[rows, column] = rank
    return (counts * (k + 1) - first_rank).argmax(1)


def _lexsort_rows(dist: torch.Tensor, cand: torch.Tensor) -> torch.Tensor:
    """Per row, the order of (distance, index) pairs: nearest first, ties to the lower index."""
    by_index = cand.argsort(dim=1, stable=True)
    by_distance = dist.gather(1, by_index).argsort(dim=1, stable=True)
    return by_index.gather(1, by_distance)


class KNNIndex:
    """Reference points indexed once for k-NN search and majority votes.

    Parameters
    ----------
    Z_ref : array or Tensor of shape (n_ref, d)
    y_ref : array of shape (n_ref,), any label type
    index : {"auto", "exact", "hnsw"}
        "auto" asks ``choose_index`` (exact unless FAISS can build a graph that pays).
    n_queries : int, optional
        How many queries the index will answer, for "auto"; None means many (the build is
        paid once and shared), as when the index is kept.
    backend : {"auto", "faiss", "kdtree", "torch"}
        "auto" is a k-d tree for exact search on the CPU in at most ``KDTREE_MAX_DIM``
        dimensions, FAISS for other data on the CPU (and for any HNSW index), else torch.
    device : str or torch.device
        Where the references live for the torch path and the float64 re-ranking.
    deterministic : bool
        Build the HNSW graph on one thread, so the same data always give the same graph;
        False builds on torch's thread count (faster, the graph may differ run to run).
    ef_search : int
        HNSW candidate list while searching (at least the candidates asked for).
    max_block_elements : int, optional
        Bound on the entries of any distance or candidate block held at once; None: the
        device's (``util.device.block_elements``).

    Attributes
    ----------
    kind : "exact" or "hnsw"
    backend : "faiss", "kdtree" or "torch"
    build_seconds : float, time to build the index (copying the vectors, or the graph)
    nbytes : int, bytes the index holds: its vectors, plus the graph's links for HNSW
    classes_ : ndarray of the distinct labels
    """

    def __init__(
        self,
        Z_ref,
        y_ref,
        index: str = "auto",
        *,
        n_queries: int | None = None,
        backend: str = "auto",
        device: str | torch.device | None = "auto",
        deterministic: bool = True,
        ef_search: int = HNSW_EF_SEARCH,
        max_block_elements: int | None = None,
    ):
        self.device = resolve_device(device)
        if max_block_elements is None:
            max_block_elements = block_elements(DEFAULT_BLOCK_ELEMENTS, self.device)
        self.classes_, self._labels = np.unique(np.asarray(y_ref), return_inverse=True)
        self._R = _as_tensor(Z_ref, self.device)
        if self._R.ndim != 2:
            raise ValueError(f"references must be 2-D, got shape {tuple(self._R.shape)}")
        if len(self._R) != len(self._labels):
            raise ValueError(f"{len(self._R)} references but {len(self._labels)} labels")
        self.backend, self.kind = self._resolve(index, backend, n_queries)
        self.ef_search, self.max_block_elements = int(ef_search), int(max_block_elements)
        # float64 work (re-ranking, error bounds) runs on the CPU where the device has none
        self._exact_device = torch.device("cpu") if self.device.type == "mps" else self.device
        # the largest |r|^2, for error bounds (1% over, for its own rounding), without a copy
        self._ref_sq_max = (
            1.01 * float(torch.linalg.vector_norm(self._R, dim=1).max()) ** 2 if len(self._R) else 0.0
        )
        start = time.perf_counter()
        # what answers searches of the index's own kind; exact re-searches after an HNSW
        # search go through the blocked torch search, which every index can run
        self._exact = TorchSearch(self._R, self.max_block_elements)
        if self.backend == "faiss":
            self._search = FaissSearch(self._R, self.kind, deterministic, self.ef_search)
        elif self.backend == "kdtree":
            self._search = TreeSearch(self._R)
        else:
            self._search = self._exact
        self.build_seconds = time.perf_counter() - start

    def _resolve(self, index: str, backend: str, n_queries: int | None) -> tuple[str, str]:
        if index not in INDEX_KINDS:
            raise ValueError(f"index must be one of {INDEX_KINDS}, got {index!r}")
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        if backend in ("torch", "kdtree") and index == "hnsw":
            raise ValueError(f"index='hnsw' needs the faiss backend, not {backend!r}")
        found = faiss_available()
        if not found and (backend == "faiss" or index == "hnsw"):
            raise ValueError(f"index={index!r} with backend={backend!r} needs FAISS: pip install faiss-cpu")
        on_cpu = self.device.type == "cpu"
        if backend == "kdtree" and not on_cpu:
            raise ValueError(f"backend='kdtree' searches on the CPU, not on {self.device}")
        if backend == "auto" and on_cpu and index != "hnsw" and self._R.shape[1] <= KDTREE_MAX_DIM:
            backend, index = "kdtree", "exact"
        if backend == "auto":
            backend = "faiss" if found and (on_cpu or index == "hnsw") else "torch"
        if index == "auto":
            index = choose_index(len(self._R), n_queries) if backend == "faiss" else "exact"
        return backend, index

    @property
    def nbytes(self) -> int:
        return self._search.nbytes

    def predict(self, Z_query, k: int = 5, *, self_index=None) -> np.ndarray:
        """Labels of the queries by a majority vote of their k nearest references.

        Returns an ndarray of shape (n_query,) with labels drawn from ``y_ref``.
        """
        neighbours = self._labels[self.search(Z_query, k, self_index=self_index)]
        return self.classes_[_vote(neighbours, len(self.classes_))]

    def accuracy(self, Z_query, y_query, k: int = 5, *, self_index=None) -> float:
        """Fraction of queries whose k nearest references vote for their label."""
        return float(np.mean(self.predict(Z_query, k, self_index=self_index) == np.asarray(y_query)))

    def search(self, Z_query, k: int, *, self_index=None) -> np.ndarray:
        """Indices of each query's k nearest references, nearest first.

        Parameters
        ----------
        Z_query : array or Tensor of shape (n_query, d)
        k : int
            Number of neighbours; capped at the number of references available.
        self_index : array of shape (n_query,), optional
            Leave-one-out: query i is reference ``self_index[i]`` and is not its own
            neighbour (a duplicate of it, at distance 0, still is).

        Returns
        -------
        ndarray of shape (n_query, k), int64
        """
        Q, own, k = self._check(Z_query, k, self_index)
        available = len(self._R) - (own is not None)
        found = np.empty((len(Q), k), dtype=np.int64)
        todo = np.arange(len(Q))
        want, kind = min(k + _MARGIN, available), self.kind
        while len(todo):
            # todo is a sorted subset of the rows: all of them (no copy) on the first pass
            batch = Q if len(todo) == len(Q) else Q[torch.as_tensor(todo, device=self.device)]
            values, candidates = self._candidates(batch, want, None if own is None else own[todo], kind)
            top, unsure = self._rank(batch, values, candidates, k, kind, complete=want == available)
            found[todo] = top.cpu().numpy()
            # HNSW rows short of k neighbours, and exact rows with a tie or a near one at the
            # boundary, are searched again exactly with more candidates.
            todo, want, kind = todo[unsure.cpu().numpy()], min(_WIDEN * want, available), "exact"
        return found

    def _check(self, Z_query, k, self_index) -> tuple[torch.Tensor, np.ndarray | None, int]:
        Q = _as_tensor(Z_query, self.device)
        if Q.ndim != 2 or Q.shape[1] != self._R.shape[1]:
            raise ValueError(
                f"queries {tuple(Q.shape)} and references {tuple(self._R.shape)} must be 2-D with equal widths"
            )
        own = None
        if self_index is not None:
            own = np.asarray(torch.as_tensor(self_index).cpu(), dtype=np.int64)
            if own.shape != (len(Q),):
                raise ValueError(f"self_index must have one entry per query ({len(Q)})")
        k = int(k)
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        k = min(k, len(self._R) - int(own is not None))
        if k < 1:
            raise ValueError("need at least one reference other than the query itself")
        return Q, own, k

    def _backend_for(self, kind: str) -> Search:
        return self._search if kind == self.kind else self._exact

    def _candidates(self, Q: torch.Tensor, want: int, own: np.ndarray | None, kind: str):
        """(values, indices), each (n, want): candidates nearest first in the backend's own
        arithmetic, own index excluded; values are distances up to a per-row constant."""
        values, found = self._backend_for(kind).candidates(Q, want, own)
        return values.to(self.device), found.to(self.device)

    def _slack(self, Q: torch.Tensor, kind: str) -> torch.Tensor:
        """Per query, a bound on the rounding error of any squared distance computed in the
        search's precision eps: (d + 2) eps (|q|^2 + |r|^2) for d-term sums, taken as
        2 (d + 4) eps (...) to cover inputs rounded to float32 first."""
        eps = self._backend_for(kind).eps
        q = Q.to(self._exact_device, torch.float64)
        return 2 * (Q.shape[1] + 4) * eps * ((q * q).sum(1) + self._ref_sq_max)

    def _rank(self, Q, values, candidates, k: int, kind: str, complete: bool):
        """The k nearest candidates (by float64 distance, ties to the lower index) and which
        rows may be wrong: HNSW rows short of k; exact rows whose k-th distance is within
        twice the rounding bound of the last candidate's, unless every reference was one.

        Rows whose first k + 1 values are further apart than twice the bound are already
        in that order; only the others are re-ranked in float64.
        """
        Q, values, candidates = (t.to(self._exact_device) for t in (Q, values, candidates))
        slack = self._slack(Q, kind)
        head = values[:, : k + 1].double()
        clear = (head.diff(dim=1) > 2 * slack[:, None]).all(1)
        top, unsure = candidates[:, :k].clone(), torch.zeros(len(Q), dtype=torch.bool, device=Q.device)
        step = max(1, self.max_block_elements // (4 * candidates.shape[1] * self._R.shape[1]))
        for rows in torch.nonzero(~clear).squeeze(1).split(step):
            dist, idx = self._reranked(Q[rows], candidates[rows])
            top[rows] = idx[:, :k]
            if kind == "exact" and not complete:
                unsure[rows] = dist[:, k - 1] >= dist[:, -1] - 2 * slack[rows]
        if kind == "hnsw":
            unsure = (top < 0).any(1)
        return top, unsure

    def _reranked(self, Q: torch.Tensor, candidates: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Candidates sorted by float64 squared distance, ties to the lower index."""
        diff = self._R[candidates.clamp(min=0).to(self.device)].to(Q.device, torch.float64)
        diff.sub_(Q.double()[:, None, :]).square_()
        dist = diff.sum(-1)
        dist[candidates < 0] = float("inf")  # FAISS pads with -1 when it finds too few
        order = _lexsort_rows(dist, candidates)
        return dist.gather(1, order), candidates.gather(1, order)
