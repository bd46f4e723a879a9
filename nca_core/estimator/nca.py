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
from . import nca_docs
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
    n_components_ : int
        Dimension d of the embedding: ``n_components``, or n_features (or the rows of an
        init array) where that is None.
    components_ : ndarray of shape (n_components_, n_features_in_)
        The map A in float64 (linear and diagonal encoders only; a diagonal map is a
        square diagonal matrix). Absent after a fit with ``encoder="mlp"``.
    center_ : ndarray of shape (n_features_in_,)
        What ``transform`` subtracts from the inputs before the map, in float64: the
        training mean when ``center`` asks for it, else zeros. A run's model file
        (``runs.run.Run.model_file``) keeps here the mean of its standardisation too, so
        that it takes raw inputs.
    encoder_ : torch.nn.Module
        The trained encoder, on ``device_``; ``transform`` runs it for the MLP.
    kernel_ : torch.nn.Module
        The similarity kernel the fit trained with, as log k(squared distance):
        ``GaussianKernel`` (the paper's exp(-d^2)) or ``StudentTKernel`` (its degrees of
        freedom in ``dof_``), from ``objective.kernels``.
    dof_ : float or None
        The Student-t kernel's degrees of freedom after training (None for the Gaussian).
    pretrain_curve_ : list of float
        Mean squared reconstruction error after each pre-training epoch (empty: none).
    n_iter_ : int
        Iterations (L-BFGS) or epochs (minibatch optimisers) run.
    objective_curve_ : list of float
        Objective per point after each epoch (``Snapshot.objective``): n_iter_ + 1
        values, index 0 for the starting map.
    display_index_ : ndarray of shape (n_display,), dtype int64
        Rows of the training X whose embedding ``fit_iter``'s snapshots carry, a stratified
        subset of ``display_size`` rows (``Snapshot.embedding``); empty after ``fit``.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when X has string column names (a pandas
        DataFrame); absent otherwise.
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    device_ : str
        The device training ran on ("cpu", "cuda:0", ...).
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
        """Learn the map (or the network) from labelled data.

        Validates the parameters and the data, decides every "auto" setting (``plan``),
        starts the map as ``init`` says and trains it until ``max_iter``, ``tol`` or the
        ``callback`` ends the run.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs, at least 2 rows; float32 stays float32, other types become
            float64.
        y : array-like of shape (n_samples,)
            Class labels (numbers or strings).

        Returns
        -------
        self : NCA
            The fitted estimator.

        Raises
        ------
        ValueError
            A parameter out of its range, data the settings cannot train on (e.g.
            ``init="lda"`` with more components than features), or a device that is not
            available.
        TrainingDiverged
            The objective or the map stopped being finite; the fitted attributes hold the
            last finite epoch.

        See Also
        --------
        - ``fit_iter``: the same training, yielding a ``Snapshot`` after every epoch.
        - ``fit_transform``: fit, then ``transform`` X.

        Examples
        --------
        >>> from sklearn.datasets import load_iris
        >>> from nca_core import NCA
        >>> X, y = load_iris(return_X_y=True)
        >>> nca = NCA(n_components=2, random_state=0).fit(X, y)
        >>> nca.n_components_, nca.classes_
        (2, array([0, 1, 2]))

        A callback that returns True stops training and keeps the map learnt so far:

        >>> stop_at_3 = lambda params, n_iter: n_iter == 3
        >>> nca = NCA(n_components=2, callback=stop_at_3, random_state=0).fit(X, y)
        >>> nca.n_iter_, len(nca.objective_curve_)
        (3, 4)
        """
        for _ in self._fit_iter(X, y, display_size=0):  # no pictures: nobody sees the snapshots
            pass
        return self

    def transform(self, X):
        """Map X into the learnt embedding: X less ``center_``, through the map (or the network).

        For a linear or diagonal map this is ``(X - center_) @ components_.T``. A network
        runs on the device it trained on, and it (or a centred map) takes X in batches of
        8,192 rows, so that memory stays bounded whatever X's length.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_in_)
            Inputs, with the features the fit saw.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components_)
            The embedding, in X's dtype when that is float32 or float64, else float64.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn.datasets import load_iris
        >>> from nca_core import NCA
        >>> X, y = load_iris(return_X_y=True)
        >>> nca = NCA(n_components=2, random_state=0).fit(X, y)
        >>> Z = nca.transform(X.astype(np.float32))
        >>> Z.shape, Z.dtype
        ((150, 2), dtype('float32'))
        >>> bool(np.allclose(nca.transform(X), X @ nca.components_.T))
        True
        """
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

    @nca_docs.appended(nca_docs.FIT_ITER_SECTIONS)
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
        X : array-like of shape (n_samples, n_features)
            Training inputs, as for ``fit``.
        y : array-like of shape (n_samples,)
            Class labels.
        X_test : array-like of shape (n_test, n_features), default=None
            Held-out inputs whose kNN accuracy (against the training points) the
            evaluated snapshots carry; given together with ``y_test``.
        y_test : array-like of shape (n_test,), default=None
            Labels of ``X_test``.
        display_size : int or None, default=2000
            Size of the fixed, stratified subset of X whose embedding each snapshot carries
            (None: all of X; 0: none). ``display_index_`` holds its indices.
        eval_every : int or None, default=None
            Measure kNN accuracy at epoch 0, every this many epochs and at epoch max_iter;
            None never.
        k : int, default=5
            Neighbours for the kNN accuracies.
        eval_size : int or None, default=10000
            Leave-one-out training accuracy is measured on a stratified sample of this
            many training points (against all of them); None uses every point.
        frames_per_epoch : int, default=1
            With a value m > 1, minibatch optimisers also yield m - 1 evenly spaced snapshots during
            each epoch (``Snapshot.fraction`` < 1; no accuracies), for live pictures of
            large sets.
        should_stop : callable or None, default=None
            Asked between minibatches and before each evaluation; once it returns True,
            training ends as a close would (``training.loop.train``). For a Stop button in
            another thread, which would otherwise wait for the next snapshot.
        plan : Plan or None, default=None
            This estimator's ``plan`` for this data, made earlier to show its notes: the fit
            uses it instead of resolving the settings again (ValueError if the parameters or
            the data's shape have changed since).
        """
        self._validate_params()
        return self._fit_iter(
            X, y, X_test, y_test, display_size, eval_every, k, eval_size, frames_per_epoch, should_stop, plan
        )

    # -- helpers ----------------------------------------------------------------------

    def plan(self, shape: DataShape) -> Plan:
        """What a fit on data of ``shape`` would do, with notes on what it changes.

        Every "auto" setting decided for that data (``config.plan.make_plan``), without
        training. A fit makes its own plan; one made earlier, to show its notes, can be
        handed to ``fit_iter`` so that the settings are decided once.

        Parameters
        ----------
        shape : DataShape
            The data's size: ``config.rules.DataShape(n_samples, n_features, n_classes)``,
            or ``DataShape.of(X, n_classes, encoder)``.

        Returns
        -------
        Plan
            Its settings read as attributes (``plan.optimizer``, ``plan.max_iter``, ...);
            ``plan.notes`` lists what was adjusted or qualified (``config.rules.Note``),
            which a fit raises (level "error") or warns (level "warning") about.

        Raises
        ------
        ValueError
            A device that is not available.

        Examples
        --------
        >>> from nca_core import NCA
        >>> from nca_core.config.rules import DataShape
        >>> plan = NCA(n_components=2).plan(DataShape(n_samples=200_000, n_features=784, n_classes=10))
        >>> plan.optimizer, plan.neighbors, plan.dtype
        ('adam', 'nearest', 'float32')
        >>> plan = NCA(n_components=3, init="lda").plan(DataShape(150, 4, 3))
        >>> [(note.setting, note.level) for note in plan.notes]
        [('init', 'warning')]
        """
        return make_plan(self.get_params(deep=False), shape)




NCA.__doc__ = NCA.__doc__.replace("{parameters}", parameters_doc(ESTIMATOR_PARAMS))
nca_docs.appended(nca_docs.CLASS_SECTIONS)(NCA)  # See Also, References, Examples
# scikit-learn reads the parameters from the constructor's signature: the declared ones, by
# keyword, n_components also by position (as scikit-learn's own NCA)
NCA.__init__.__signature__ = inspect.Signature(
    [
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("n_components", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
        *(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default) for p in ESTIMATOR_PARAMS[1:]),
    ]
)

