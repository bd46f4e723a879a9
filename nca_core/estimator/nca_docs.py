"""The sections of ``NCA``'s docstrings that follow its parameters: the class's See Also,
References and Examples, and ``fit_iter``'s Yields onward. They are appended on import
(``appended``), as pandas appends shared docstring sections, so that the estimator's code
reads in screens and the docstrings still run as doctests (tests/test_docstring_examples.py).
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["CLASS_SECTIONS", "FIT_ITER_SECTIONS", "appended"]

T = TypeVar("T", bound=Callable)


def appended(sections: str) -> Callable[[T], T]:
    """A decorator that ends a class's or function's docstring with ``sections``.

    The sections take the docstring's own indentation, so that the whole reads as one
    docstring written in place (for ``inspect.cleandoc``, doctest and mkdocstrings alike).
    """

    def append(obj: T) -> T:
        doc = (obj.__doc__ or "").rstrip()
        body = [line for line in doc.splitlines()[1:] if line.strip()]
        margin = min((len(line) - len(line.lstrip()) for line in body), default=0)
        text = textwrap.indent(inspect.cleandoc(sections), " " * margin)
        obj.__doc__ = f"{doc}\n\n{text}\n{' ' * margin}"
        return obj

    return append


CLASS_SECTIONS = """
See Also
--------
- ``sklearn.neighbors.NeighborhoodComponentsAnalysis``: scikit-learn's NCA, a linear
  map trained with L-BFGS on the whole n x n matrix.
- ``fit_projection``: PCA and LDA, the baselines NCA is compared with.
- ``knn_accuracy``: how well k nearest neighbours classify in the embedding.
- ``save_model``, ``load_model``: a fitted NCA in a file, without pickle.

References
----------
- J. Goldberger, S. Roweis, G. Hinton and R. Salakhutdinov (2004). Neighbourhood
  Components Analysis. Advances in Neural Information Processing Systems 17.
- M. R. Min, L. van der Maaten, Z. Yuan, A. J. Bonner and Z. Zhang (2010). Deep
  Supervised t-Distributed Embedding. ICML 2010: the Student-t kernel and the MCML
  objective (after A. Globerson and S. Roweis (2005), Metric Learning by Collapsing
  Classes, NIPS 18).
- Z. Wu, A. A. Efros and S. X. Yu (2018). Improving Generalization via Scalable
  Neighborhood Component Analysis. ECCV 2018: the memory bank of neighbours.

Examples
--------
>>> from sklearn.datasets import load_iris
>>> from nca_core import NCA
>>> X, y = load_iris(return_X_y=True)
>>> nca = NCA(n_components=2, random_state=0).fit(X, y)
>>> nca.transform(X).shape
(150, 2)
>>> nca.components_.shape, nca.kernel_
((2, 4), GaussianKernel(gaussian))

In front of a kNN classifier, with the features standardised first:

>>> from sklearn.model_selection import train_test_split
>>> from sklearn.neighbors import KNeighborsClassifier
>>> from sklearn.pipeline import make_pipeline
>>> from sklearn.preprocessing import StandardScaler
>>> X_train, X_test, y_train, y_test = train_test_split(
...     X, y, test_size=0.3, stratify=y, random_state=42)
>>> model = make_pipeline(StandardScaler(), NCA(n_components=2, random_state=0),
...                       KNeighborsClassifier(n_neighbors=3))
>>> round(model.fit(X_train, y_train).score(X_test, y_test), 2)
0.91

A network in place of the map (nonlinear NCA), with the Student-t kernel that
``kernel="auto"`` picks for it:

>>> deep = NCA(n_components=2, encoder="mlp", hidden_sizes=(16,), max_iter=5,
...            random_state=0).fit(X, y)
>>> deep.kernel_, deep.n_iter_, hasattr(deep, "components_")
(StudentTKernel(dof=1, learn=False), 5, False)
"""

FIT_ITER_SECTIONS = """
Yields
------
Snapshot
    A frozen copy of the state after each epoch (or part of one), epoch 0 first.

Raises
------
ValueError
    As ``fit``; also when only one of ``X_test`` and ``y_test`` is given, or
    ``plan`` was made for other parameters or data.
TrainingDiverged
    As ``fit``.

See Also
--------
- ``fit``: the same training without snapshots.
- ``Snapshot``: what each snapshot holds.

Examples
--------
>>> from sklearn.datasets import load_iris
>>> from nca_core import NCA
>>> X, y = load_iris(return_X_y=True)
>>> nca = NCA(n_components=2, optimizer="adam", max_iter=4, random_state=0)
>>> for snap in nca.fit_iter(X, y, display_size=30, eval_every=2):
...     print(snap.epoch, snap.embedding.shape, snap.train_accuracy is not None)
0 (30, 2) True
1 (30, 2) False
2 (30, 2) True
3 (30, 2) False
4 (30, 2) True
>>> nca.n_iter_, nca.display_index_.shape
(4, (30,))
"""
