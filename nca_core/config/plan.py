"""One plan per fit: every parameter decided for the data, once.

``make_plan`` takes a request (the estimator's parameters, or the app's and the CLI's run
settings under the same names; any left out take the library's defaults, ``params.PARAMS``)
and the data's shape, and returns a frozen ``Plan``: every "auto" and None replaced by what
it means here (``rules.resolve``), the device and the precision chosen, and a ``Note`` for
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
from .rules import DataShape, Note, auto_dtype, dense_suits, resolve

__all__ = ["DEFAULTS", "Plan", "make_plan"]

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
