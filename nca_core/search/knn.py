"""k-NN in one call: labels by majority vote, accuracy on a test set or left one out, and
each point's nearest others as training neighbours.

The votes go through a ``KNNIndex`` (``search.index``), whose exact answers are the float64
ones whichever backend searched; the neighbour lists go straight to a backend
(``search.backends``), where speed counts more than the last neighbour.
"""

from __future__ import annotations

import numpy as np
import torch

from ..util.device import block_elements
from .backends import (
    DEFAULT_BLOCK_ELEMENTS,
    KDTREE_MAX_DIM,
    TreeSearch,
    drop_self,
    faiss_available,
    faiss_module,
    faiss_threads,
    nearest_indices,
    search_settings,
)
from .index import KNNIndex

__all__ = ["knn_accuracy", "knn_predict", "leave_one_out_accuracy", "neighbour_lists"]

# Neighbour lists for training: an inverted-file index (FAISS IndexIVFFlat) from this many
# points on, with this many lists per square root of n, searching this many lists.
IVF_MIN_SAMPLES = 20_000
IVF_LISTS_PER_ROOT = 4
IVF_PROBES = 8


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
        return TreeSearch(Z).candidates(Z, k, own.numpy())[1]
    if not faiss_available() or Z.device.type != "cpu":
        found = torch.empty(n, k, dtype=torch.long, device=Z.device)
        for start, idx in nearest_indices(Z, Z, k, own, block_elements(DEFAULT_BLOCK_ELEMENTS, Z.device)):
            found[start : start + len(idx)] = idx
        return found
    vectors = np.ascontiguousarray(Z.float().numpy())
    with faiss_threads(torch.get_num_threads()):
        index = _training_index(vectors, seed)
        index.add(vectors)
    with search_settings(index):
        values, found = index.search(vectors, k + 1)
    return torch.from_numpy(drop_self(values, found, own.numpy())[1]).long()


def _training_index(vectors: np.ndarray, seed: int):
    """A flat index for a small set; an inverted file, trained on ``vectors``, for a large one."""
    faiss = faiss_module()
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


def knn_predict(
    Z_query, Z_ref, y_ref, k: int = 5, *, self_index=None, index: str = "auto", **options
) -> np.ndarray:
    """Predict labels of queries by a majority vote of their k nearest references.

    Neighbours are by Euclidean distance, exact in float64 unless ``index`` asks for HNSW;
    a tied vote goes to the tied class whose member ranks nearest (for k = 1, the plain
    nearest neighbour).

    Parameters
    ----------
    Z_query : array or Tensor of shape (n_query, d)
        The points to label, e.g. ``NCA.transform`` of test inputs.
    Z_ref : array or Tensor of shape (n_ref, d)
        The labelled points, in the same space.
    y_ref : array of shape (n_ref,), any label type
        Labels of ``Z_ref``.
    k : int, default=5
        Number of neighbours; capped at the number of references available.
    self_index : array of shape (n_query,), default=None
        Leave-one-out: query i is reference ``self_index[i]`` and does not vote for itself.
    index : {"auto", "exact", "hnsw"}, default="auto"
        See ``search.index.KNNIndex``; "auto" counts the graph's build against this one search.
    **options
        ``backend``, ``device``, ``deterministic``, ``ef_search``, ``max_block_elements``
        of ``KNNIndex``.

    Returns
    -------
    ndarray of shape (n_query,)
        Labels drawn from ``y_ref``.

    See Also
    --------
    - ``knn_accuracy``, ``leave_one_out_accuracy``: the fraction of these votes that are right.
    - ``sklearn.neighbors.KNeighborsClassifier``: the same vote as an estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from nca_core import knn_predict
    >>> X, y = load_iris(return_X_y=True)
    >>> names = np.array(["setosa", "versicolor", "virginica"])[y]
    >>> knn_predict(X[[0, 60, 120]], X, names, k=5)
    array(['setosa', 'versicolor', 'virginica'], dtype='<U10')
    """
    knn_index = KNNIndex(Z_ref, y_ref, index, n_queries=len(Z_query), **options)
    return knn_index.predict(Z_query, k, self_index=self_index)


def knn_accuracy(Z_train, y_train, Z_test, y_test, k: int = 5, **kwargs) -> float:
    """Fraction of test points whose k nearest training points vote for their label.

    Parameters
    ----------
    Z_train : array or Tensor of shape (n_train, d)
        Reference points, e.g. ``NCA.transform`` of the training inputs.
    y_train : array of shape (n_train,)
        Their labels.
    Z_test : array or Tensor of shape (n_test, d)
        Query points, in the same space.
    y_test : array of shape (n_test,)
        Their true labels.
    k : int, default=5
        Number of neighbours.
    **kwargs
        ``self_index``, ``index`` and the options of ``knn_predict``.

    Returns
    -------
    float
        Accuracy from 0 to 1.

    See Also
    --------
    - ``knn_predict``: the votes themselves.
    - ``leave_one_out_accuracy``: the same on the training points, each left out of its
      own vote.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.model_selection import train_test_split
    >>> from nca_core import knn_accuracy
    >>> X, y = load_iris(return_X_y=True)
    >>> X_train, X_test, y_train, y_test = train_test_split(
    ...     X, y, test_size=0.3, stratify=y, random_state=42)
    >>> round(knn_accuracy(X_train, y_train, X_test, y_test, k=5), 3)
    0.978
    """
    predicted = knn_predict(Z_test, Z_train, y_train, k, **kwargs)
    return float(np.mean(predicted == np.asarray(y_test)))


def leave_one_out_accuracy(Z, y, k: int = 5, *, sample=None, **kwargs) -> float:
    """Training accuracy where each point is classified by all the others.

    The k-NN counterpart of NCA's objective f, the expected number of points classified
    correctly when each is left out. ``sample`` (indices) restricts the queries to a
    subset, still voting among all points: on a large set, a stratified sample
    (``stratified_subsample``) measures it in a fraction of the time.

    Parameters
    ----------
    Z : array or Tensor of shape (n_samples, d)
        The points, e.g. ``NCA.transform`` of the training inputs.
    y : array of shape (n_samples,)
        Their labels.
    k : int, default=5
        Number of neighbours, the point itself not among them.
    sample : array of int, default=None
        Indices of the points to classify; None: all.
    **kwargs
        ``index`` and the options of ``knn_predict``.

    Returns
    -------
    float
        Accuracy from 0 to 1.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from nca_core import leave_one_out_accuracy
    >>> X, y = load_iris(return_X_y=True)
    >>> round(leave_one_out_accuracy(X, y, k=5), 3)
    0.967
    >>> leave_one_out_accuracy(X, y, k=5, sample=[0, 60, 120])
    1.0
    """
    y = np.asarray(y)
    sample = np.arange(len(y)) if sample is None else np.asarray(sample)
    predicted = knn_predict(Z[sample], Z, y, k, self_index=sample, **kwargs)
    return float(np.mean(predicted == y[sample]))
