"""Every setting of a training run, declared once.

A ``Setting`` names one ``RunConfig`` field with its type (that of its default), its
choices (from the library's constants) or range, a label and help text, its key in a
shareable link and its command-line flag. The app's sidebar, the link reader and writer
and the CLI's parser are all generated from ``SETTINGS``; ``RunConfig`` itself is built
from it, so a new setting is one entry here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .rules import (
    NEAREST_MIN_SAMPLES,
    NETWORK_HIDDEN_SIZES,
    OPTIONS,
    PICTURE_NEAREST_MIN_SAMPLES,
    SHIFTS,
    augments_anchors,
    default_learning_rate,
    neighbor_source,
    uses_minibatches,
)

__all__ = [
    "SETTINGS", "Accepts", "RunConfig", "Setting", "parse_boolean", "parse_dof", "parse_flag", "parse_layer_sizes",
]  # fmt: skip


@dataclass(frozen=True)
class Accepts:
    """What the estimator's parameter of a setting's name accepts beyond the app's controls,
    which offer a few useful values: numbers from ``low`` (``above``: strictly more) up to
    ``high`` (None: no limit), and ``also`` these values or values of these types ("auto"
    and None: decided for the data; "learn"; ``tuple``). A setting whose choices are words
    accepts those words as well. ``NCA._parameter_constraints`` is built from these."""

    low: float | None = None
    high: float | None = None
    above: bool = False
    also: tuple = ()


@dataclass(frozen=True)
class Setting:
    """One run setting: what it is, what values it takes, and how users reach it.

    ``choices`` lists every value allowed (with ``labels`` to show them); otherwise
    ``low``..``high`` bound a number. ``applies`` says when the setting matters given the
    others (the app greys it out otherwise); ``reset_on`` names settings whose change brings
    back this one's recommended value. ``bound`` ("n_features", "n_samples" or
    "image_shape") limits the choices to the data. ``widget`` picks the app's control;
    ``url_key`` None keeps it out of links. ``parser`` reads a value that is not one plain
    type (a tuple of layer sizes, a number or "learn") from text; ``text_of`` writes it.
    ``accepts`` is what the estimator's parameter of the same name takes (``Accepts``).
    """

    name: str
    default: Any
    label: str
    help: str
    section: str
    widget: str
    choices: tuple = ()
    labels: Mapping[Any, str] | None = None
    low: float | None = None
    high: float | None = None
    url_key: str | None = None
    applies: Callable[[Mapping[str, Any]], bool] | None = None
    reset_on: tuple[str, ...] = ()
    bound: str | None = None
    parser: Callable[[str], Any] | None = None
    text_of: Callable[[Any], str] = str
    values_text: str = ""
    accepts: Accepts | None = None  # None: not a parameter of the estimator

    @property
    def kind(self) -> type:
        return type(self.default)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def label_of(self, value) -> str:
        return str((self.labels or {}).get(value, value))

    def parse(self, text: str):
        """The value ``text`` stands for; ValueError saying what is allowed."""
        if self.kind is bool:
            return parse_boolean(text)
        try:
            value = (self.parser or self.kind)(text)
        except ValueError:
            raise ValueError(f"must be {self.describe()}") from None
        self.check(value)
        return value

    def check(self, value) -> None:
        """ValueError unless ``value`` is one this setting allows."""
        if self.choices:
            if value not in self.choices:
                raise ValueError(f"must be {self.describe()}")
        elif self.parser is not None:
            self.parser(self.text_of(value))  # a value the text form accepts (raises ValueError)
        elif self.low is not None and not (math.isfinite(value) and self.low <= value <= self.high):
            raise ValueError(f"must be {self.describe()}")

    def describe(self) -> str:
        if self.choices:
            separator = "; " if self.kind is tuple else ", "  # "32,32; 64,64", not "32,32, 64,64"
            return "one of " + separator.join(self.text_of(c) for c in self.choices)
        if self.parser is not None:
            return self.values_text
        if self.kind is bool:
            return "true or false"
        noun = "a whole number" if self.kind is int else "a number"
        return f"{noun} from {self.low:g} to {self.high:g}"


def parse_boolean(text: str) -> bool:
    """1/true/yes or 0/false/no, any case: how a link or a flag spells a toggle."""
    lowered = text.lower()
    if lowered in ("1", "true", "yes"):
        return True
    if lowered in ("0", "false", "no"):
        return False
    raise ValueError("must be true or false")


def _minibatch(values: Mapping[str, Any]) -> bool:
    return uses_minibatches(values.get("optimizer", "adam"))


def _anchors_alone(values: Mapping[str, Any]) -> bool:
    optimizer = values.get("optimizer", "adam")
    neighbors = neighbor_source(values.get("neighbors", "auto"), optimizer, values.get("encoder", "linear"))
    return augments_anchors(optimizer, neighbors)


_HIDDEN_WIDTHS = (32, 64, 128, 256, 500, 512, 1000)  # the app's hidden layer widths: two of each
DOF_MAX = 1000.0  # the Student-t's largest degrees of freedom a link, flag or control takes

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "n_components", 2, "Output dimension d",
        "2 or 3 to look at; larger keeps more for kNN (then the first three coordinates are drawn).",
        "Map", "select_slider", choices=(2, 3, 5, 10, 16, 32, 64), url_key="d", bound="n_features",
        accepts=Accepts(low=1, also=(None,)),
    ),
    Setting(
        "encoder", "linear", "Map type",
        "A diagonal map only rescales features (the paper's feature-weighting variant); "
        "a neural network bends space too (nonlinear NCA), starting from random weights.",
        "Map", "selectbox", choices=OPTIONS["encoder"], url_key="encoder", accepts=Accepts(),
        labels={
            "linear": "linear (full d × D map)",
            "diagonal": "diagonal (feature scaling)",
            "mlp": "neural network (MLP, nonlinear)",
        },
    ),
    Setting(
        "init", "pca", "Start from",
        "A network always starts from random weights. A linear map can start from PCA (the "
        "directions of largest variance), LDA (the class-separating ones), the identity or at random.",
        "Map", "selectbox", choices=OPTIONS["init"], url_key="init", reset_on=("encoder",),
        accepts=Accepts(also=(np.ndarray,)),
        labels={"auto": "automatic", "pca": "PCA", "lda": "LDA", "identity": "identity", "random": "random"},
    ),
    Setting(
        "hidden_sizes", NETWORK_HIDDEN_SIZES, "Hidden layers",
        "The network's hidden ReLU layers (units in each), then a linear output layer.",
        "Map", "select_slider", choices=tuple((w, w) for w in _HIDDEN_WIDTHS), url_key="hidden",
        applies=lambda v: v.get("encoder") == "mlp", labels={(w, w): f"2 × {w}" for w in _HIDDEN_WIDTHS},
        parser=lambda text: parse_layer_sizes(text), text_of=lambda sizes: ",".join(map(str, sizes)),
        accepts=Accepts(also=(tuple, list)),
    ),
    Setting(
        "kernel", "gaussian", "Kernel",
        "How fast a neighbour's chance of being picked falls with distance. The Student-t's "
        "heavy tail lets classes sit close in 2-D without crushing each other (Min et al., 2010).",
        "Map", "radio", choices=OPTIONS["kernel"], url_key="kernel", reset_on=("encoder",),
        accepts=Accepts(also=("auto",)),
        labels={"gaussian": "Gaussian (the paper's)", "student-t": "Student-t (heavy-tailed)"},
    ),
    Setting(
        "dof", None, "Degrees of freedom (0 = d − 1)",
        "Smaller means heavier tails. 0 uses the paper's choice, d − 1 (at least 1); "
        "'learn' trains the tail weight by gradient along with the map, from d − 1.",
        "Map", "dof", low=0.0, high=DOF_MAX, url_key="dof", applies=lambda v: v.get("kernel") == "student-t",
        parser=lambda text: parse_dof(text), text_of=lambda dof: "0" if dof is None else str(dof),
        values_text=f"a number from 0 to {DOF_MAX:g} (0: d − 1) or learn",
        accepts=Accepts(low=0, above=True, also=("learn", None)),
    ),
    Setting(
        "objective", "f", "Objective",
        "f counts expected correct classifications; g is its log-likelihood version, which punishes "
        "hopeless points more; MCML pulls all same-class pairs together at once (Min et al., 2010).",
        "Map", "radio", choices=OPTIONS["objective"], url_key="objective", reset_on=("encoder", "n_components"),
        accepts=Accepts(also=("auto",)),
        labels={
            "f": "f: expected correct (Σ pᵢ)",
            "g": "g: log-likelihood (Σ log pᵢ)",
            "mcml": "MCML: match pairs to classes (KL)",
        },
    ),
    Setting(
        "standardize", False, "Standardise inputs",
        "Rescale every feature to zero mean and unit variance first; useful when units differ (wine).",
        "Map", "toggle", url_key="std",
    ),
    Setting(
        "optimizer", "adam", "Optimiser",
        "L-BFGS uses every point each step; Adam and SGD take batches of anchors, whose neighbours "
        "still come from all points.",
        "Optimiser", "selectbox", choices=OPTIONS["optimizer"], url_key="optimizer", accepts=Accepts(also=("auto",)),
        labels={"lbfgs": "L-BFGS (full batch)", "adam": "Adam (minibatch)", "sgd": "SGD (minibatch)"},
    ),
    Setting(
        "learning_rate", default_learning_rate("adam"), "Learning rate",
        "Step size. If training diverges, lower it.",
        "Optimiser", "number", low=1e-5, high=1e3, url_key="lr", reset_on=("optimizer", "encoder", "n_components"),
        accepts=Accepts(low=0, above=True, also=(None,)),
    ),
    Setting(
        "learning_rate_schedule", "constant", "Step size over the run",
        "Constant keeps the learning rate; cosine lowers it smoothly to 0 by the last epoch, so "
        "a network's final epochs settle instead of jittering.",
        "Optimiser", "radio", choices=OPTIONS["learning_rate_schedule"], url_key="schedule",
        reset_on=("encoder",), applies=_minibatch, accepts=Accepts(also=("auto",)),
        labels={"constant": "constant", "cosine": "cosine decay to 0"},
    ),
    Setting(
        "batch_size", 128, "Batch size", "Anchors per step (minibatch optimisers only).",
        "Optimiser", "select_slider", choices=(32, 64, 128, 256, 512, 1024, 2048, 4096), url_key="batch",
        applies=_minibatch, reset_on=("encoder", "n_components"), accepts=Accepts(low=1, also=(None,)),
    ),
    Setting(
        "neighbors", "auto", "Neighbours from",
        "Where a batch's points find neighbours. All points is exact but recomputes every "
        "embedding each step; nearest points takes each point's nearest few (searched again "
        "each epoch) and a random sample of the rest, so a step costs the same on any data "
        "size; a memory bank keeps everyone's last embedding (Wu et al., 2018), cheap for a "
        "network; the batch alone is the naive baseline. Automatic: the bank for a network, "
        f"nearest points for a map on over {NEAREST_MIN_SAMPLES:,} points (over "
        f"{PICTURE_NEAREST_MIN_SAMPLES:,} for a 2-D or 3-D picture), else all points.",
        "Optimiser", "selectbox", choices=OPTIONS["neighbors"], url_key="neighbors", applies=_minibatch,
        accepts=Accepts(),
        labels={
            "auto": "automatic", "all": "all points (exact)", "nearest": "nearest points (approximate)",
            "memory": "memory bank", "batch": "this batch only",
        },
    ),
    Setting(
        "shift", 0, "Shift images while training",
        "Every step sees its images moved by up to this many pixels, differently each time, so "
        "a network cannot learn the training images by heart. For images, with neighbours from "
        "a memory bank or the batch.",
        "Optimiser", "select_slider", choices=SHIFTS, url_key="shift", reset_on=("encoder",),
        labels={0: "off", 1: "1 pixel", 2: "2 pixels"}, applies=_anchors_alone, bound="image_shape",
        accepts=Accepts(low=0, also=("auto",)),
    ),
    Setting(
        "max_iter", 60, "Epochs", "Passes over the training set (L-BFGS: iterations).",
        "Optimiser", "slider", low=1, high=300, url_key="epochs", reset_on=("encoder", "n_components"),  # link key: the old name
        accepts=Accepts(low=1, also=(None,)),
    ),
    Setting(
        "weight_decay", 0.0, "L2 weight on the map",
        "Penalises large maps; a large map means very few effective neighbours.",
        "Optimiser", "number", low=0.0, high=10.0, url_key="l2", accepts=Accepts(low=0),
    ),
    Setting(
        "device", "auto", "Device",
        "Where training runs: auto picks CUDA, then MPS, then the CPU, and keeps small L-BFGS fits on the CPU, where they are faster.",
        "Run", "device", accepts=Accepts(also=(str,)),
    ),
    Setting(
        "random_state", 0, "Seed", "Same seed, same run.", "Run", "number", low=0, high=2**31 - 1, url_key="seed",
        accepts=Accepts(low=0, high=2**32 - 1, also=(None, np.random.RandomState)),  # scikit-learn's random_state
    ),
    Setting(
        "display_size", 2000, "Points drawn",
        "Training uses every point; the picture shows a fixed stratified subset.",
        "Run", "select_slider", choices=(500, 1000, 2000, 3000, 5000), bound="n_samples",
    ),
    Setting(
        "k", 5, "k for kNN accuracy", "Neighbours that vote in the kNN accuracies.",
        "Run", "select_slider", choices=(1, 3, 5, 7, 9), url_key="k",
    ),
)  # fmt: skip

BY_NAME = {s.name: s for s in SETTINGS}


def _replace(self, **changes) -> RunConfig:
    return dataclasses.replace(self, **changes)


def _as_dict(self) -> dict:
    return dataclasses.asdict(self)


RunConfig = dataclasses.make_dataclass(
    "RunConfig",
    [(s.name, s.kind, dataclasses.field(default=s.default)) for s in SETTINGS],
    frozen=True,
    namespace={"replace": _replace, "as_dict": _as_dict, "__module__": __name__},
)
RunConfig.__doc__ = """Settings of one training run (fields: ``SETTINGS``), named as the ``NCA``
parameters they set; each is a JSON-safe value (a scalar, or a tuple of layer sizes).

``dof`` None means the paper's d - 1 for the Student-t kernel; "learn" trains it from there.
"""


def parse_layer_sizes(text: str) -> tuple[int, ...]:
    """ "256,256" -> (256, 256): hidden layer widths, each a positive whole number."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise ValueError("must be positive whole numbers separated by commas, e.g. 256,256")
    return sizes


def parse_dof(text: str) -> float | str | None:
    """ "learn", a positive number, or 0 (None: the paper's d - 1)."""
    if text.strip().lower() == "learn":
        return "learn"
    value = float(text)
    if not (math.isfinite(value) and 0.0 <= value <= DOF_MAX):
        raise ValueError
    return value or None


def parse_flag(setting: Setting) -> Callable[[str], Any]:
    """``setting.parse`` for argparse, which reports a ValueError only as "invalid value".

    The command line is not bound to the app's widget grids: a whole-number setting takes
    any value from its lowest (d = 30, 500 epochs), and any hidden layers
    (500,500,2000); choices and float ranges still hold.
    """
    import argparse

    def parse(text: str):
        try:
            if setting.kind is int:
                return _whole_number_from(text, int(setting.low) if setting.low is not None else 1)
            if setting.kind is tuple:  # any hidden layers, not only the app's
                return parse_layer_sizes(text)
            return setting.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{text!r} {exc}") from None

    return parse


def _whole_number_from(text: str, lowest: int) -> int:
    try:
        value = int(text)
    except ValueError:
        value = lowest - 1
    if value < lowest:
        raise ValueError(f"must be a whole number from {lowest}")
    return value
