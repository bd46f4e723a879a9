"""The run settings: the parameters a user reaches in the app, a link or the command line.

Each is a ``Param`` of ``params.PARAMS`` with a ``Control``; a ``Setting`` joins the two
with the value the app starts from: the library's default, patched by ``APP_START`` where
the sidebar needs a concrete value. The app's sidebar, the link reader and writer and the
CLI's parser are all generated from ``SETTINGS``; ``RunConfig`` itself is built from it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .declaration import DOF_MAX, Control, parse_dof, parse_layer_sizes
from .params import PARAMS
from .rules import default_learning_rate

__all__ = [
    "APP_REQUEST", "APP_START", "DOF_MAX", "SETTINGS", "RunConfig", "Setting", "parse_boolean", "parse_dof",
    "parse_flag", "parse_layer_sizes",
]  # fmt: skip

# Where the app starts before it knows the data: the library's defaults, with concrete
# values where the library's are "auto" or None (a control shows a value) and a seed, so
# that the same clicks give the same run. Each dataset's recommended values
# (``runs.run.recommended_config``) replace these.
APP_START = {
    "n_components": 2, "init": "pca", "kernel": "gaussian", "objective": "f", "optimizer": "adam",
    "learning_rate": default_learning_rate("adam"), "learning_rate_schedule": "constant", "batch_size": 128,
    "shift": 0, "max_iter": 60, "random_state": 0,
}  # fmt: skip


@dataclass(frozen=True)
class Setting:
    """One run setting: a parameter's name, the value the app starts from (``APP_START``,
    else the library's default), and how users reach it (the ``Control``'s fields read as
    the setting's own: ``setting.label``, ``setting.choices``, ...)."""

    name: str
    default: Any
    control: Control

    def __getattr__(self, attr: str):
        if attr.startswith("__"):  # copy and pickle look for hooks: none here
            raise AttributeError(attr)
        return getattr(self.control, attr)

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
            if value not in self.choices and not self._a_smaller_sets_size(value):
                raise ValueError(f"must be {self.describe()}")
        elif self.parser is not None:
            self.parser(self.text_of(value))  # a value the text form accepts (raises ValueError)
        elif self.low is not None and not (math.isfinite(value) and self.low <= value <= self.high):
            raise ValueError(f"must be {self.describe()}")

    def _a_smaller_sets_size(self, value) -> bool:
        """Whether ``value`` is a size the app offers a set too small for the choices: a
        count of points bounded by the data (``bound="n_samples"``) offers the set's own size
        in place of the choices above it (700 training points of rings for 1000), and
        writes it into the page's address; which set takes it is checked against that set."""
        return (
            self.bound == "n_samples" and isinstance(value, int) and not isinstance(value, bool)
            and 2 <= value < max(self.choices)
        )  # fmt: skip

    def describe(self) -> str:
        if self.choices:
            separator = "; " if self.kind is tuple else ", "  # "32,32; 64,64", not "32,32, 64,64"
            listed = "one of " + separator.join(self.text_of(c) for c in self.choices)
            return listed + (", or a smaller set's size" if self.bound == "n_samples" else "")
        if self.parser is not None:
            return self.values_text
        if self.kind is bool:
            return "true or false"
        if self.kind is int:  # every digit: 2147483647, not 2.14748e+09
            return f"a whole number from {self.low:.0f} to {self.high:.0f}"
        return f"a number from {self.low:g} to {self.high:g}"


def parse_boolean(text: str) -> bool:
    """1/true/yes or 0/false/no, any case: how a link or a flag spells a toggle."""
    lowered = text.lower()
    if lowered in ("1", "true", "yes"):
        return True
    if lowered in ("0", "false", "no"):
        return False
    raise ValueError("must be true or false")


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(p.name, APP_START.get(p.name, p.default), p.control) for p in PARAMS if p.control is not None
)
BY_NAME = {s.name: s for s in SETTINGS}

# The app's request, what its recommended settings are planned for (``runs.run.
# recommended_config``), the sidebar and the command line alike: a 2-D picture, by a linear
# map, trained by minibatch Adam, each epoch a visible step. It differs from the estimator's
# defaults on purpose: ``NCA()`` keeps every dimension (n_components=None) and lets
# optimizer="auto" choose, L-BFGS on small sets, whose iterations are no steps to watch.
APP_REQUEST = {name: BY_NAME[name].default for name in ("n_components", "encoder", "optimizer")}


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
