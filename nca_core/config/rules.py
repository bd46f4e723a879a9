"""How settings depend on each other and on the data: every such rule, stated once.

``plan.resolve`` turns a requested configuration (the estimator's parameter names) into
concrete settings for a dataset's shape, with a ``Note`` for each request it had to change
or qualify. The estimator raises on a note of level "error" and warns on "warning"; the
app adjusts and shows every note in plain words. The training loop and the app's controls
ask the small rule functions below instead of restating them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "DENSE_MAX_SAMPLES",
    "ENCODERS",
    "INITS",
    "KERNELS",
    "KERNEL_CHOICES",
    "LBFGS_MAX_SAMPLES",
    "NEIGHBOR_CHOICES",
    "NEIGHBOR_SOURCES",
    "NETWORK_HIDDEN_SIZES",
    "OBJECTIVES",
    "OBJECTIVE_CHOICES",
    "OPTIMIZERS",
    "OPTIMIZER_CHOICES",
    "PER_ANCHOR_OBJECTIVES",
    "SCHEDULES",
    "SCHEDULE_CHOICES",
    "DataShape",
    "Note",
    "augmentation_note",
    "augments_anchors",
    "auto_dtype",
    "auto_kernel",
    "auto_objective",
    "auto_schedule",
    "auto_shift",
    "default_learning_rate",
    "dense_suits",
    "image_shift",
    "input_scale_note",
    "locked_values",
    "minibatch_defaults",
    "reads_input_scale",
]

# The names of every choice live here, not beside what implements them (encoders,
# kernels, losses), so that settings and links are read without loading torch.
ENCODERS = ("linear", "diagonal", "mlp")
KERNELS = ("gaussian", "student-t")
KERNEL_CHOICES = ("auto", *KERNELS)
SHIFTS = (0, 1, 2)  # pixels an image may move while a network trains
OBJECTIVES = ("f", "g", "mcml")
OBJECTIVE_CHOICES = ("auto", *OBJECTIVES)
PER_ANCHOR_OBJECTIVES = ("f", "g")  # objectives that are a mean over anchors
OPTIMIZERS = ("lbfgs", "adam", "sgd")
OPTIMIZER_CHOICES = ("auto", *OPTIMIZERS)
NEIGHBOR_SOURCES = ("all", "nearest", "memory", "batch")
NEIGHBOR_CHOICES = ("auto", *NEIGHBOR_SOURCES)
INITS = ("auto", "pca", "lda", "identity", "random")
SCHEDULES = ("constant", "cosine")
SCHEDULE_CHOICES = ("auto", *SCHEDULES)
OPTIONS = {
    "init": INITS,
    "objective": OBJECTIVES,
    "encoder": ENCODERS,
    "kernel": KERNELS,
    "neighbors": NEIGHBOR_CHOICES,
    "optimizer": OPTIMIZERS,
    "learning_rate_schedule": SCHEDULES,
}

# Step sizes that train without tuning. L-BFGS's line search scales its step; a network's
# weights need smaller minibatch steps than a linear map (benchmarks/deep_nca.py), and
# smaller again for MCML, whose loss over all pairs can run away from a larger step.
_LEARNING_RATES = {"lbfgs": 1.0, "adam": 0.01, "sgd": 0.1}
_DEEP_LEARNING_RATES = {"lbfgs": 1.0, "adam": 0.003, "sgd": 0.01}
_DEEP_MCML_LEARNING_RATES = {"lbfgs": 1.0, "adam": 0.001, "sgd": 0.003}
# Full-batch L-BFGS costs O(n^2 d) per iteration and needs tens of iterations: above this
# many points "auto" trains a linear map with minibatch Adam instead.
LBFGS_MAX_SAMPLES = 3000
LBFGS_MAX_ITER = 50
# Above this many points an exact epoch (O(n^2 d)) is no longer affordable and "auto" takes
# each anchor's neighbours from its nearest candidates and a uniform sample ("nearest");
# each of those epochs costs O(n) (benchmarks/scaling.py).
NEAREST_MIN_SAMPLES = 100_000
# Above this many points a set is MNIST-sized: an epoch takes seconds, not milliseconds, so
# it trains in large batches from a PCA start, and a live view must pace itself for it.
LARGE_SET_SAMPLES = 20_000
# A map to a picture (d <= PICTURE_MAX_DIM) of a large set trains on nearest points: in the
# plane an epoch on them costs a fraction of an exact one, and 40 of them reach the k-NN
# accuracy of 15 exact ones in less time (MNIST d = 2; benchmarks/mnist_picture.py).
PICTURE_NEAREST_MIN_SAMPLES = LARGE_SET_SAMPLES
PICTURE_MAX_DIM = 3
# Each anchor's nearest candidates on the nearest-points path: fewer make every step embed
# fewer points. The count that kept MNIST's 5-NN error (d = 32 and the picture's d = 2) at
# the least cost, over three seeds against exact training (measured in commit 4557530).
DEFAULT_CANDIDATES = 12
# Up to this many points the whole-matrix float64 engine (``objective.dense``) evaluates a
# small linear problem: its (n, n) matrices stay in cache and one evaluation costs less
# than the blockwise engine's calls; beyond it they do not, and the blockwise float32
# engine is faster (chosen by timing both on one thread).
DENSE_MAX_SAMPLES = 400
# A network's hidden ReLU layers when none are given (Salakhutdinov and Hinton's first two).
NETWORK_HIDDEN_SIZES = (500, 500)


# Rows, evenly spaced, on which the input scale is measured: a few thousand rows give the
# spread of the whole set, where all of a million would cost seconds and gigabytes.
SCALE_CHECK_ROWS = 2000


@dataclass(frozen=True)
class DataShape:
    """What the rules read of the data. ``largest_feature_std`` is measured only where a
    rule needs it (inputs a network trains on as given, ``input_scale_note``); None where
    it was not."""

    n_samples: int
    n_features: int
    n_classes: int
    largest_feature_std: float | None = None

    @classmethod
    def of(cls, X: np.ndarray, n_classes: int, encoder: str | None = None) -> DataShape:
        """The shape of X, and its largest feature standard deviation where it matters.

        Parameters
        ----------
        X : array of shape (n_samples, n_features)
        n_classes : int
        encoder : str or None
            The map that trains on X as given; None if it trains on something else (X
            standardised first). The spread is measured where that map depends on it
            (``reads_input_scale``), over at most ``SCALE_CHECK_ROWS`` evenly spaced rows.
        """
        if encoder is None or not reads_input_scale(encoder):
            return cls(len(X), X.shape[1], n_classes)
        rows = X[:: max(1, -(-len(X) // SCALE_CHECK_ROWS))]  # a copy in float64 of at most these rows
        return cls(len(X), X.shape[1], n_classes, float(np.std(rows, axis=0, dtype=np.float64).max()))


@dataclass(frozen=True)
class Note:
    """What ``resolve`` changed or qualified about one setting.

    ``text`` says it in plain words for the app; ``error`` in parameter names for the
    estimator. Level "error": impossible as asked (the estimator raises, the app adjusts);
    "warning": done, with a caveat; "info": adjusted harmlessly (the estimator says nothing).
    """

    setting: str
    level: str
    text: str
    error: str


def default_learning_rate(optimizer: str, encoder: str = "linear", objective: str = "g") -> float:
    """The step size used when none is given."""
    if encoder != "mlp":
        return _LEARNING_RATES[optimizer]
    return (_DEEP_MCML_LEARNING_RATES if objective == "mcml" else _DEEP_LEARNING_RATES)[optimizer]


def minibatch_defaults(
    n_samples: int, n_components: int, neighbors: str = "all", encoder: str = "linear"
) -> dict[str, Any]:
    """Adam settings that train without tuning, by data size.

    A map on a large set takes large batches and few epochs; a 2-D or 3-D map needs more
    epochs at a larger step than a wide one, and more again on nearest points (each far
    cheaper). A network (its step: ``default_learning_rate``) takes batches of 256 from a few
    thousand points on, for 40 epochs, or 12 on a large set, where each costs seconds. The
    values were chosen on MNIST and USPS (benchmarks/RESULTS.md, "How far it scales" and
    "Deep NCA against the paper").
    """
    if encoder == "mlp":  # its step: default_learning_rate
        if n_samples > LARGE_SET_SAMPLES:
            return {"batch_size": 256, "max_iter": 12}
        return {"batch_size": 256 if n_samples > LBFGS_MAX_SAMPLES else 128, "max_iter": 40}
    if n_samples > LARGE_SET_SAMPLES:
        if n_components > PICTURE_MAX_DIM:
            return {"learning_rate": 0.003, "batch_size": 1024, "max_iter": 5}
        return {"learning_rate": 0.01, "batch_size": 1024, "max_iter": 40 if neighbors == "nearest" else 15}
    if n_samples > LBFGS_MAX_SAMPLES:
        return {"learning_rate": 0.005, "batch_size": 256, "max_iter": 20}
    return {"learning_rate": 0.01, "batch_size": 128, "max_iter": 40}


def dense_suits(encoder: str, kernel: str, objective: str, n_samples: int) -> bool:
    """Whether the whole-matrix float64 engine (``objective.dense``) takes a problem of these
    settings: a linear or diagonal map, the Gaussian kernel, objective f or g, at most
    ``DENSE_MAX_SAMPLES`` points (on the CPU, in one process: ``epochs.dense_applies``)."""
    return (
        encoder in ("linear", "diagonal")
        and kernel == "gaussian"
        and objective in PER_ANCHOR_OBJECTIVES
        and n_samples <= DENSE_MAX_SAMPLES
    )


def auto_dtype(optimizer: str, n_samples: int, device: str) -> str:
    """The precision for "auto": float64 for full-batch L-BFGS on at most ``LBFGS_MAX_SAMPLES``
    points, float32 otherwise (and on Apple MPS, which has no float64). scipy's L-BFGS-B
    stops where a float32 loss no longer falls by tol, short of the optimum that float64 and
    scikit-learn reach (0.926 against 0.930 mean p_i on 500 standardised points, d = 2:
    tests/estimator/test_nca.py); at these sizes a float64 step costs milliseconds more."""
    full_batch = optimizer == "lbfgs" and n_samples <= LBFGS_MAX_SAMPLES
    return "float64" if full_batch and not device.startswith("mps") else "float32"


def auto_optimizer(shape: DataShape, encoder: str) -> str:
    """Full-batch L-BFGS for a map on a small set, as scikit-learn; minibatch Adam otherwise."""
    return "lbfgs" if encoder != "mlp" and shape.n_samples <= LBFGS_MAX_SAMPLES else "adam"


def locked_values(encoder: str) -> dict[str, Any]:
    """Settings that ``encoder`` dictates: a network starts from random weights."""
    return {"init": "random"} if encoder == "mlp" else {}


def auto_kernel(encoder: str) -> str:
    """The kernel for "auto": the heavy-tailed Student-t for a network (dt-NCA of Min et al.,
    2010), whose classes can then sit close without crushing each other; the paper's
    Gaussian for a map (as scikit-learn)."""
    return "student-t" if encoder == "mlp" else "gaussian"


def auto_objective(encoder: str, n_samples: int, n_components: int, neighbors: str) -> str:
    """The objective for "auto": f (the paper's and scikit-learn's) for a map; for a network,
    MCML for a wide map (d > 3) of a set up to ``LARGE_SET_SAMPLES`` points, else g.

    A network starts from random weights with many points among other classes, where f's
    gradient vanishes and g's does not. MCML pulls every pair of class mates together, which
    generalises better on a small set at d = 30 but not on a large one, and is unstable for a
    2-D picture (benchmarks/network_defaults.py at commit 8a01adc); nearest points
    serve only f and g.
    """
    if encoder != "mlp":
        return "f"
    wide = n_components > PICTURE_MAX_DIM and n_samples <= LARGE_SET_SAMPLES
    return "mcml" if wide and neighbors != "nearest" else "g"


def auto_schedule(encoder: str) -> str:
    """The step-size schedule for "auto": a cosine decay for a network, constant for a map.

    A network's minibatch steps stay noisy at a constant rate; falling to 0 over the run
    lets its last epochs settle (benchmarks/RESULTS.md, "Deep NCA against the paper").
    """
    return "cosine" if encoder == "mlp" else "constant"


def auto_shift(
    encoder: str, image_shape: tuple[int, int] | None, optimizer: str, neighbors: str, n_candidates: int | None = None
) -> int:
    """The shift for "auto": ``image_shift`` pixels for a network whose anchors are encoded
    on their own (``augments_anchors``); none for a map or anchors recomputed with the rest."""
    if encoder != "mlp" or not augments_anchors(optimizer, neighbors, n_candidates):
        return 0
    return image_shift(image_shape)


def image_shift(image_shape: tuple[int, int] | None) -> int:
    """Pixels a network's training images are shifted by: one per 16 pixels of the shorter
    side, so USPS (16 x 16) and MNIST (28 x 28) move by 1, and 8 x 8 digits, where a
    pixel is an eighth of the image, and tabular rows not at all. A network that would learn
    the training images by heart generalises better so (benchmarks/RESULTS.md, "Deep NCA against the paper")."""
    return 0 if image_shape is None else min(image_shape) // 16


def uses_minibatches(optimizer: str) -> bool:
    """Adam and SGD step on batches of anchors; L-BFGS on all points at once."""
    return optimizer != "lbfgs"


def neighbor_source(
    neighbors: str, optimizer: str, encoder: str, n_samples: int = 0, n_components: int | None = None
) -> str:
    """The concrete source for "auto": a memory bank for a network trained in minibatches,
    nearest candidates for a map trained in minibatches on a large set (from
    ``PICTURE_NEAREST_MIN_SAMPLES`` points for a 2-D or 3-D picture), else all points."""
    if neighbors != "auto":
        return neighbors
    if not uses_minibatches(optimizer):
        return "all"
    if encoder == "mlp":
        return "memory"
    picture = n_components is not None and n_components <= PICTURE_MAX_DIM
    large = PICTURE_NEAREST_MIN_SAMPLES if picture else NEAREST_MIN_SAMPLES
    return "nearest" if n_samples > large else "all"


def auto_init(n_components: int, shape: DataShape) -> str:
    """scikit-learn's "auto": LDA when it gives d directions, else PCA when d < min(D, n),
    else the identity."""
    if n_components <= min(shape.n_features, shape.n_classes - 1):
        return "lda"
    return "pca" if n_components < min(shape.n_features, shape.n_samples) else "identity"


def neighbors_note(optimizer: str, neighbors: str) -> Note | None:
    """L-BFGS takes every step on all points, so its neighbours come from all points."""
    if uses_minibatches(optimizer) or neighbors in ("auto", "all"):
        return None
    return Note(
        "neighbors",
        "error",
        "L-BFGS takes every step on all points, so neighbours come from all points.",
        f"neighbors={neighbors!r} needs a minibatch optimizer: set optimizer='adam' or 'sgd'",
    )


def candidates_note(n_candidates: int | None, objective: str, neighbors: str) -> Note | None:
    """Nearest candidates stand for all points in each anchor's own p_i: objective f or g,
    and neighbours from all points (of which they are the nearest)."""
    if n_candidates and neighbors in ("memory", "batch"):
        return Note(
            "n_candidates",
            "error",
            "A number of nearest candidates is for neighbours from the nearest points.",
            f"n_candidates needs neighbors='nearest' (or 'all' or 'auto'), got neighbors={neighbors!r}",
        )
    if objective in PER_ANCHOR_OBJECTIVES or not (n_candidates or neighbors == "nearest"):
        return None
    return Note(
        "neighbors",
        "error",
        "Neighbours from the nearest points need objective f or g (MCML normalises over all pairs).",
        "neighbors='nearest' and n_candidates work with objective 'f' or 'g'",
    )


# A network trains from PyTorch's default weights at a step tuned on pixels near unit scale;
# from features that vary much more it may not learn at all (benchmarks/network_defaults.py
# --scale; its table is in benchmarks/results/network_defaults.json).
NETWORK_MAX_FEATURE_STD = 10.0


def reads_input_scale(encoder: str) -> bool:
    """Whether a map trained with ``encoder`` depends on its inputs' scale: a network does
    (PyTorch's starting weights and its step suit inputs near unit scale); a linear or
    diagonal map starts from the data (PCA, LDA, the identity) at any scale."""
    return encoder == "mlp"


def input_scale_note(encoder: str, largest_std: float | None) -> Note | None:
    """A network's inputs should be near unit scale: a caveat when a feature's standard
    deviation is over ``NETWORK_MAX_FEATURE_STD`` (nothing when it was not measured)."""
    if not reads_input_scale(encoder) or largest_std is None or not largest_std > NETWORK_MAX_FEATURE_STD:
        return None
    return Note(
        "encoder",
        "warning",
        "Some features vary widely; a neural network learns best from standardised inputs, "
        "so standardise them first.",
        f"a feature of X has a standard deviation of {largest_std:.3g}: encoder='mlp' trains on inputs "
        "near unit scale; standardise X (e.g. sklearn.preprocessing.StandardScaler) or scale pixels to [0, 1]",
    )


def minibatch_applies(values: Mapping[str, Any]) -> bool:
    """Whether the minibatch settings apply, given the settings drawn above them (the
    optimiser's among them)."""
    return uses_minibatches(values["optimizer"])


def shift_applies(values: Mapping[str, Any]) -> bool:
    """Whether an image's shifts apply, given the settings drawn above them: to a run whose
    anchors alone are shifted (``augments_anchors``)."""
    optimizer = values["optimizer"]
    return augments_anchors(optimizer, neighbor_source(values["neighbors"], optimizer, values["encoder"]))


def augments_anchors(optimizer: str, neighbors: str, n_candidates: int | None = None) -> bool:
    """Whether training encodes each batch's anchors on their own, so that an augmentation
    can hand it altered copies: minibatches with a memory bank or batch-only neighbours."""
    return uses_minibatches(optimizer) and neighbors in ("memory", "batch") and not n_candidates


def augmentation_note(augment: Any, optimizer: str, neighbors: str, n_candidates: int | None) -> Note | None:
    """Augmented anchors need neighbours that are not recomputed from the clean inputs."""
    if augment is None or augments_anchors(optimizer, neighbors, n_candidates):
        return None
    return Note(
        "augment",
        "error",
        "Shifting images while training needs minibatches with neighbours from a memory bank "
        "or the batch, so it is off.",
        "shift and augment need a minibatch optimizer with neighbors='memory' or 'batch' and no n_candidates "
        f"(here optimizer={optimizer!r}, neighbors={neighbors!r})",
    )
