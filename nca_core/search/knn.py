"""k-nearest-neighbour search and classification: exact, or through an HNSW graph.

Four ways answer the same question, chosen by ``KNNIndex(index=..., backend=...)``:

- a k-d tree (scipy) in float64: the default for data on the CPU in at most
  ``KDTREE_MAX_DIM`` dimensions (a 2-D picture), where it prunes nearly every reference
  that a flat search would measure;
- FAISS (faiss-cpu) exact flat search: the default for other data on the CPU, its
  distances computed by matrix products from ``BLAS_FROM_QUERIES`` queries on;
- a FAISS HNSW graph (Malkov and Yashunin, 2018): approximate, and many times faster per
  query on large reference sets once built;
- blocked torch search (exact): where FAISS is not installed or the data are on a GPU.
  Queries go in blocks so that the distance block never exceeds ``max_block_elements``
  entries: 10,000 queries against 60,000 references hold one block of at most that size
  (64 MB in float32 by default), never the full matrix.

Exact answers do not depend on the backend. Each backend proposes ``k + 4`` candidates
ranked in its own arithmetic (float32 for FAISS). Where the first ``k + 1`` lie further
apart than the backend's worst-case rounding error, that order is the true one; other
queries are re-ranked by float64 distance ``sum((q - r) ** 2)`` with ties going to the
lower reference index, and one whose k-th distance lies within that error of the last
candidate's (a tie, or a near one, at the boundary) is searched again with four times the
candidates, until the boundary is clear or every reference is a candidate. So exact search
returns the float64 answer with index tie-breaks, whichever backend ran. HNSW results are
ordered the same way but may miss a true neighbour.

HNSW graphs are built on one thread by default, which makes them reproducible (FAISS adds
points in an unspecified order when several threads build); searches use as many threads
as torch does (``torch.get_num_threads()``), so a job limited to one core stays on one.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from typing import Protocol

import numpy as np
import torch

from ..util.device import block_elements, resolve_device
from ..util.tensors import cpu_view

__all__ = [
    "BACKENDS",
    "INDEX_KINDS",
    "KNNIndex",
    "choose_index",
    "faiss_available",
    "knn_accuracy",
    "knn_predict",
    "leave_one_out_accuracy",
    "neighbour_lists",
]

DEFAULT_BLOCK_ELEMENTS = 1 << 24
INDEX_KINDS = ("auto", "exact", "hnsw")
BACKENDS = ("auto", "faiss", "kdtree", "torch")
KDTREE_MAX_DIM = 3
# Graph settings: M links per point, candidate lists while building and searching. On MNIST
# (benchmarks/knn_search.py) these give the exact search's 5-NN error in 32-D. The build's
# list is the shortest that finds what FAISS's default, 40, finds on MNIST and USPS, raw and
# NCA (benchmarks/hnsw_build.py): a shorter one builds faster and misses more.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 28
HNSW_EF_SEARCH = 64
# A graph costs about as much per point built, and per query, as this many exact distance
# evaluations where the choice falls (MNIST, raw and 32-D, benchmarks/graph_cost.py).
_GRAPH_COST = 20_000
# Neighbour lists for training: an inverted-file index (FAISS IndexIVFFlat) from this many
# points on, with this many lists per square root of n, searching this many lists.
IVF_MIN_SAMPLES = 20_000
IVF_LISTS_PER_ROOT = 4
IVF_PROBES = 8
# FAISS's flat search scans the references once per query below a threshold of queries x
# dimensions, and uses matrix products above it. The library's flat searches use products
# from this many queries on (benchmarks/faiss_flat.py; benchmarks/RESULTS.md, "FAISS's flat
# search through products").
BLAS_FROM_QUERIES = 16
_MARGIN = 4  # extra candidates, so ties and rounding at the k-th place are seen
_WIDEN = 4


@functools.cache
def _faiss():
    """The faiss module, imported on first use (it loads its own OpenMP and BLAS), or None."""
    try:
        import faiss
    except ImportError:  # the torch path answers exact searches without it
        return None
    return faiss


def faiss_available() -> bool:
    """Whether FAISS is installed (``pip install faiss-cpu``)."""
    return _faiss() is not None


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


def _nearest(Q: torch.Tensor, R: torch.Tensor, k: int, self_index, max_block_elements: int):
    """Yield (start, values, indices) of the k smallest ``|r|^2 - 2 q.r`` per query, in blocks.

    The values are squared distances less ``|q|^2``, a per-row constant, so their gaps are
    the gaps between distances.
    """
    ref_sq = (R * R).sum(1)
    block = max(1, max_block_elements // max(1, len(R)))
    for start in range(0, len(Q), block):
        q = Q[start : start + block]
        # ||q||^2 is constant along a row, so it does not change the ranking.
        dist = ref_sq - 2.0 * q @ R.T
        if self_index is not None:
            rows = torch.arange(len(q), device=Q.device)
            dist[rows, self_index[start : start + block]] = float("inf")
        values, indices = dist.topk(k, dim=1, largest=False)
        yield start, values, indices


def nearest_indices(
    Q: torch.Tensor,
    R: torch.Tensor,
    k: int,
    self_index: torch.Tensor | None,
    max_block_elements: int,
):
    """Yield (start, indices of the k nearest references, nearest first) for blocks of queries.

    ``self_index[i]`` is the position of query i among the references (it may not vote).
    Ranks in the data's dtype, ties in any order: ``KNNIndex`` makes the answer exact.
    """
    for start, _, indices in _nearest(Q, R, k, self_index, max_block_elements):
        yield start, indices


@torch.no_grad()
def neighbour_lists(Z: torch.Tensor, k: int, seed: int = 0) -> torch.Tensor:
    """Each row's ``k`` nearest other rows, nearest first, as a (n, k) tensor of indices.

    For choosing training neighbours, where speed counts more than the last neighbour:
    FAISS exact flat search below ``IVF_MIN_SAMPLES`` rows, an inverted-file index
    (k-means lists seeded by ``seed``, ``IVF_PROBES`` of them searched) from there on, and
    torch's exact blocked search without FAISS or off the CPU. -1 marks a place the
    inverted file found no neighbour for (lists too small).
    """
    n = len(Z)
    k = min(k, n - 1)
    own = torch.arange(n, device=Z.device)
    if Z.shape[1] <= KDTREE_MAX_DIM and Z.device.type == "cpu":
        return _TreeSearch(Z).candidates(Z, k, own.numpy())[1]
    if not faiss_available() or Z.device.type != "cpu":
        found = torch.empty(n, k, dtype=torch.long, device=Z.device)
        for start, idx in nearest_indices(Z, Z, k, own, block_elements(DEFAULT_BLOCK_ELEMENTS, Z.device)):
            found[start : start + len(idx)] = idx
        return found
    vectors = np.ascontiguousarray(Z.float().numpy())
    with _faiss_threads(torch.get_num_threads()):
        index = _training_index(vectors, seed)
        index.add(vectors)
    with _search_settings(index):
        values, found = index.search(vectors, k + 1)
    return torch.from_numpy(_drop_self(values, found, own.numpy())[1]).long()


def _training_index(vectors: np.ndarray, seed: int):
    """A flat index for a small set; an inverted file, trained on ``vectors``, for a large one."""
    faiss = _faiss()
    n, d = vectors.shape
    if n < IVF_MIN_SAMPLES:
        return faiss.IndexFlatL2(d)
    lists = int(IVF_LISTS_PER_ROOT * np.sqrt(n))
    index = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, lists)
    index.cp.seed, index.cp.niter = seed, 10
    index.cp.max_points_per_centroid = 16  # k-means on a sample of 16 points per list
    index.train(vectors)
    index.nprobe = IVF_PROBES
    return index


@contextlib.contextmanager
def _faiss_threads(n: int):
    """FAISS's OpenMP threads for the calling thread, restored afterwards."""
    faiss = _faiss()
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(max(1, n))
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


# FAISS's flat-search threshold is one setting for the process: a flat search holds this
# lock from setting it to putting it back (each search uses every core anyway)
_FLAT_SEARCH = threading.Lock()


@contextlib.contextmanager
def _search_settings(index):
    """Searches of a FAISS ``index`` on torch's thread count; a flat index's through matrix
    products from ``BLAS_FROM_QUERIES`` queries on, FAISS's own threshold put back after."""
    faiss = _faiss()
    with _faiss_threads(torch.get_num_threads()):
        if not isinstance(index, faiss.IndexFlat):
            yield
            return
        with _FLAT_SEARCH:
            settings = faiss.cvar
            before = settings.distance_compute_blas_threshold
            settings.distance_compute_blas_threshold = BLAS_FROM_QUERIES * index.d
            try:
                yield
            finally:
                settings.distance_compute_blas_threshold = before


def _drop_self(values: np.ndarray, found: np.ndarray, own: np.ndarray):
    """(n, c + 1) candidates less each row's own index (or its last, when absent)."""
    mine = found == own[:, None]
    mine[~mine.any(1), -1] = True
    n = len(found)
    return values[~mine].reshape(n, -1), found[~mine].reshape(n, -1)


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
        self._exact = _TorchSearch(self._R, self.max_block_elements)
        if self.backend == "faiss":
            self._search = _FaissSearch(self._R, self.kind, deterministic, self.ef_search)
        elif self.backend == "kdtree":
            self._search = _TreeSearch(self._R)
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

    def _backend_for(self, kind: str) -> _Search:
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


class _Search(Protocol):
    """A way to propose each query's nearest references, in its own arithmetic."""

    eps: float  # the machine epsilon of the distances it ranks by
    nbytes: int  # bytes the index holds

    def candidates(
        self, Q: torch.Tensor, want: int, own: np.ndarray | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(values, indices), each (n_query, want), nearest first, ``own[i]`` left out of row i."""


class _TorchSearch:
    """Exact search by blocks of squared distances in the references' dtype and device."""

    def __init__(self, R: torch.Tensor, max_block_elements: int):
        self.R, self.max_block_elements = R, max_block_elements
        self.eps = torch.finfo(R.dtype).eps
        self.nbytes = R.numel() * R.element_size()

    def candidates(self, Q, want, own):
        own_t = None if own is None else torch.as_tensor(own, device=self.R.device)
        blocks = list(_nearest(Q.to(self.R.dtype), self.R, want, own_t, self.max_block_elements))
        return torch.cat([v for _, v, _ in blocks]), torch.cat([i for _, _, i in blocks])


class _TreeSearch:
    """Exact search in a k-d tree of float64 vectors (scipy): for few dimensions only,
    where it visits a handful of cells per query instead of every reference."""

    eps = float(np.finfo(np.float64).eps)

    def __init__(self, R: torch.Tensor):
        from scipy.spatial import cKDTree

        self.vectors = np.ascontiguousarray(R.detach().cpu().numpy(), dtype=np.float64)
        self.tree = cKDTree(self.vectors)
        self.nbytes = self.vectors.nbytes + self.tree.indices.nbytes

    def candidates(self, Q, want, own):
        queries = np.asarray(Q.detach().cpu().numpy(), dtype=np.float64)
        extra = own is not None
        distances, found = self.tree.query(queries, want + extra, workers=torch.get_num_threads())
        distances, found = distances.reshape(len(queries), -1), found.reshape(len(queries), -1)
        found[found == len(self.vectors)] = -1  # scipy's mark for "no more references"
        values = np.square(distances)
        if extra:
            values, found = _drop_self(values, found, own)
        return torch.from_numpy(values), torch.from_numpy(found.astype(np.int64))


class _FaissSearch:
    """A FAISS index of float32 vectors: flat (exact) or an HNSW graph."""

    eps = float(np.finfo(np.float32).eps)

    def __init__(self, R: torch.Tensor, kind: str, deterministic: bool, ef_search: int):
        faiss = _faiss()
        vectors = np.ascontiguousarray(R.cpu().numpy(), dtype=np.float32)
        self.kind, self.ef_search = kind, ef_search
        if kind == "exact":
            self.index = faiss.IndexFlatL2(vectors.shape[1])
            self.index.add(vectors)
        else:
            self.index = faiss.IndexHNSWFlat(vectors.shape[1], HNSW_M)
            self.index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            with _faiss_threads(1 if deterministic else torch.get_num_threads()):
                self.index.add(vectors)

    @property
    def nbytes(self) -> int:
        vectors = self.index.ntotal * self.index.d * 4
        if self.kind == "exact":
            return vectors
        graph = self.index.hnsw
        return vectors + graph.neighbors.size() * 4 + graph.offsets.size() * 8 + graph.levels.size() * 4

    def candidates(self, Q, want, own):
        queries = np.ascontiguousarray(Q.cpu().numpy(), dtype=np.float32)
        params = None
        if self.kind == "hnsw":
            params = _faiss().SearchParametersHNSW(efSearch=max(self.ef_search, want + 1))
        with _search_settings(self.index):
            values, found = self.index.search(queries, want + (own is not None), params=params)
        if own is not None:
            values, found = _drop_self(values, found, own)
        return torch.from_numpy(values), torch.from_numpy(found)


def knn_predict(
    Z_query, Z_ref, y_ref, k: int = 5, *, self_index=None, index: str = "auto", **options
) -> np.ndarray:
    """Predict labels of queries by a majority vote of their k nearest references.

    Parameters
    ----------
    Z_query : array or Tensor of shape (n_query, d)
    Z_ref : array or Tensor of shape (n_ref, d)
    y_ref : array of shape (n_ref,), any label type
    k : int
        Number of neighbours; capped at the number of references available.
    self_index : array of shape (n_query,), optional
        Leave-one-out: query i is reference ``self_index[i]`` and does not vote for itself.
    index : {"auto", "exact", "hnsw"}
        See ``KNNIndex``; "auto" counts the graph's build against this one search.
    **options
        ``backend``, ``device``, ``deterministic``, ``ef_search``, ``max_block_elements``
        of ``KNNIndex``.

    Returns
    -------
    ndarray of shape (n_query,) with labels drawn from ``y_ref``.
    """
    knn_index = KNNIndex(Z_ref, y_ref, index, n_queries=len(Z_query), **options)
    return knn_index.predict(Z_query, k, self_index=self_index)


def knn_accuracy(Z_train, y_train, Z_test, y_test, k: int = 5, **kwargs) -> float:
    """Fraction of test points whose k nearest training points vote for their label."""
    predicted = knn_predict(Z_test, Z_train, y_train, k, **kwargs)
    return float(np.mean(predicted == np.asarray(y_test)))


def leave_one_out_accuracy(Z, y, k: int = 5, *, sample=None, **kwargs) -> float:
    """Training accuracy where each point is classified by all the others.

    ``sample`` (indices) restricts the queries to a subset, still voting among all points.
    """
    y = np.asarray(y)
    sample = np.arange(len(y)) if sample is None else np.asarray(sample)
    predicted = knn_predict(Z[sample], Z, y, k, self_index=sample, **kwargs)
    return float(np.mean(predicted == y[sample]))
