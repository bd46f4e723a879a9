"""The ways a k-NN index proposes each query's nearest references, in its own arithmetic.

Four ways answer the same question, chosen by ``KNNIndex(index=..., backend=...)``
(``search.index``):

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

HNSW graphs are built on one thread by default, which makes them reproducible (FAISS adds
points in an unspecified order when several threads build); searches use as many threads
as torch does (``torch.get_num_threads()``), so a job limited to one core stays on one.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from typing import Protocol

import numpy as np
import torch

__all__ = [
    "FaissSearch",
    "Search",
    "TorchSearch",
    "TreeSearch",
    "drop_self",
    "faiss_available",
    "faiss_module",
    "faiss_threads",
    "nearest_indices",
    "search_settings",
]

DEFAULT_BLOCK_ELEMENTS = 1 << 24
KDTREE_MAX_DIM = 3
# Graph settings: M links per point, candidate lists while building and searching. On MNIST
# (benchmarks/knn_search.py) these give the exact search's 5-NN error in 32-D. The build's
# list is the shortest that finds what FAISS's default, 40, finds on MNIST and USPS, raw and
# NCA (measured in commit 4dc903f): a shorter one builds faster and misses more.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 28
HNSW_EF_SEARCH = 64
# FAISS's flat search scans the references once per query below a threshold of queries x
# dimensions, and uses matrix products above it. The library's flat searches use products
# from this many queries on: in 32-D the scan is faster below it, the products from it on
# (measured in commit f464d40; a million references in benchmarks/RESULTS.md).
BLAS_FROM_QUERIES = 16


@functools.cache
def faiss_module():
    """The faiss module, imported on first use (it loads its own OpenMP and BLAS), or None."""
    try:
        import faiss
    except ImportError:  # the torch path answers exact searches without it
        return None
    return faiss


def faiss_available() -> bool:
    """Whether FAISS is installed (``pip install faiss-cpu``)."""
    return faiss_module() is not None


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


@contextlib.contextmanager
def faiss_threads(n: int):
    """FAISS's OpenMP threads for the calling thread, restored afterwards."""
    faiss = faiss_module()
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
def search_settings(index):
    """Searches of a FAISS ``index`` on torch's thread count; a flat index's through matrix
    products from ``BLAS_FROM_QUERIES`` queries on, FAISS's own threshold put back after."""
    faiss = faiss_module()
    with faiss_threads(torch.get_num_threads()):
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


def drop_self(values: np.ndarray, found: np.ndarray, own: np.ndarray):
    """(n, c + 1) candidates less each row's own index (or its last, when absent)."""
    mine = found == own[:, None]
    mine[~mine.any(1), -1] = True
    n = len(found)
    return values[~mine].reshape(n, -1), found[~mine].reshape(n, -1)


class Search(Protocol):
    """A way to propose each query's nearest references, in its own arithmetic."""

    eps: float  # the machine epsilon of the distances it ranks by
    nbytes: int  # bytes the index holds

    def candidates(
        self, Q: torch.Tensor, want: int, own: np.ndarray | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(values, indices), each (n_query, want), nearest first, ``own[i]`` left out of row i."""


class TorchSearch:
    """Exact search by blocks of squared distances in the references' dtype and device."""

    def __init__(self, R: torch.Tensor, max_block_elements: int):
        self.R, self.max_block_elements = R, max_block_elements
        self.eps = torch.finfo(R.dtype).eps
        self.nbytes = R.numel() * R.element_size()

    def candidates(self, Q, want, own):
        own_t = None if own is None else torch.as_tensor(own, device=self.R.device)
        blocks = list(_nearest(Q.to(self.R.dtype), self.R, want, own_t, self.max_block_elements))
        return torch.cat([v for _, v, _ in blocks]), torch.cat([i for _, _, i in blocks])


class TreeSearch:
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
            values, found = drop_self(values, found, own)
        return torch.from_numpy(values), torch.from_numpy(found.astype(np.int64))


class FaissSearch:
    """A FAISS index of float32 vectors: flat (exact) or an HNSW graph."""

    eps = float(np.finfo(np.float32).eps)

    def __init__(self, R: torch.Tensor, kind: str, deterministic: bool, ef_search: int):
        faiss = faiss_module()
        vectors = np.ascontiguousarray(R.cpu().numpy(), dtype=np.float32)
        self.kind, self.ef_search = kind, ef_search
        if kind == "exact":
            self.index = faiss.IndexFlatL2(vectors.shape[1])
            self.index.add(vectors)
        else:
            self.index = faiss.IndexHNSWFlat(vectors.shape[1], HNSW_M)
            self.index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            with faiss_threads(1 if deterministic else torch.get_num_threads()):
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
            params = faiss_module().SearchParametersHNSW(efSearch=max(self.ef_search, want + 1))
        with search_settings(self.index):
            values, found = self.index.search(queries, want + (own is not None), params=params)
        if own is not None:
            values, found = drop_self(values, found, own)
        return torch.from_numpy(values), torch.from_numpy(found)
