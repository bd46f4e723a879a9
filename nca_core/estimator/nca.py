"""``NCA``: a scikit-learn estimator built on the torch training loop."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..config.declaration import Range, Words, parameters_doc
from ..config.params import ESTIMATOR_PARAMS
from ..config.plan import Plan, make_plan
from ..config.rules import DataShape
from ..training.loop import Snapshot
from .fitting import Fitting

__all__ = ["NCA", "Plan"]

_TRANSFORM_BATCH = 8192


def _constraints(accepts: tuple) -> list:
    """scikit-learn's constraints for a declared parameter (``params.Param.accepts``)."""
    return [
        StrOptions(set(c.values)) if isinstance(c, Words)
        else Interval(c.kind, c.low, c.high, closed=c.closed) if isinstance(c, Range)
        else c
        for c in accepts
    ]  # fmt: skip


class NCA(Fitting, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Neighbourhood Components Analysis (Goldberger et al., 2004), trained with PyTorch.

    Learns a map A of shape (n_components, n_features) so that a stochastic nearest-neighbour
    rule works well in the space z = A x; or, with ``encoder="mlp"``, a neural network z = f(x)
    (nonlinear NCA), optionally with the Student-t kernel and MCML objective of Min et al.
    (2010) and a memory bank of neighbours (Wu et al., 2018). Parameters shared with
    ``sklearn.neighbors.NeighborhoodComponentsAnalysis`` have the same names and meanings.
    As there, inputs are used as given: put a ``StandardScaler`` in front in a ``Pipeline``
    when features have different scales.

    Parameters
    ----------
{parameters}

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The map A (linear and diagonal encoders only).
    center_ : ndarray of shape (n_features,)
        What ``transform`` subtracts from the inputs before the map, in float64: the
        training mean when ``center`` asks for it, else zeros. A run's model file
        (``runs.run.Run.model_file``) keeps here the mean of its standardisation too, so
        that it takes raw inputs.
    encoder_ : torch.nn.Module
        The trained encoder; ``transform`` runs it for the MLP.
    dof_ : float or None
        The Student-t kernel's degrees of freedom after training (None for the Gaussian).
    pretrain_curve_ : list of float
        Mean squared reconstruction error after each pre-training epoch (empty: none).
    n_iter_ : int
        Epochs run.
    objective_curve_ : list of float
        Objective per point after each epoch (index 0 is the starting map).
    n_features_in_ : int
    classes_ : ndarray of shape (n_classes,)
    device_ : str
        The device training ran on.
    """

    _parameter_constraints: dict = {p.name: _constraints(p.accepts) for p in ESTIMATOR_PARAMS}  # noqa: RUF012

    def __init__(self, n_components=None, **params):
        self.n_components = n_components
        for p in ESTIMATOR_PARAMS[1:]:
            setattr(self, p.name, params.pop(p.name, p.default))
        if params:
            raise TypeError(f"NCA got unexpected keyword arguments: {', '.join(sorted(params))}")

    # -- scikit-learn API -------------------------------------------------------------

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the map from X of shape (n_samples, n_features) and labels y."""
        for _ in self._fit_iter(X, y, display_size=0):  # no pictures: nobody sees the snapshots
            pass
        return self

    def transform(self, X):
        """Map X of shape (n_samples, n_features) to shape (n_samples, n_components):
        X less ``center_``, through the map (or the network)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        centred = bool(np.any(self.center_))
        if hasattr(self, "components_") and not centred:
            return X @ self.components_.T.astype(X.dtype, copy=False)
        out = np.empty((len(X), self.n_components_), dtype=X.dtype)
        for start in range(0, len(X), _TRANSFORM_BATCH):
            rows = X[start : start + _TRANSFORM_BATCH]
            if centred:  # in float64, rounded once to X's dtype: rows far from the origin keep their digits
                rows = (rows - self.center_).astype(X.dtype, copy=False)
            out[start : start + len(rows)] = self._map(rows)
        return out

    def _map(self, rows: np.ndarray) -> np.ndarray:
        """The map (or the network) applied to rows as given, in their dtype."""
        if hasattr(self, "components_"):
            return rows @ self.components_.T.astype(rows.dtype, copy=False)
        first = next(self.encoder_.parameters())
        with torch.no_grad():
            return self.encoder_(torch.tensor(rows, dtype=first.dtype, device=first.device)).cpu().numpy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    @property
    def _n_features_out(self):
        return self.n_components_

    # -- streaming training -----------------------------------------------------------

    def fit_iter(
        self,
        X,
        y,
        X_test=None,
        y_test=None,
        *,
        display_size: int | None = 2000,
        eval_every: int | None = None,
        k: int = 5,
        eval_size: int | None = 10000,
        frames_per_epoch: int = 1,
        should_stop: Callable[[], bool] | None = None,
        plan: Plan | None = None,
    ) -> Iterator[Snapshot]:
        """Train and yield a frozen Snapshot at the start and after every epoch.

        The fitted attributes are updated after every epoch, so closing the generator (or a
        callback returning True) keeps everything learnt so far.

        Parameters
        ----------
        X, y : training data of shape (n_samples, n_features) and labels.
        X_test, y_test : optional held-out data for test kNN accuracy.
        display_size : int or None
            Size of the fixed, stratified subset of X whose embedding each snapshot carries
            (None: all of X; 0: none). ``display_index_`` holds its indices.
        eval_every : int or None
            Measure kNN accuracy every this many epochs (and at the last); None never.
        k : int
            Neighbours for the kNN accuracies.
        eval_size : int or None
            Leave-one-out training accuracy is measured on a stratified sample of this
            many training points (against all of them); None uses every point.
        frames_per_epoch : int
            With k > 1, minibatch optimisers also yield k - 1 evenly spaced snapshots during
            each epoch (``Snapshot.fraction`` < 1; no accuracies), for live pictures of large sets.
        should_stop : callable or None
            Asked between minibatches and before each evaluation; once it returns True,
            training ends as a close would (``training.loop.train``). For a Stop button in
            another thread, which would otherwise wait for the next snapshot.
        plan : Plan or None
            This estimator's ``plan`` for this data, made earlier to show its notes: the fit
            uses it instead of resolving the settings again (ValueError if the parameters or
            the data's shape have changed since).

        Yields
        ------
        Snapshot
            A frozen copy of the state after each epoch (or part of one), epoch 0 first.
        """
        self._validate_params()
        return self._fit_iter(
            X, y, X_test, y_test, display_size, eval_every, k, eval_size, frames_per_epoch, should_stop, plan
        )

    # -- helpers ----------------------------------------------------------------------

    def plan(self, shape: DataShape) -> Plan:
        """What a fit on data of ``shape`` would do (``config.plan.make_plan``), with notes on
        what it changes. A fit makes its own plan; one made earlier, to show its notes, can be
        handed to ``fit_iter`` so that the settings are decided once."""
        return make_plan(self.get_params(deep=False), shape)




NCA.__doc__ = NCA.__doc__.replace("{parameters}", parameters_doc(ESTIMATOR_PARAMS))
# scikit-learn reads the parameters from the constructor's signature: the declared ones, by
# keyword, n_components also by position (as scikit-learn's own NCA)
NCA.__init__.__signature__ = inspect.Signature(
    [
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("n_components", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
        *(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default) for p in ESTIMATOR_PARAMS[1:]),
    ]
)

