"""One plan per fit: every parameter decided for the data, once.

``make_plan`` takes a request (the estimator's parameters, or the app's and the CLI's run
settings under the same names; any left out take the library's defaults, ``params.PARAMS``)
and the data's shape, and returns a frozen ``Plan``: every "auto" and None replaced by what
it means here (``resolve``, from the small rules of ``rules``), the device and the precision chosen, and a ``Note`` for
each request it had to change or qualify. The estimator makes one plan per fit (or takes
the one the app made to show its notes), and everything below it, the epoch strategies
included, reads the plan and never the rules again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .params import ESTIMATOR_PARAMS
from .rules import (
    DEFAULT_CANDIDATES,
    LBFGS_MAX_ITER,
    DataShape,
    Note,
    augmentation_note,
    auto_dtype,
    auto_init,
    auto_kernel,
    auto_objective,
    auto_optimizer,
    auto_schedule,
    auto_shift,
    candidates_note,
    default_learning_rate,
    dense_suits,
    input_scale_note,
    locked_values,
    minibatch_defaults,
    neighbor_source,
    neighbors_note,
)

__all__ = ["DEFAULTS", "Plan", "make_plan", "resolve"]

# The library's default of every estimator parameter (``params.PARAMS``).
DEFAULTS = MappingProxyType({p.name: p.default for p in ESTIMATOR_PARAMS})


@dataclass(frozen=True)
class Plan:
    """What a fit on data of ``shape`` does.

    ``request`` holds the parameters as asked, ``settings`` every one of them decided
    (read them as attributes: ``plan.batch_size``), with three that the request does not
    name: ``decay_epochs`` (epochs over which a cosine schedule falls to 0, or None) and
    ``device`` and ``dtype`` resolved ("cpu", "cuda:0"; "float32" or "float64").
    ``notes`` says what was changed or qualified (``rules.Note``): the estimator raises on
    one of level "error" and warns on "warning"; the app shows them all.
    """

    request: Mapping[str, Any]
    shape: DataShape
    settings: Mapping[str, Any]
    notes: tuple[Note, ...]

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self.settings[name]
        except KeyError:
            raise AttributeError(f"a plan has no setting {name!r}") from None


def make_plan(request: Mapping[str, Any], shape: DataShape) -> Plan:
    """The plan for ``request`` (parameter names; those left out take their defaults) on data
    of ``shape``. A device that is not available raises ValueError."""
    asked = {**DEFAULTS, **request}
    settings, notes = resolve(asked, shape)
    settings["decay_epochs"] = settings["max_iter"] if settings["learning_rate_schedule"] == "cosine" else None
    settings["device"] = _device(settings, shape.n_samples)
    settings["dtype"] = _dtype(settings, shape.n_samples)
    return Plan(MappingProxyType(dict(asked)), shape, MappingProxyType(settings), tuple(notes))


def _device(settings: Mapping[str, Any], n_samples: int) -> str:
    """The device, resolved: "auto" keeps on the CPU the small L-BFGS problems that the
    whole-matrix float64 engine takes (``rules.dense_suits``), where a GPU spends more on
    launches than the sums cost; else CUDA, then MPS, then the CPU."""
    from ..util.device import resolve_device  # torch: only when a plan is made

    s = settings
    small = s["optimizer"] == "lbfgs" and dense_suits(s["encoder"], s["kernel"], s["objective"], n_samples)
    return "cpu" if s["device"] == "auto" and small else str(resolve_device(s["device"]))


def _dtype(settings: Mapping[str, Any], n_samples: int) -> str:
    """The precision: "auto" as ``rules.auto_dtype`` says; float64 asked for on Apple MPS,
    which has none, raises ValueError."""
    dtype, device = settings["dtype"], settings["device"]
    if dtype == "auto":
        return auto_dtype(settings["optimizer"], n_samples, device)
    if dtype == "float64" and device.startswith("mps"):
        raise ValueError("Apple MPS has no float64: use dtype='float32' on device 'mps'")
    return dtype


def resolve(request: Mapping[str, Any], shape: DataShape) -> tuple[dict[str, Any], list[Note]]:
    """Concrete settings for data of ``shape``, and a note for each request changed or qualified.

    ``request`` uses the estimator's names: n_components (None: n_features, or the rows of
    an init array), encoder, init (a name or an array), optimizer ("auto": ``auto_optimizer``),
    neighbors, learning_rate, batch_size and max_iter (None: tuned for the data size),
    kernel, objective ("auto": ``auto_objective``), learning_rate_schedule ("auto":
    ``auto_schedule``), n_candidates, and optionally augment (None or a callable),
    image_shape and shift ("auto": ``_shift``); augment and shift become None and 0 where
    they cannot apply. The result has the same keys with "auto" and None replaced by what
    they mean here.
    """
    settings = {"shift": 0, "image_shape": None, "augment": None, "n_candidates": None, **request}
    notes: list[Note] = []
    for rule in (_init_array, _dimension, _encoder_start, _auto_values, _lda_rows, _batch):
        notes += rule(settings, shape)
    lbfgs_note = neighbors_note(settings["optimizer"], settings["neighbors"])
    if settings["optimizer"] == "lbfgs":  # full batch: every point, no candidates
        settings["neighbors"], settings["n_candidates"] = "all", None
    s = settings
    candidates = candidates_note(s["n_candidates"], s["objective"], s["neighbors"])
    if candidates is not None:  # the app trains exactly instead
        s["neighbors"], s["n_candidates"] = "all", None
    scale = input_scale_note(s["encoder"], shape.largest_feature_std)
    notes += [note for note in (lbfgs_note, candidates, scale) if note is not None]
    return settings, notes + _shift(settings, shape)


def _shift(settings: dict, shape: DataShape) -> list[Note]:
    """Images move while a network trains: "auto" is ``image_shift`` pixels for a network
    whose anchors are encoded alone, else none. A shift needs the images' shape, and
    anchors encoded alone (``augments_anchors``); ``augment`` replaces it."""
    s = settings
    image_shape = None if s["image_shape"] is None else tuple(s["image_shape"])
    if image_shape is not None and (len(image_shape) != 2 or image_shape[0] * image_shape[1] != shape.n_features):
        s["image_shape"], s["shift"] = None, 0
        problem = f"image_shape {image_shape} does not hold the data's {shape.n_features} features"
        return [Note("image_shape", "error", f"The images' shape does not fit: {problem}.", problem)]
    if s["shift"] == "auto":  # a custom augmentation takes the shift's place
        auto = auto_shift(s["encoder"], image_shape, s["optimizer"], s["neighbors"], s["n_candidates"])
        s["shift"] = auto if s["augment"] is None else 0
    if s["shift"] and image_shape is None:
        s["shift"] = 0
        return [Note("shift", "error", "Shifting is for images; this dataset's rows are not images, so it is off.",
                     "shift needs image_shape=(height, width) of the images")]  # fmt: skip
    if s["shift"] and s["augment"] is not None:
        s["shift"] = 0
        return [Note("shift", "error", "A custom augmentation replaces the image shift.",
                     "give shift or augment, not both")]  # fmt: skip
    note = augmentation_note(s["augment"] or s["shift"] or None, s["optimizer"], s["neighbors"], s["n_candidates"])
    if note is not None:
        s["augment"], s["shift"] = None, 0
        return [note]
    return []


def _init_array(settings: dict, shape: DataShape) -> list[Note]:
    """A starting matrix fixes d (n_components None takes its rows) and must fit the data."""
    init, d = settings["init"], settings["n_components"]
    if isinstance(init, str):
        return []
    rows, columns = init.shape
    problem = None
    if settings["encoder"] == "mlp":
        problem = "encoder='mlp' starts from random weights: init must be 'auto' or 'random'"
    elif columns != shape.n_features:
        problem = f"init has {columns} columns but the data has {shape.n_features} features"
    elif rows > columns:
        problem = f"init has more rows ({rows}) than columns ({columns})"
    elif d is not None and d != rows:
        problem = f"n_components ({d}) does not match the {rows} rows of init"
    if problem is not None:
        return [Note("init", "error", f"The starting map does not fit: {problem}.", problem)]
    settings["n_components"] = rows
    return []


def _dimension(settings: dict, shape: DataShape) -> list[Note]:
    """d <= D for a map (a network may widen); a diagonal map keeps every feature."""
    D, d = shape.n_features, settings["n_components"]
    encoder = settings["encoder"]
    if d is None:
        settings["n_components"] = D
        return []
    if encoder == "diagonal" and d != D:
        settings["n_components"] = D
        return [
            Note(
                "n_components",
                "error",
                f"A diagonal map keeps all {D} features, so the output dimension is {D}.",
                f"encoder='diagonal' keeps every feature: n_components must be None or {D}, got {d}",
            )
        ]
    if d > D and encoder != "mlp":
        settings["n_components"] = D
        return [
            Note(
                "n_components",
                "error",
                f"The output dimension is capped at the {D} input features.",
                f"n_components ({d}) cannot be larger than the number of features ({D})",
            )
        ]
    return []


def _encoder_start(settings: dict, shape: DataShape) -> list[Note]:
    """A network starts from random weights; a diagonal map cannot start from PCA or LDA."""
    encoder, init = settings["encoder"], settings["init"]
    if not isinstance(init, str):
        return []
    locked = locked_values(encoder).get("init")
    if locked is not None and init not in ("auto", locked):
        settings["init"] = locked
        return [
            Note(
                "init",
                "error",
                "A neural network starts from random weights (PCA, LDA and identity starts are for linear maps).",
                "encoder='mlp' starts from random weights: init must be 'auto' or 'random'",
            )
        ]
    if encoder == "diagonal" and init in ("pca", "lda"):
        settings["init"] = "identity"
        return [
            Note(
                "init",
                "error",
                "A diagonal map starts from the identity (PCA and LDA starts need a full map).",
                f"init={init!r} needs encoder='linear'; use 'identity' or 'random'",
            )
        ]
    return []


def _auto_values(settings: dict, shape: DataShape) -> list[Note]:
    """ "auto" and None mean a concrete start, optimiser, neighbour source and step."""
    encoder = settings["encoder"]
    if isinstance(settings["init"], str) and settings["init"] == "auto":
        start = "identity" if encoder == "diagonal" else auto_init(settings["n_components"], shape)
        settings["init"] = locked_values(encoder).get("init") or start
    if settings["optimizer"] == "auto":
        settings["optimizer"] = auto_optimizer(shape, encoder)
    if settings.get("kernel", "gaussian") == "auto":
        settings["kernel"] = auto_kernel(encoder)
    if settings.get("learning_rate_schedule", "auto") == "auto":
        settings["learning_rate_schedule"] = auto_schedule(encoder)
    optimizer = settings["optimizer"]
    settings["neighbors"] = neighbor_source(
        settings["neighbors"], optimizer, encoder, shape.n_samples, settings["n_components"]
    )
    if settings["n_candidates"] and settings["neighbors"] == "all":
        settings["neighbors"] = "nearest"
    if settings["neighbors"] == "nearest" and settings["n_candidates"] is None:
        settings["n_candidates"] = DEFAULT_CANDIDATES
    if settings["objective"] == "auto":
        settings["objective"] = auto_objective(encoder, shape.n_samples, settings["n_components"], settings["neighbors"])
    tuned = minibatch_defaults(shape.n_samples, settings["n_components"], settings["neighbors"], encoder)
    if optimizer == "lbfgs":
        tuned = {
            "learning_rate": default_learning_rate("lbfgs"),
            "batch_size": shape.n_samples,
            "max_iter": LBFGS_MAX_ITER,
        }
    elif encoder == "mlp" or optimizer != "adam":
        tuned["learning_rate"] = default_learning_rate(optimizer, encoder, settings["objective"])
    for name, value in tuned.items():
        if settings[name] is None:
            settings[name] = value
    return []


def _lda_rows(settings: dict, shape: DataShape) -> list[Note]:
    """LDA gives at most n_classes - 1 directions; the other rows start from PCA."""
    available = min(shape.n_features, shape.n_classes - 1)
    d = settings["n_components"]
    if not (isinstance(settings["init"], str) and settings["init"] == "lda" and d > available):
        return []
    text = (
        f"LDA gives at most n_classes - 1 = {shape.n_classes - 1} directions; "
        f"the other {d - available} start from PCA."
    )
    error = (
        f"init='lda' gives at most n_classes - 1 = {available} directions; the other "
        f"{d - available} rows of the map start from PCA directions"
    )
    return [Note("init", "warning", text, error)]


def _batch(settings: dict, shape: DataShape) -> list[Note]:
    """A batch holds at most every training point (one batch per epoch)."""
    n = shape.n_samples
    if settings["optimizer"] == "lbfgs" or settings["batch_size"] <= n:
        return []
    settings["batch_size"] = n
    return [
        Note(
            "batch_size",
            "info",
            f"The batch size is capped at the {n} training points (one batch per epoch).",
            f"batch_size is capped at the {n} training points",
        )
    ]
