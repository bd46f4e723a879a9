"""NCA Explorer's library: Neighbourhood Components Analysis in PyTorch.

Never imports Streamlit; the app builds on this package, not the other way round.

The public names below are imported on first use (PEP 562): most of them load torch and
scikit-learn, seconds on a cold start, which a caller that only reads settings or a dataset
(``nca_core.config.settings``, ``nca_core.datasets``) should not wait for.
"""

from __future__ import annotations

import importlib

# Each public name and the module that defines it.
_HOMES = {
    "NCA": "estimator.nca",
    "ModelFileError": "estimator.model_io",
    "Projection": "estimator.baselines",
    "RandomShift": "training.augmentation",
    "Snapshot": "training.loop",
    "TrainingDiverged": "training.loop",
    "available_devices": "util.device",
    "fit_projection": "estimator.baselines",
    "knn_accuracy": "search.knn",
    "knn_predict": "search.knn",
    "leave_one_out_accuracy": "search.knn",
    "load_model": "estimator.model_io",
    "nca_objective": "objective.function",
    "resolve_device": "util.device",
    "save_model": "estimator.model_io",
    "stratified_subsample": "util.sampling",
}

__all__ = list(_HOMES)

__version__ = "0.1.0"


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
