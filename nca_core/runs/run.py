"""A training run as the app sees it: settings, preprocessing, the snapshot stream, exports.

``RunConfig`` (declared in ``settings``) holds every setting as plain JSON-safe values;
``recommended_config`` gives settings that converge on a dataset without tuning;
``Run`` resolves a request for the data once (``Run.config``, ``Run.notes``), standardises
(if asked), trains with those settings and turns results into files that act on raw
inputs. The app and the command-line trainer both train through ``Run``. No UI code here.
"""

from __future__ import annotations

import copy
import dataclasses
import io
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property

import numpy as np
import torch
from sklearn.preprocessing import StandardScaler

from ..config.params import PARAMS
from ..config.plan import DEFAULTS, Plan, make_plan
from ..config.rules import LARGE_SET_SAMPLES, DataShape, uses_minibatches
from ..config.settings import APP_REQUEST, SETTINGS, RunConfig
from ..datasets import Dataset
from ..estimator.model_io import save_model
from ..estimator.nca import NCA
from ..training.loop import Snapshot
from ..util.formatting import percent
from ..util.sampling import stratified_subsample
from ._embedding_csv import embedding_csv

__all__ = [
    "EVAL_POINTS",
    "RUN_ONLY",
    "Run",
    "RunConfig",
    "blow_up_note",
    "estimator_params",
    "recommended_config",
]

EVAL_POINTS = 2000


def recommended_config(
    data: Dataset,
    n_components: int = APP_REQUEST["n_components"],
    *,
    encoder: str = APP_REQUEST["encoder"],
    optimizer: str = APP_REQUEST["optimizer"],
) -> RunConfig:
    """Settings that converge on ``data`` without tuning (checked by the test suite): the
    library's plan for the app's request, shown as the values the plan decided.

    The request is the library's defaults with named patches: d, the map and the optimiser
    (``settings.APP_REQUEST`` unless asked), and what the dataset asks for
    (``dataset_patch``). Every setting then shows what the plan decided for the data, except
    ``APP_KEEPS``, which keep the app's own start (``settings.APP_START``).
    """
    request = {"n_components": n_components, "encoder": encoder, "optimizer": optimizer}
    request.update(dataset_patch(data, encoder))
    shape = DataShape(len(data.y_train), data.n_features, data.n_classes)
    asked = {name: value for name, value in request.items() if name in DEFAULTS}
    plan = make_plan({**asked, "image_shape": data.image_shape}, shape)
    values = {s.name: s.default for s in SETTINGS}
    values.update({name: plan.settings[name] for name in values if name in plan.settings and name not in APP_KEEPS})
    values.update({name: request[name] for name in RUN_ONLY if name in request})
    config = RunConfig(**values)
    if encoder != "mlp" and uses_minibatches(optimizer):  # a map's batch: a power of two that fits
        config = config.replace(batch_size=min(config.batch_size, max(32, 1 << (len(data.y_train).bit_length() - 1))))
    return config


# Settings the app keeps at its own start (``settings.APP_START``) rather than the plan's
# decision: where a map's neighbours come from follows d and the data size, so the app
# offers "automatic"; the device follows the machine; the seed stays fixed, so that the
# same clicks give the same run.
APP_KEEPS = ("neighbors", "device", "random_state")


def dataset_patch(data: Dataset, encoder: str = "linear") -> dict:
    """What a dataset changes in the app's request. Tabular sets with mixed units are
    standardised, images used as given (pixels share one scale); at most 3,000 points are
    drawn. The paper's rings start a linear map from PCA without standardisation, so the
    picture begins with the noise axis that PCA prefers, at a large step over 60 epochs; a
    large set starts a linear map from PCA, which starts far sooner than LDA on MNIST (a
    quicker first frame). A network on a large set learns from ``LIVE_NETWORK`` while the
    class watches."""
    n, rings = len(data.y_train), data.name == "rings"
    patch = {"standardize": data.image_shape is None and not rings, "display_size": min(n, 3000), "train_size": n}
    if encoder == "linear" and rings:
        patch.update(init="pca", learning_rate=0.1, max_iter=60)
    elif encoder == "linear" and n > LARGE_SET_SAMPLES:
        patch.update(init="pca")
    elif encoder == "mlp" and n > LARGE_SET_SAMPLES:
        patch.update(LIVE_NETWORK)
    return patch


# A network a class watches learn MNIST: ten clusters (test 5-NN above 90%) within about
# half a minute of Train on 2 cores, and the run over within two minutes, still from random
# weights. A stratified 10,000 of the 60,000 digits, two hidden layers of 256 and no image
# shifts (each of which costs about as much as it gains in the first epochs); the memory
# bank's neighbours, which the plan picks for a network. benchmarks/train_page_mnist.py
# --encoder mlp measures it on the page.
LIVE_NETWORK = {"train_size": 10_000, "hidden_sizes": (256, 256), "shift": 0, "max_iter": 15}


def training_subset(data: Dataset, size: int) -> Dataset:
    """``data`` with a fixed stratified subset of ``size`` training points (at least all of
    them: ``data`` itself); the test set stays whole."""
    if size >= len(data.y_train):
        return data
    return data.subset_train(stratified_subsample(data.y_train, size, seed=0))


_PREPARE_ROWS = 65536  # rows standardised at a time: a float64 copy of a chunk, never of X

# Run settings that are not ``NCA`` parameters: preprocessing, and what the app draws and scores.
RUN_ONLY = tuple(p.name for p in PARAMS if not p.estimator)


def estimator_params(config: RunConfig, image_shape: tuple[int, int] | None = None) -> dict:
    """The ``NCA`` keyword arguments a RunConfig stands for: every field but ``RUN_ONLY``,
    by the same name, the data's ``image_shape`` (None for tabular data), and ``center``:
    a run draws a map's embedding centred, as Compare draws PCA's and LDA's beside it."""
    params = {name: value for name, value in config.as_dict().items() if name not in RUN_ONLY}
    return {**params, "image_shape": image_shape, "center": True}


def _shape(config: RunConfig, data: Dataset) -> DataShape:
    """What the rules read of the data the run trains on: the input scale only where the
    map sees the inputs as they are (not standardised first)."""
    raw_inputs_to = None if config.standardize else config.encoder
    return DataShape.of(data.X_train, data.n_classes, raw_inputs_to)


def _planned_config(config: RunConfig, plan: Plan, n_samples: int) -> RunConfig:
    """``config`` with the settings the plan changed, in the run's own fields."""
    request, settings = plan.request, plan.settings
    changed = {
        name: settings[name]
        for name in ("n_components", "init", "batch_size", "shift")
        if settings[name] != request[name]
    }
    if request["neighbors"] not in ("auto", settings["neighbors"]):
        changed["neighbors"] = settings["neighbors"]
    return config.replace(**changed, display_size=min(config.display_size, n_samples))


def _adopted(plan: Plan, model: NCA) -> Plan:
    """The plan of the request, for the model of the adjusted settings: where the estimator
    would refuse a request (an "error" note), the run trains what the plan adjusted it to,
    and resolving those settings again gives the same ones (tests/runs/test_run.py)."""
    params = model.get_params()
    request = {name: params[name] for name in plan.request}
    notes = tuple(note for note in plan.notes if note.level != "error")
    return dataclasses.replace(plan, request=request, notes=notes)


class Run:
    """One training run of NCA on a Dataset with a RunConfig.

    The settings are resolved once, when the run is made: ``config`` is the request made
    possible for the data, ``notes`` says what changed, and training uses that plan.

    Attributes
    ----------
    config : RunConfig, the settings the run trains with
    notes : list of str, what was changed or qualified in the request, in words
    source : Dataset, the data the run was made with, every row (``embedding_csv`` writes them all)
    data : Dataset, ``source`` with the training rows the run trains on (``train_size``)
    model : NCA, fitted progressively while ``stream()`` is consumed
    display_index : ndarray, indices into the training set of the points drawn
    """

    def __init__(self, config: RunConfig, data: Dataset):
        self.source = data
        data = self.data = training_subset(data, config.train_size)
        # tol 0: a run trains the epochs it was asked for (the picture keeps moving)
        asked = NCA(**estimator_params(config, data.image_shape), tol=0.0)
        plan = asked.plan(_shape(config, data))
        self.config = _planned_config(config, plan, len(data.y_train))
        self.notes = [note.text for note in plan.notes]
        self.model = NCA(**estimator_params(self.config, data.image_shape), tol=0.0)
        self.plan = _adopted(plan, self.model)
        self.display_index: np.ndarray | None = None
        self.latest: Snapshot | None = None

    @cached_property
    def scaler(self) -> StandardScaler | None:
        """The training set's standardisation, fitted when first needed (None: not asked)."""
        return StandardScaler().fit(self.data.X_train) if self.config.standardize else None

    def _prepare(self, X: np.ndarray) -> np.ndarray:
        """X as the map receives it: standardised if the run asks, in float32, each value
        computed in float64 and rounded once (scikit-learn's transform of float32 rows
        subtracts the mean rounded to float32, which moves rows far from the origin)."""
        if self.scaler is None:
            return X
        out = np.empty(X.shape, dtype=np.float32)
        for start in range(0, len(X), _PREPARE_ROWS):
            rows = X[start : start + _PREPARE_ROWS]
            out[start : start + len(rows)] = (rows - self.scaler.mean_) / self.scaler.scale_
        return out

    def stream(
        self,
        eval_every: int | None = 1,
        eval_points: int | None = EVAL_POINTS,
        frames_per_epoch: int = 1,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[Snapshot]:
        """Train, yielding a snapshot per epoch with train (LOO) and test kNN accuracy, and
        ``frames_per_epoch`` - 1 partial ones during each minibatch epoch (see ``NCA.fit_iter``).

        Accuracies are measured every ``eval_every`` epochs (None: never) on stratified
        samples of at most ``eval_points`` training (leave-one-out, voting among all) and
        test points (None: all), so large sets stay live.
        """
        has_test = len(self.data.y_test) > 0
        test = np.arange(len(self.data.y_test))
        if has_test and eval_points is not None:
            test = stratified_subsample(self.data.y_test, eval_points, seed=0)
        snapshots = self.model.fit_iter(
            self._prepare(self.data.X_train),
            self.data.y_train,
            self._prepare(self.data.X_test[test]) if has_test else None,
            self.data.y_test[test] if has_test else None,
            display_size=self.config.display_size,
            eval_every=eval_every,
            k=self.config.k,
            eval_size=eval_points,
            frames_per_epoch=frames_per_epoch,
            should_stop=should_stop,
            plan=self.plan,
        )
        for snap in snapshots:
            self.display_index = self.model.display_index_
            self.latest = snap
            yield snap

    def at(self, snapshot: Snapshot) -> Run:
        """This run as it stood at ``snapshot``, one of its stream's frames: the same data,
        settings and drawn points, with a model that holds that frame's map, so that its
        results and files speak of that frame where training went on past it (a run that
        several pages watch, each at its own frame). Linear maps only: a frame keeps no
        network weights."""
        if snapshot.components is None:
            raise ValueError("a frame of a network's run keeps no weights: only a linear map's run can be taken back")
        view = copy.copy(self)  # shares the data, the plan and the fitted standardisation
        model = view.model = copy.copy(self.model)
        epoch = snapshot.epoch if snapshot.fraction >= 1.0 else snapshot.epoch - 1
        model.components_ = snapshot.components.copy()
        model.dof_, model.n_iter_ = snapshot.dof, epoch
        model.objective_curve_ = list(self.model.objective_curve_[: epoch + 1])
        view.latest = snapshot
        return view

    @property
    def fit_seconds(self) -> float:
        """Training time so far (evaluation excluded)."""
        return self.latest.elapsed if self.latest is not None else 0.0

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Map raw inputs with the current model (standardising first if the run does)."""
        return self.model.transform(self._prepare(X))

    @property
    def display_labels(self) -> np.ndarray:
        return self.data.y_train[self.display_index]

    @property
    def is_linear(self) -> bool:
        """Whether the map is a matrix A (linear or diagonal), which can be drawn."""
        return hasattr(self.model, "components_")

    def effective_components(self) -> np.ndarray:
        """The map as it applies to raw inputs less ``raw_center``: the standardisation's
        scale folded in."""
        A = self.model.components_
        return A if self.scaler is None else A / self.scaler.scale_

    def raw_center(self) -> np.ndarray:
        """What the run subtracts from raw inputs before the map, in float64: the model's
        ``center_``, taken back through the standardisation (its mean, and the model's
        centre in its units)."""
        center = self.model.center_
        return center if self.scaler is None else self.scaler.mean_ + self.scaler.scale_ * center

    def map_weights(self) -> np.ndarray:
        """The length of each column of A, shape (n_features,): how strongly the map weighs
        each input as trained (what the learned-map heatmap's colours show)."""
        return np.linalg.norm(self.model.components_, axis=0)

    def feature_influence(self) -> np.ndarray:
        """How far each input feature moves the embedding, shape (n_features,): its weight
        (``map_weights``) times its spread over the training set as trained (a standardised
        feature has spread 1), so features in different units compare, and a large weight
        on an input that hardly varies counts for little."""
        return self.map_weights() * self._prepare(self.data.X_train).std(0)

    def top_features(self, count: int) -> list[int]:
        """Indices of the ``count`` inputs with the largest ``feature_influence``, largest
        first (ties: the lower index)."""
        influence = self.feature_influence()
        return sorted(range(len(influence)), key=lambda i: -influence[i])[:count]

    def model_file(self) -> bytes:
        """The fitted model as .npz bytes (see ``nca_core.estimator.model_io``) acting on raw
        inputs as the run does, so that its ``transform`` gives the run's pictures: the
        centre (``raw_center``) is the model's ``center_``, and the standardisation's scale
        is folded into A, or into the network's first layer. The centre is subtracted from
        the inputs, not folded into a bias: in float32, x - mean keeps the digits of inputs
        far from the origin that W x - W mean would lose."""
        exported = NCA(**self.model.get_params())
        for name in ("classes_", "n_iter_", "objective_curve_", "n_features_in_", "n_components_", "dof_"):
            setattr(exported, name, getattr(self.model, name))
        exported.center_ = self.raw_center()
        if self.is_linear:
            exported.components_ = self.effective_components()
        else:
            exported.encoder_ = copy.deepcopy(self.model.encoder_).cpu()
            if self.scaler is not None:
                first = exported.encoder_.layers[0]
                with torch.no_grad():  # W ((x - mean) / scale) = (W / scale) (x - mean)
                    first.weight.div_(torch.as_tensor(self.scaler.scale_, dtype=first.weight.dtype))
        buffer = io.BytesIO()
        save_model(exported, buffer)
        return buffer.getvalue()

    def embedding_csv(self, snapshot: Snapshot) -> bytes:
        """Every row of the data, training and test, mapped as at ``snapshot``, as CSV text
        with a header: row, split, label, z1, ..., zd.

        ``row`` is the row's place in the file it was read from (the 0-based data row, the
        header excluded: ``Dataset.rows_train``), the rows in the file's order; for a
        registered set, its position within its split, the training rows first. ``split``
        is train or test. The coordinates are those the run's map at ``snapshot`` gives
        the row, the standardisation and centre included, as the model file saved then
        does (``model_file``): its ``transform`` of the row gives them back to float32
        precision. Each is the shortest decimal that reads back as the same float32.

        Raises ValueError for a frame of a network's run other than its latest: a frame
        keeps no network weights (``at``).
        """
        data, run = self.source, self._holding(snapshot)
        return embedding_csv(data, np.concatenate([run.transform(data.X_train), run.transform(data.X_test)]))

    def _holding(self, snapshot: Snapshot) -> Run:
        """This run where its model holds ``snapshot``'s map (its latest frame), else the run
        as it stood at that frame (``at``)."""
        latest = self.latest
        if latest is not None and (
            snapshot is latest or (snapshot.epoch, snapshot.fraction) == (latest.epoch, latest.fraction)
        ):
            return self
        return self.at(snapshot)

    def neighbours(self, snapshot: Snapshot, row: int, k: int = 8) -> np.ndarray:
        """Rows of the display subset nearest to ``row`` in the snapshot's embedding."""
        Z = snapshot.embedding
        distances = ((Z - Z[row]) ** 2).sum(1)
        distances[row] = np.inf
        return np.argsort(distances, kind="stable")[:k]


def _reach(snapshot: Snapshot) -> float:
    """The largest finite |coordinate| in a snapshot's embedding."""
    Z = np.asarray(snapshot.embedding, dtype=np.float64)
    finite = np.abs(Z[np.isfinite(Z)])
    return float(finite.max()) if finite.size else 0.0


def blow_up_note(snapshots: Sequence[Snapshot], growth: float = 1000.0) -> str | None:
    """Words for a run that stays finite but blows up (a learning rate far too large): the
    embedding grew more than ``growth`` times past where it started, or accuracy fell far
    below its best. None for a healthy run."""
    whole = [s for s in snapshots if s.fraction >= 1.0]
    if len(whole) < 2:
        return None
    start, now = _reach(whole[0]), _reach(whole[-1])
    scored = [s.train_accuracy for s in whole if s.train_accuracy is not None]
    fell = len(scored) > 1 and scored[-1] < max(scored) - 0.2
    if now <= growth * max(start, 1e-12) and not fell:
        return None
    what = f"the embedding grew from ±{start:.3g} to ±{now:.3g}" if now > growth * start else ""
    if fell:
        drop = f"accuracy fell from {percent(max(scored))} to {percent(scored[-1])}"
        what = f"{what} and {drop}" if what else drop
    return (
        f"This run looks like it is diverging: {what}. Steps this large overshoot; "
        "lower the learning rate (or standardise the inputs)."
    )
