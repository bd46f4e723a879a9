"""What the search tests check against: the float64 neighbours, ties to the lower index,
found one query at a time in numpy; and the backends this machine can run."""

import numpy as np
import pytest

from nca_core.search.backends import faiss_available

needs_faiss = pytest.mark.skipif(not faiss_available(), reason="faiss-cpu is not installed")
BACKENDS = [pytest.param("faiss", marks=needs_faiss), "kdtree", "torch"]


def float64_neighbours(R, Q, k, own=None):
    """k nearest by float64 sum((q - r)^2), ties to the lower index: numpy, one query at a time."""
    R, Q = np.asarray(R, np.float64), np.asarray(Q, np.float64)
    found = []
    for i, q in enumerate(Q):
        dist = ((R - q) ** 2).sum(1)
        if own is not None:
            dist[own[i]] = np.inf
        found.append(np.lexsort((np.arange(len(R)), dist))[:k])
    return np.array(found)
