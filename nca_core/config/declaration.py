"""What declaring a parameter takes: its accepted values, its documentation, its control.

``params.PARAMS`` is the table of every parameter, written with these; ``Words`` and
``Range`` stand for scikit-learn's ``StrOptions`` and ``Interval`` so that reading settings
loads no scikit-learn (the estimator turns them into scikit-learn's constraints).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

__all__ = [
    "DOF_MAX", "Control", "Interval", "Param", "Range", "StrOptions", "Words", "parameters_doc", "parse_dof",
    "parse_layer_sizes", "positive", "whole_from",
]  # fmt: skip


@dataclass(frozen=True)
class Words:
    """Accepts these strings (scikit-learn's ``StrOptions``)."""

    values: frozenset


@dataclass(frozen=True)
class Range:
    """Accepts numbers of ``kind`` from ``low`` to ``high`` (None: no bound), ``closed`` as
    scikit-learn's ``Interval`` says ("left", "right", "both" or "neither")."""

    kind: type
    low: float | None
    high: float | None
    closed: str


def whole_from(low: int, *also) -> tuple:
    """Accepts whole numbers from ``low`` (and ``also``)."""
    return (Interval(Integral, low, None, closed="left"), *also)


def positive(*also) -> tuple:
    """Accepts numbers above 0 (and ``also``)."""
    return (Interval(Real, 0, None, closed="neither"), *also)


def StrOptions(values) -> Words:
    return Words(frozenset(values))


def Interval(kind, low, high, closed) -> Range:
    return Range(kind, low, high, closed)


@dataclass(frozen=True)
class Control:
    """How a user reaches a parameter outside Python: the app's control, a link, a flag.

    ``choices`` lists the values the app offers (with ``labels`` to show them); otherwise
    ``low``..``high`` bound a number. ``applies`` says when the setting matters given the
    others (the app greys it out otherwise); ``reset_on`` names settings whose change brings
    back this one's recommended value. ``bound`` ("n_features", "n_samples" or
    "image_shape") limits the choices to the data. ``widget`` picks the app's control;
    ``url_key`` None keeps it out of links. ``parser`` reads a value that is not one plain
    type (a tuple of layer sizes, a number or "learn") from text; ``text_of`` writes it.
    """

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


@dataclass(frozen=True)
class Param:
    """One parameter: its name, library default and accepted values (scikit-learn's
    constraints, with ``Words`` and ``Range`` standing for ``StrOptions`` and ``Interval``,
    so that reading settings loads no scikit-learn; empty for a run setting that is no
    estimator parameter), its docstring
    entry (``type`` and ``doc``), and how users reach it (``control``, None: Python only)."""

    name: str
    default: Any
    accepts: tuple
    type: str
    doc: str
    control: Control | None = None

    @property
    def estimator(self) -> bool:
        """Whether ``NCA`` takes it (the others are the app's and the CLI's run settings)."""
        return bool(self.accepts)


def parse_layer_sizes(text: str) -> tuple[int, ...]:
    """ "256,256" -> (256, 256): hidden layer widths, each a positive whole number."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise ValueError("must be positive whole numbers separated by commas, e.g. 256,256")
    return sizes


DOF_MAX = 1000.0  # the Student-t's largest degrees of freedom a link, flag or control takes


def parse_dof(text: str) -> float | str | None:
    """ "learn", a positive number, or 0 (None: the paper's d - 1)."""
    if text.strip().lower() == "learn":
        return "learn"
    value = float(text)
    if not (math.isfinite(value) and 0.0 <= value <= DOF_MAX):
        raise ValueError
    return value or None


def _default_text(value) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def parameters_doc(params: Iterable[Param], indent: str = "    ") -> str:
    """The numpydoc "Parameters" entries of ``params``, as the estimator's docstring shows
    them."""
    entries = []
    for p in params:
        body = textwrap.fill(p.doc, 88, initial_indent=indent * 2, subsequent_indent=indent * 2, break_on_hyphens=False)
        entries.append(f"{indent}{p.name} : {p.type}, default={_default_text(p.default)}\n{body}")
    return "\n".join(entries)
