"""``NCA``: a scikit-learn estimator built on the torch training loop."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from ..config.declaration import Range, Words, parameters_doc
from ..config.params import ESTIMATOR_PARAMS
from ..config.plan import Plan, make_plan
from ..config.rules import DataShape
from ..objective.weights import terms_in_value
from ..search import knn
from ..training.epochs import make_epochs
from ..training.loop import Snapshot, train
from ..training.problem import EpochStrategy, Problem
from ..util.sampling import stratified_subsample
from .report import Report
from .start import Previous, Start, display_index, make_start, rows_less, training_offset, training_rows

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


class NCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
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

    def _fit_iter(
        self,
        X,
        y,
        X_test=None,
        y_test=None,
        display_size=2000,
        eval_every=None,
        k=5,
        eval_size=10000,
        frames_per_epoch=1,
        should_stop=None,
        plan=None,
    ):
        report = Report(self, self.verbose)
        start = self._prepare(X, y, report, plan)
        offset = training_offset(start, self.center_)
        order = np.argsort(start.y_index, kind="stable")  # training wants classes in turn
        X_t = training_rows(start.X, order, offset, start.dtype, start.device)
        self.display_index_ = display_index(start.y, display_size, start.seed)
        # less center_ as transform subtracts it, so that a snapshot is what transform gives
        X_display = rows_less(start.X, self.display_index_, self.center_, start.dtype, start.device)
        evaluate = None
        if eval_every is not None:
            X_test_t, y_test = self._test_rows(X_test, y_test, offset, start)
            y_sorted = start.y[order]
            sample = np.arange(len(y_sorted)) if eval_size is None else stratified_subsample(y_sorted, eval_size, start.seed)
            evaluate = _knn_evaluator(X_t, y_sorted, X_test_t, y_test, k, sample, start.device)
        epochs = self._strategy(start, X_t, start.y_index[order])
        max_iter = start.plan.max_iter
        stream = train(
            epochs, max_iter=max_iter, tol=start.plan.tol, evaluate=evaluate, eval_every=eval_every or 1,
            X_display=X_display, generator=start.generator,
            frames_per_epoch=frames_per_epoch, should_stop=should_stop,
        )  # fmt: skip
        scale = terms_in_value(start.plan.objective, len(start.X))
        if (yield from self._follow(stream, report, scale)):
            settled = epochs.converged or (self.n_iter_ < max_iter and not epochs.stalled)
            report.finish(settled, epochs.message)

    def _strategy(self, start: Start, X_t: torch.Tensor, y_index: np.ndarray) -> EpochStrategy:
        """The problem on the training tensor and the epoch strategy that trains it."""
        problem = Problem.sorted_by_class(
            start.encoder, X_t, torch.as_tensor(y_index, device=start.device),
            objective=start.plan.objective, kernel=start.kernel, weight_decay=start.plan.weight_decay,
            augment=start.augment,
        )  # fmt: skip
        return make_epochs(problem, start.plan, start.generator)

    def _prepare(self, X, y, report, plan: Plan | None = None) -> Start:
        """Validate, plan and build the encoder and kernel (``start.make_start``); a failure
        leaves the estimator as it was before this call."""
        with _input_attributes_restored_on_failure(self):
            X, y, classes, y_index = self._validated(X, y)
            plan = self._checked(self._plan_for(plan, X, len(classes)))
            previous = Previous.of(self, plan)
            start = make_start(X, y, y_index, plan, previous, check_random_state(self.random_state), report)
        if plan.encoder == "mlp" and hasattr(self, "components_"):
            del self.components_  # left from an earlier linear fit
        self.classes_, self.encoder_, self.kernel_ = classes, start.encoder, start.kernel
        self.n_components_, self.device_ = plan.n_components, str(start.device)
        self.dof_, self.objective_curve_, self.n_iter_ = None, [], 0
        self.pretrain_curve_ = start.pretrain_curve
        # what transform subtracts: the training mean where center asks for it and the map is linear
        centred = plan.center and plan.encoder != "mlp"
        self.center_ = X.mean(0, dtype=np.float64) if centred else np.zeros(X.shape[1])
        return start

    def _test_rows(self, X_test, y_test, offset: np.ndarray, start: Start):
        """Held-out rows as the training rows are made (``start.training_rows``), or None."""
        if (X_test is None) != (y_test is None):
            raise ValueError("X_test and y_test must be given together")
        if X_test is None:
            return None, None
        X_test = validate_data(self, X_test, reset=False, dtype=[np.float64, np.float32])
        return training_rows(X_test, np.arange(len(X_test)), offset, start.dtype, start.device), np.asarray(y_test)

    def _validated(self, X, y) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """X and y as arrays that passed scikit-learn's checks, the classes, and y as class
        indices 0..n_classes - 1."""
        X, y = validate_data(self, X, y, ensure_min_samples=2, dtype=[np.float64, np.float32])
        check_classification_targets(y)
        classes, y_index = np.unique(y, return_inverse=True)
        return X, y, classes, y_index

    def _follow(self, stream: Iterator[Snapshot], report, scale: float):
        """Keep the fitted attributes current with each snapshot; report and call back.

        Returns True when training ran to its end (not stopped by the callback or a close).
        """
        try:
            for snap in stream:
                if snap.components is not None:
                    self.components_ = snap.components.copy()  # the snapshot stays frozen
                self.dof_ = snap.dof
                if snap.fraction < 1.0:  # part-way through an epoch: the map so far, no new epoch
                    yield snap
                    continue
                self.n_iter_ = snap.epoch
                self.objective_curve_.append(snap.objective)
                report.epoch(snap, scale)
                yield snap
                if (
                    snap.epoch
                    and self.callback is not None
                    and self.callback(self._flat_params(), self.n_iter_)
                ):
                    return False
        finally:
            stream.close()
        return True

    def _flat_params(self) -> np.ndarray:
        """The map as scikit-learn's callback receives it: raveled; the MLP's weights likewise."""
        if hasattr(self, "components_"):
            return self.components_.ravel()
        return np.concatenate([p.detach().cpu().double().numpy().ravel() for p in self.encoder_.parameters()])

    # -- helpers ----------------------------------------------------------------------

    def plan(self, shape: DataShape) -> Plan:
        """What a fit on data of ``shape`` would do (``config.plan.make_plan``), with notes on
        what it changes. A fit makes its own plan; one made earlier, to show its notes, can be
        handed to ``fit_iter`` so that the settings are decided once."""
        return make_plan(self.get_params(deep=False), shape)

    def _plan_for(self, plan: Plan | None, X: np.ndarray, n_classes: int) -> Plan:
        """``plan`` if it was made by these parameters for data of X's shape, else a new one."""
        if plan is None:
            return self.plan(DataShape.of(X, n_classes, self.encoder))
        made_for = (plan.shape.n_samples, plan.shape.n_features, plan.shape.n_classes)
        if made_for != (len(X), X.shape[1], n_classes):
            raise ValueError(
                f"the plan was made for data of (n_samples, n_features, n_classes) = {made_for}, "
                f"not {(len(X), X.shape[1], n_classes)}"
            )
        changed = [name for name, value in plan.request.items() if not _same_value(value, getattr(self, name))]
        if changed:
            raise ValueError(f"the plan was made before these parameters changed: {', '.join(changed)}")
        return plan

    def _checked(self, plan: Plan) -> Plan:
        """``plan``, once its errors have raised and its caveats warned."""
        for note in plan.notes:
            if note.level == "error":
                raise ValueError(note.error)
            if note.level == "warning":
                warnings.warn(note.error, stacklevel=6)
        return plan


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


def _same_value(a, b) -> bool:
    """Whether two parameter values are the same (arrays by their contents)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    return a is b or a == b




@contextmanager
def _input_attributes_restored_on_failure(model: NCA):
    """``validate_data`` sets ``n_features_in_`` (and feature names) before anything else is
    checked: a fit that fails puts back what the estimator had."""
    names = ("n_features_in_", "feature_names_in_")
    before = {name: getattr(model, name) for name in names if hasattr(model, name)}
    try:
        yield
    except BaseException:
        for name in names:
            if name in before:
                setattr(model, name, before[name])
            elif hasattr(model, name):
                delattr(model, name)
        raise

def _knn_evaluator(X_t, y, X_test_t, y_test, k: int, sample, device):
    """The kNN accuracies of an encoder: leave-one-out on the training rows of ``sample``
    (against all of them), and on the held-out rows if there are any."""

    def evaluate(encoder):
        with torch.no_grad():
            Z = encoder(X_t)
            train_acc = knn.leave_one_out_accuracy(Z, y, k, sample=sample, device=device)
            test_acc = None
            if X_test_t is not None:
                test_acc = knn.knn_accuracy(Z, y, encoder(X_test_t), y_test, k, device=device)
        return train_acc, test_acc

    return evaluate
