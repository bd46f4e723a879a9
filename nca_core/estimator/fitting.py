"""How ``NCA`` trains: validation, the start, the epoch strategy and the fitted attributes
kept current with each snapshot, apart from the estimator's public face (``nca.NCA``)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_random_state, validate_data

from ..config.plan import Plan
from ..config.rules import DataShape
from ..objective.weights import terms_in_value
from ..search import knn
from ..training.epochs import make_epochs
from ..training.loop import Snapshot, train
from ..training.problem import EpochStrategy, Problem
from ..util.sampling import stratified_subsample
from .report import Report
from .start import Previous, Start, display_index, make_start, rows_less, training_offset, training_rows

__all__ = ["Fitting"]


class Fitting:
    """The training half of ``NCA``: ``fit`` and ``fit_iter`` run ``_fit_iter``, which reads
    the estimator's parameters and sets its fitted attributes."""

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


def _same_value(a, b) -> bool:
    """Whether two parameter values are the same (arrays by their contents)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    return a is b or a == b



@contextmanager
def _input_attributes_restored_on_failure(model):
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
