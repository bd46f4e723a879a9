"""``NCA``: a scikit-learn estimator built on the torch training loop."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

from ..config.rules import (
    DataShape,
    Note,
    resolve,
)
from ..config.settings import SETTINGS, Setting
from ..objective.kernels import make_kernel
from ..search import knn
from ..training.augmentation import RandomShift
from ..training.encoders import DEFAULT_HIDDEN_SIZES, MLPEncoder, make_encoder
from ..training.epochs import EpochStrategy, Problem, dense_suits, make_epochs
from ..training.loop import Snapshot, train
from ..training.pretraining import PRETRAIN_BATCH_SIZE, pretrain_autoencoder
from ..util.device import resolve_device, resolve_dtype
from ..util.sampling import stratified_subsample
from ..util.tensors import cpu_view
from .report import Report
from .starts import lda_directions, pca_directions

__all__ = ["NCA", "Plan"]

# The parameters that ``rules.resolve`` turns into concrete settings for the data.
_RESOLVED = (
    "n_components", "encoder", "init", "optimizer", "neighbors", "learning_rate",
    "batch_size", "max_iter", "kernel", "objective", "n_candidates", "augment", "learning_rate_schedule",
    "image_shape", "shift",
)  # fmt: skip
_TRANSFORM_BATCH = 8192


def _constraints(setting: Setting) -> list:
    """scikit-learn's constraints for the estimator's parameter of a run setting's name
    (``Setting.accepts``)."""
    accepts = setting.accepts
    words = {c for c in setting.choices if isinstance(c, str)} | {v for v in accepts.also if isinstance(v, str)}
    constraints: list = [StrOptions(words)] if words else []
    if accepts.low is not None:
        number = Integral if setting.kind is int else Real
        closed = ("neither" if accepts.above else "left") if accepts.high is None else "both"
        constraints.append(Interval(number, accepts.low, accepts.high, closed=closed))
    return constraints + [v for v in accepts.also if v is None or isinstance(v, type)]


@dataclass(frozen=True)
class Plan:
    """What a fit on data of ``shape`` will use (``NCA.plan``): ``rules.resolve``'s concrete
    settings and its notes, with the parameters (``request``) they were resolved from."""

    request: dict
    shape: DataShape
    settings: dict
    notes: tuple[Note, ...]


@dataclass(frozen=True)
class _Start:
    """What a fit starts from, once its data and settings have passed every check."""

    X: np.ndarray
    y: np.ndarray
    y_index: np.ndarray  # classes as 0..n_classes - 1
    settings: dict  # rules.resolve's concrete settings for this data
    encoder: torch.nn.Module
    kernel: torch.nn.Module
    seed: int
    generator: torch.Generator
    device: torch.device
    dtype: torch.dtype


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
    n_components : int, default=None
        Dimension d of the embedding; None keeps n_features (or the rows of an init array).
    init : {"auto", "pca", "lda", "identity", "random"} or ndarray, default="auto"
        Starting map. "auto" picks "lda" when n_components <= min(n_features,
        n_classes - 1), else "pca" when n_components < min(n_features, n_samples), else
        "identity" (as scikit-learn). "lda" gives at most n_classes - 1 directions; further
        rows start from PCA directions, with a warning. An array has shape (k, n_features)
        with k <= n_features, and k = n_components when that is given.
    warm_start : bool, default=False
        Start from the map of the previous call to fit.
    max_iter : int, default=None
        Maximum number of iterations (L-BFGS) or epochs (full passes of minibatch
        optimisers). None: 50 for L-BFGS, and for minibatch training a count tuned to the
        data size and the encoder (``rules.minibatch_defaults``).
    tol : float, default=1e-5
        L-BFGS stops when the loss falls by less than tol relative to its size or every
        gradient entry is below tol (as scikit-learn's L-BFGS-B); minibatch training when
        the epoch's mean objective changes by less than tol relative to its size.
    callback : callable, default=None
        Called after each iteration or epoch as ``callback(params, n_iter)``, params being
        the flattened map (as scikit-learn) or, for the MLP, its flattened weights;
        returning True stops training and keeps the map learnt so far.
    verbose : int, default=0
        1 prints, as scikit-learn does, how the map was started, one line per iteration
        (objective, seconds), the training time, and a ConvergenceWarning when max_iter
        ends training before it converged.
    random_state : int, RandomState or None, default=None
        Seeds random init, minibatch order and the display subset.
    objective : {"auto", "f", "g", "mcml"}, default="auto"
        "f" maximises sum_i p_i, the expected number of points classified correctly;
        "g" maximises sum_i log p_i; "mcml" minimises KL(P || Q) between the label
        distribution P (uniform over same-class pairs) and the joint q_ij over all pairs
        (dt-MCML of Min et al., 2010). The reported objective is then -KL (at most 0).
        "auto" is f for a linear or diagonal map (as scikit-learn). For
        ``encoder="mlp"`` it is "mcml" for a wide map of a set that is not large, else g:
        from random weights f's gradient vanishes for points among other classes, and
        g's does not (``rules.auto_objective``).
    encoder : {"linear", "diagonal", "mlp"}, default="linear"
        "linear": a full d x D map; "diagonal": one scale per feature (d = D); "mlp": a
        ReLU network with ``hidden_sizes`` hidden layers and a linear output layer,
        starting from random weights (init must be "auto" or "random").
    hidden_sizes : tuple of int, default=(500, 500)
        Hidden layer widths of the MLP encoder (ignored by the others).
    pretrain_epochs : int, default=0
        MLP encoder only: epochs of autoencoder pre-training (``pretraining``; a stand-in
        for the RBM pre-training of Min et al., 2010) before NCA trains a fresh network.
        0: none; a warm start keeps the network it has.
    kernel : {"auto", "gaussian", "student-t"}, default="auto"
        Similarity of two embedded points: exp(-d^2) as in the paper, or the heavy-tailed
        Student-t (1 + d^2 / a)^(-(a + 1) / 2) of Min et al. (2010). "auto": the Gaussian
        for a linear or diagonal map (as scikit-learn), the Student-t for ``encoder="mlp"``.
    dof : float, "learn" or None, default=None
        Degrees of freedom a of the Student-t kernel: a positive number, None for the
        paper's choice d - 1 (at least 1), or "learn" to train it by gradient from d - 1,
        kept positive. Ignored by the Gaussian kernel.
    neighbors : {"auto", "all", "nearest", "memory", "batch"}, default="auto"
        Minibatch optimisers only: where each batch's anchors take their neighbours.
        "all": every training point, embeddings recomputed at each step (exact);
        "nearest": each anchor's ``n_candidates`` nearest points in the current embedding
        (found with FAISS, again every ``candidate_refresh`` epochs) and a uniform sample of
        the rest that stands in for it in p_ij's normaliser (approximate; a step costs the
        same whatever the data size); "memory": a bank of all points' embeddings updated
        with momentum (Wu et al., 2018), gradients only through the batch; "batch": the
        batch alone. "auto": "memory" for the MLP encoder with Adam or SGD, "nearest" for
        a map trained in minibatches on more than ``rules.NEAREST_MIN_SAMPLES`` points
        (``rules.PICTURE_NEAREST_MIN_SAMPLES`` for d <= 3), else "all".
    bank_momentum : float, default=0.5
        Weight of the old bank row in each memory-bank update.
    optimizer : {"auto", "lbfgs", "adam", "sgd"}, default="auto"
        "lbfgs": full batch, scipy's L-BFGS-B in float64 as scikit-learn; "adam" and
        "sgd": minibatches of anchors whose neighbours are taken from the whole training
        set. "auto": L-BFGS for a linear or diagonal map on at most
        ``rules.LBFGS_MAX_SAMPLES`` points, else Adam with tuned settings.
    batch_size : int, default=None
        Anchors per minibatch (ignored by L-BFGS); None: tuned to the data size.
    learning_rate : float, default=None
        Minibatch step size (L-BFGS's line search sets its own); None: tuned to the data
        size for Adam on a map, 0.1 for SGD; for the MLP 0.003 (Adam) and 0.01 (SGD),
        a third of that with objective "mcml" (``rules.default_learning_rate``).
    learning_rate_schedule : {"auto", "constant", "cosine"}, default="auto"
        Minibatch optimisers only. "cosine": the step falls from learning_rate to 0 along
        a half cosine over max_iter epochs, so the last epochs settle; "constant" keeps it.
        "auto": cosine for the MLP, constant for a linear or diagonal map. A warm start
        decays again from learning_rate; tol can end a run before the step reaches 0.
    weight_decay : float, default=0.0
        L2 penalty on the map, ``weight_decay * ||A||_F^2`` (the MLP: its squared weights),
        subtracted from the objective.
    n_candidates : int, default=None
        With neighbors "nearest": how many nearest points each anchor takes (None:
        ``rules.DEFAULT_CANDIDATES``). Given with neighbors "all" or "auto", it asks for
        "nearest" with that many.
    candidate_refresh : int, default=1
        Epochs between candidate searches.
    image_shape : tuple of (int, int) or None, default=None
        (height, width) of image inputs, whose pixels are the features row by row. It turns
        on the image shift for a network (``shift``). None: the rows are not images.
    shift : "auto" or int, default="auto"
        Pixels by which each minibatch's anchor images move, afresh at every step
        (``augmentation.RandomShift``), so that a network cannot learn a few thousand images
        by heart. Needs ``image_shape`` and a minibatch optimizer with neighbors "memory" or
        "batch". "auto": one pixel per 16 of the images' shorter side for
        ``encoder="mlp"`` (``rules.image_shift``), none for a map or without image_shape.
    augment : callable or None, default=None
        Alters each minibatch's anchors afresh at every step, as ``augment(X_batch,
        generator)`` on a tensor, returning one of the same shape, dtype and device: e.g.
        ``augmentation.RandomShift((28, 28), 1)`` moves images by up to a pixel (what
        ``shift`` builds). Needs a minibatch optimizer with neighbors "memory" or "batch"
        (the default for the MLP), and replaces ``shift``; None: the inputs as given, or
        shifted as ``shift`` says.
    device : str, default="auto"
        "auto" uses CUDA, then Apple MPS, then the CPU, except for small problems that
        L-BFGS fits with the whole-matrix float64 engine (at most 400 points, a linear or
        diagonal map, the Gaussian kernel, f or g), which stay on the CPU, where they run
        faster; or any torch device string.
    dtype : {"float32", "float64"}, default="float32"
        Precision of training.
    center : bool, default=False
        Whether ``transform`` and ``fit_iter``'s snapshots subtract the training mean from
        the inputs before a linear or diagonal map, so that the embedding is centred, as
        PCA's is. Every point moves alike: distances, and so every kNN result, are the same
        either way. False: ``transform(X) = X @ components_.T``, as scikit-learn's. A
        network takes its inputs as given whatever this says: where they lie changes what
        it learns.

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

    _parameter_constraints: dict = {  # noqa: RUF012 (scikit-learn's convention)
        **{s.name: _constraints(s) for s in SETTINGS if s.accepts is not None},  # the run settings'
        "warm_start": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "callback": [callable, None],
        "verbose": ["verbose"],
        "pretrain_epochs": [Interval(Integral, 0, None, closed="left")],
        "bank_momentum": [Interval(Real, 0, 1, closed="left")],
        "n_candidates": [Interval(Integral, 1, None, closed="left"), None],
        "candidate_refresh": [Interval(Integral, 1, None, closed="left")],
        "image_shape": [tuple, list, None],
        "augment": [callable, None],
        "dtype": [StrOptions({"float32", "float64"})],
        "center": ["boolean"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        init="auto",
        warm_start=False,
        max_iter=None,
        tol=1e-5,
        callback=None,
        verbose=0,
        random_state=None,
        objective="auto",
        encoder="linear",
        hidden_sizes=DEFAULT_HIDDEN_SIZES,
        pretrain_epochs=0,
        kernel="auto",
        dof=None,
        neighbors="auto",
        bank_momentum=0.5,
        optimizer="auto",
        batch_size=None,
        learning_rate=None,
        learning_rate_schedule="auto",
        weight_decay=0.0,
        n_candidates=None,
        candidate_refresh=1,
        image_shape=None,
        shift="auto",
        augment=None,
        device="auto",
        dtype="float32",
        center=False,
    ):
        self.n_components = n_components
        self.init = init
        self.warm_start = warm_start
        self.max_iter = max_iter
        self.tol = tol
        self.callback = callback
        self.verbose = verbose
        self.random_state = random_state
        self.objective = objective
        self.encoder = encoder
        self.hidden_sizes = hidden_sizes
        self.pretrain_epochs = pretrain_epochs
        self.kernel = kernel
        self.dof = dof
        self.neighbors = neighbors
        self.bank_momentum = bank_momentum
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_schedule = learning_rate_schedule
        self.weight_decay = weight_decay
        self.n_candidates = n_candidates
        self.candidate_refresh = candidate_refresh
        self.image_shape = image_shape
        self.shift = shift
        self.augment = augment
        self.device = device
        self.dtype = dtype
        self.center = center

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

        The fitted attributes are updated after every epoch, so closing the generator (or a
        callback returning True) keeps everything learnt so far.
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
        offset = _training_offset(start, self.center_)
        order = np.argsort(start.y_index, kind="stable")  # training wants classes in turn
        X_t = _training_rows(start.X, order, offset, start.dtype, start.device)
        self.display_index_ = _display_index(start.y, display_size, start.seed)
        # less center_ as transform subtracts it, so that a snapshot is what transform gives
        X_display = _rows_less(start.X, self.display_index_, self.center_, start.dtype, start.device)
        evaluate = None
        if eval_every is not None:
            evaluate = self._make_evaluator(
                X_t, start.y[order], X_test, y_test, k, eval_size, start.seed, start.dtype, start.device, offset
            )
        epochs = self._strategy(start, X_t, start.y_index[order])
        max_iter = start.settings["max_iter"]
        stream = train(
            epochs, max_iter=max_iter, tol=self.tol, evaluate=evaluate, eval_every=eval_every or 1,
            X_display=X_display, generator=start.generator,
            frames_per_epoch=frames_per_epoch, should_stop=should_stop,
        )  # fmt: skip
        scale = len(start.X) if start.settings["objective"] != "mcml" else 1
        if (yield from self._follow(stream, report, scale)):
            settled = epochs.converged or (self.n_iter_ < max_iter and not epochs.stalled)
            report.finish(settled, epochs.message)

    def _strategy(self, start: _Start, X_t: torch.Tensor, y_index: np.ndarray) -> EpochStrategy:
        """The problem on the training tensor and the epoch strategy that trains it."""
        settings = start.settings
        problem = Problem.sorted_by_class(
            start.encoder, X_t, torch.as_tensor(y_index, device=start.device),
            objective=settings["objective"], kernel=start.kernel, weight_decay=self.weight_decay,
            augment=settings["augment"],
        )  # fmt: skip
        return make_epochs(
            problem, settings["optimizer"], settings["learning_rate"], batch_size=settings["batch_size"],
            neighbors=settings["neighbors"], generator=start.generator, n_candidates=settings["n_candidates"],
            candidate_refresh=self.candidate_refresh, bank_momentum=self.bank_momentum, tol=self.tol,
            decay_epochs=settings["max_iter"] if settings["learning_rate_schedule"] == "cosine" else None,
        )  # fmt: skip

    def _prepare(self, X, y, report, plan: Plan | None = None) -> _Start:
        """Validate, settle the settings and build the encoder and kernel; a failure leaves
        the estimator as it was before this call."""
        with self._input_attributes_restored_on_failure():
            X, y, classes, y_index = self._validated(X, y)
            settings = self._settings(self._plan_for(plan, X, len(classes)))
            rng = check_random_state(self.random_state)
            device = self._device(settings, len(X))
            dtype = resolve_dtype(self.dtype, device)
            _check_augment(settings["augment"], X, dtype, device)
            with report.timing_start(settings):
                components = self._initial_components(X, y_index, settings, rng)
            seed = int(rng.randint(np.iinfo(np.int32).max))
            generator = torch.Generator().manual_seed(seed)
            encoder = self._encoder(settings, X.shape[1], components, generator, dtype, device)
            pretrain_curve = self._pretrain(encoder, X, settings, generator, report)
            _check_finite_start(encoder, settings["init"], self.dtype)
            kernel = self._kernel(settings, device)
        self._start_fit(classes, settings, encoder, kernel, device)
        self.center_ = self._input_center(X, settings)
        self.pretrain_curve_ = pretrain_curve
        return _Start(X, y, y_index, settings, encoder, kernel, seed, generator, device, dtype)

    def _validated(self, X, y) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """X and y as arrays that passed scikit-learn's checks, the classes, and y as class
        indices 0..n_classes - 1."""
        X, y = validate_data(self, X, y, ensure_min_samples=2, dtype=[np.float64, np.float32])
        check_classification_targets(y)
        classes, y_index = np.unique(y, return_inverse=True)
        return X, y, classes, y_index

    @contextmanager
    def _input_attributes_restored_on_failure(self):
        """``validate_data`` sets ``n_features_in_`` (and feature names) before anything
        else is checked: a fit that fails puts back what the estimator had."""
        names = ("n_features_in_", "feature_names_in_")
        before = {name: getattr(self, name) for name in names if hasattr(self, name)}
        try:
            yield
        except BaseException:
            for name in names:
                if name in before:
                    setattr(self, name, before[name])
                elif hasattr(self, name):
                    delattr(self, name)
            raise

    def _device(self, settings: dict, n_samples: int) -> torch.device:
        """``device`` resolved; "auto" keeps on the CPU the small L-BFGS problems that the
        whole-matrix float64 engine takes (``epochs.dense_suits``): there a GPU spends more
        on launches than the sums cost, and its float32 engine ends at another optimum
        than scikit-learn's (benchmarks/RESULTS.md, "First GPU figures")."""
        small = settings["optimizer"] == "lbfgs" and dense_suits(
            settings["encoder"], settings["kernel"], settings["objective"], n_samples
        )
        return torch.device("cpu") if self.device == "auto" and small else resolve_device(self.device)

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
        """The concrete settings a fit on data of ``shape`` would use (``rules.resolve``), and
        notes on what they change. A fit makes its own plan; one made earlier, to show its
        notes, can be handed to ``fit_iter`` so that the settings are resolved once."""
        request = {name: getattr(self, name) for name in _RESOLVED}
        settings, notes = resolve(request, shape)
        return Plan(request, shape, settings, tuple(notes))

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
        changed = [name for name in _RESOLVED if not _same_value(plan.request[name], getattr(self, name))]
        if changed:
            raise ValueError(f"the plan was made before these parameters changed: {', '.join(changed)}")
        return plan

    def _settings(self, plan: Plan) -> dict:
        """The plan's settings for this fit: its errors raise, its caveats warn."""
        for note in plan.notes:
            if note.level == "error":
                raise ValueError(note.error)
            if note.level == "warning":
                warnings.warn(note.error, stacklevel=6)
        settings = dict(plan.settings)
        if settings["shift"]:
            settings["augment"] = RandomShift(tuple(settings["image_shape"]), settings["shift"])
        return settings

    def _start_fit(self, classes, settings, encoder, kernel, device) -> None:
        """Set the fitted attributes a fit starts from (all checks have passed)."""
        if self.encoder == "mlp" and hasattr(self, "components_"):
            del self.components_  # left from an earlier linear fit
        self.classes_ = classes
        self.encoder_, self.kernel_ = encoder, kernel
        self.n_components_ = settings["n_components"]
        self.device_ = str(device)
        self.dof_ = None
        self.objective_curve_ = []
        self.n_iter_ = 0

    def _input_center(self, X: np.ndarray, settings: dict) -> np.ndarray:
        """``center_`` for this fit: the training mean, in float64, where ``center`` asks
        for it and the map is linear or diagonal; else zeros."""
        if self.center and settings["encoder"] != "mlp":
            return X.mean(0, dtype=np.float64)
        return np.zeros(X.shape[1])

    def _warm(self) -> bool:
        """Whether this fit continues the previous one (same kind of encoder)."""
        if not (self.warm_start and hasattr(self, "encoder_")):
            return False
        previous = "mlp" if isinstance(self.encoder_, MLPEncoder) else "map"
        if previous != ("mlp" if self.encoder == "mlp" else "map"):
            raise ValueError(
                f"warm_start continues the previous fit, which trained a {'network' if previous == 'mlp' else 'linear map'}: "
                f"set warm_start=False to start encoder={self.encoder!r} afresh"
            )
        return True

    def _encoder(self, settings, n_features, components, generator, dtype, device):
        if self.encoder == "mlp" and self._warm():
            return self.encoder_
        init = None if components is None else torch.as_tensor(components)
        return make_encoder(
            self.encoder, n_features, settings["n_components"], init=init, hidden_sizes=self.hidden_sizes,
            generator=generator, dtype=dtype, device=device,
        )  # fmt: skip

    def _pretrain(self, encoder, X, settings, generator, report) -> list[float]:
        """Autoencoder pre-training of a fresh network (``pretrain_epochs``); its curve."""
        if not self.pretrain_epochs or self.encoder != "mlp" or self._warm():
            return []
        full_batch = settings["optimizer"] == "lbfgs"
        batch_size = PRETRAIN_BATCH_SIZE if full_batch else settings["batch_size"]
        curve = []
        for loss in pretrain_autoencoder(encoder, X, self.pretrain_epochs, batch_size, generator):
            curve.append(loss)
            report.pretrain_epoch(len(curve), loss)
        return curve

    def _kernel(self, settings, device):
        """A fresh kernel, or the previous fit's (keeping a learnt dof) when warm-starting."""
        previous = getattr(self, "kernel_", None)
        if self._warm() and previous is not None and previous.name == settings["kernel"] and self.dof == "learn":
            return previous
        return make_kernel(settings["kernel"], self.dof, settings["n_components"]).to(device)

    def _initial_components(self, X, y_index, settings, rng) -> np.ndarray | None:
        """The starting map, shape (d, D); None for the MLP, which draws its own weights."""
        d, n_features = settings["n_components"], X.shape[1]
        if self.encoder == "mlp":
            self._check_network(n_features, d)
            return None
        if self._warm() and hasattr(self, "components_"):
            if self.components_.shape != (d, n_features):
                raise ValueError(
                    f"warm_start needs the same shape as the previous fit, "
                    f"{self.components_.shape}, but got {(d, n_features)}"
                )
            return self.components_.copy()
        method = settings["init"]
        if isinstance(method, np.ndarray):  # its shape was checked by rules.resolve
            return np.asarray(method, dtype=np.float64)
        if method == "identity":
            return np.eye(d, n_features)
        if method == "random":
            return rng.standard_normal((d, n_features))
        if method == "pca":
            return pca_directions(X, d, rng)
        return lda_directions(X, y_index, d, rng)

    def _check_network(self, n_features: int, d: int) -> None:
        if any(not isinstance(h, Integral) or h < 1 for h in self.hidden_sizes):
            raise ValueError(f"hidden_sizes must be positive integers, got {self.hidden_sizes!r}")
        if self._warm():
            previous = (
                self.encoder_.layers[0].in_features,
                self.n_components_,
                tuple(self.encoder_.hidden_sizes),
            )
            if previous != (n_features, d, tuple(self.hidden_sizes)):
                raise ValueError(
                    f"warm_start needs the same network as the previous fit "
                    f"(n_features, n_components, hidden_sizes) = {previous}"
                )

    def _make_evaluator(self, X_t, y, X_test, y_test, k, eval_size, seed, dtype, device, offset):
        if (X_test is None) != (y_test is None):
            raise ValueError("X_test and y_test must be given together")
        sample = np.arange(len(y)) if eval_size is None else stratified_subsample(y, eval_size, seed)
        X_test_t = None
        if X_test is not None:
            X_test = validate_data(self, X_test, reset=False, dtype=[np.float64, np.float32])
            X_test_t = _training_rows(X_test, np.arange(len(X_test)), offset, dtype, device)  # as the training rows
            y_test = np.asarray(y_test)

        def evaluate(encoder):
            with torch.no_grad():
                Z = encoder(X_t)
                train_acc = knn.leave_one_out_accuracy(Z, y, k, sample=sample, device=device)
                test_acc = None
                if X_test_t is not None:
                    test_acc = knn.knn_accuracy(Z, y, encoder(X_test_t), y_test, k, device=device)
            return train_acc, test_acc

        return evaluate


def _training_rows(X: np.ndarray, order: np.ndarray, offset: np.ndarray, dtype, device) -> torch.Tensor:
    """X's rows in ``order`` less ``offset``, as one new tensor. The subtraction comes before
    the cast (float64 inputs keep their digits), chunk by chunk, so that no second full copy
    of X is made. float32 inputs trained in float32 subtract the offset rounded to float32:
    its rounding moves every row alike, which no distance sees, and each difference is
    rounded once, as the cast would, without a float64 copy of every chunk."""
    if X.dtype == np.float32 and dtype == torch.float32 and torch.device(device).type == "cpu":
        return _float32_rows(X, order, offset.astype(np.float32))
    return _rows_less(X, order, offset, dtype, device)


def _rows_less(X: np.ndarray, order: np.ndarray, offset: np.ndarray, dtype, device) -> torch.Tensor:
    """X's rows in ``order`` less ``offset``, as one new tensor: subtracted in float64 chunk
    by chunk, each difference then rounded once to ``dtype``."""
    out = torch.empty((len(order), X.shape[1]), dtype=dtype, device=device)
    for start in range(0, len(order), _CHUNK_ROWS):
        rows = X[order[start : start + _CHUNK_ROWS]] - offset
        out[start : start + len(rows)] = torch.from_numpy(rows).to(dtype=dtype, device=device)
    return out


_CHUNK_ROWS = 65536


def _float32_rows(X: np.ndarray, order: np.ndarray, offset: np.ndarray) -> torch.Tensor:
    """``_training_rows`` of float32 rows kept on the CPU: one gather into the tensor training
    keeps, less the float32 offset in place, both on torch's threads: no copy of X on the
    way, which held back a large set's first frame (benchmarks/RESULTS.md)."""
    rows = torch.index_select(cpu_view(X), 0, torch.from_numpy(np.asarray(order, dtype=np.int64)))
    return rows.sub_(torch.from_numpy(offset))


def _training_offset(start: _Start, center: np.ndarray) -> np.ndarray:
    """What training subtracts from every row: the mean, in float64, for a linear or diagonal
    map, whose distances it leaves unchanged; then float32 keeps the digits of data far from
    the origin. A network's output depends on where its inputs lie, and a shift or an
    augmentation alters the inputs as they are: nothing for those. ``center`` is the fit's
    ``center_``: the mean already, when the map was asked to centre (one pass over X less)."""
    s = start.settings
    if s["encoder"] == "mlp" or s["augment"] is not None or s["shift"]:
        return np.zeros(start.X.shape[1])
    return center if center.any() else start.X.mean(0, dtype=np.float64)


def _same_value(a, b) -> bool:
    """Whether two parameter values are the same (arrays by their contents)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and np.array_equal(a, b)
    return a is b or a == b


def _check_finite_start(encoder: torch.nn.Module, init, dtype: str) -> None:
    if not all(bool(torch.isfinite(p).all()) for p in encoder.parameters()):
        raise ValueError(
            f"the starting map (init={init!r}) is not finite in {dtype}: "
            "standardise the inputs, or choose another init or dtype='float64'"
        )


def _check_augment(augment, X: np.ndarray, dtype: torch.dtype, device) -> None:
    """Try ``augment`` on two rows as training will hand them over, so that a mismatch is
    refused before training starts."""
    if augment is None:
        return
    rows = torch.as_tensor(np.ascontiguousarray(X[:2]), dtype=dtype, device=device)
    out = augment(rows, torch.Generator().manual_seed(0))

    def described(t):
        return (tuple(t.shape), t.dtype, str(t.device)) if isinstance(t, torch.Tensor) else type(t).__name__

    if described(out) != described(rows):
        raise ValueError(
            f"augment must return a tensor of the batch's shape, dtype and device {described(rows)}, "
            f"got {described(out)}"
        )


def _display_index(y, size: int | None, seed: int) -> np.ndarray:
    """Indices of the points each snapshot embeds: all (None), none (0) or a stratified few."""
    if size is None:
        return np.arange(len(y))
    return stratified_subsample(y, size, seed) if size else np.arange(0)
