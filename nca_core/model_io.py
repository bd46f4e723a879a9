"""Saving and loading a fitted linear NCA as an .npz file of plain arrays (no pickle).

The file holds ``components`` (float64, shape (n_components, n_features)), ``classes``
(numbers or unicode strings) and ``metadata``, a JSON string with the estimator's
parameters. Loading parses arrays with ``allow_pickle=False`` and checks shapes, dtypes and
finiteness before anything is used.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np

from .estimator import NCA

__all__ = ["FORMAT_VERSION", "ModelFileError", "load_model", "save_model"]

FORMAT_VERSION = 1
_SAVED_PARAMS = ("n_components", "objective", "encoder", "max_iter", "tol", "weight_decay")


class ModelFileError(ValueError):
    """A model file that is not a valid NCA Explorer model."""


def save_model(model: NCA, file) -> None:
    """Write a fitted NCA to ``file`` (a path or a binary file object)."""
    if not hasattr(model, "components_"):
        raise ValueError("only a fitted NCA can be saved: call fit first")
    metadata = {
        "format": "nca-explorer-model",
        "version": FORMAT_VERSION,
        "params": {name: getattr(model, name) for name in _SAVED_PARAMS},
        "n_iter": int(model.n_iter_),
        "objective_curve": [float(v) for v in model.objective_curve_],
    }
    classes = np.asarray(model.classes_)
    if classes.dtype.kind not in "iufU":
        classes = classes.astype(str)
    arrays = {
        "components": np.asarray(model.components_, dtype=np.float64),
        "classes": classes,
        "metadata": np.array(json.dumps(metadata)),
    }
    if isinstance(file, (str, os.PathLike)):
        path = Path(file)
        partial = path.with_name(path.name + ".partial")
        with open(partial, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(partial, path)
    else:
        np.savez(file, **arrays)


def load_model(file) -> NCA:
    """Read a model written by ``save_model``; raises ModelFileError if it is not one."""
    if isinstance(file, (bytes, bytearray)):
        file = io.BytesIO(file)
    try:
        with np.load(file, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError) as exc:
        raise ModelFileError(f"not a readable .npz model file: {exc}") from exc
    missing = {"components", "classes", "metadata"} - set(arrays)
    if missing:
        raise ModelFileError(f"model file lacks {sorted(missing)}")
    components, classes = arrays["components"], arrays["classes"]
    if components.ndim != 2 or components.dtype.kind != "f" or 0 in components.shape:
        raise ModelFileError(
            f"components must be a non-empty 2-D float array, got {components.dtype} {components.shape}"
        )
    if not np.isfinite(components).all():
        raise ModelFileError("components contain NaN or infinite values")
    if classes.ndim != 1 or classes.dtype.kind not in "iufU" or len(classes) < 1:
        raise ModelFileError("classes must be a 1-D array of numbers or strings")
    try:
        metadata = json.loads(str(arrays["metadata"]))
        params = metadata["params"]
        version = metadata["version"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelFileError(f"metadata is not valid JSON with 'params' and 'version': {exc}") from exc
    if metadata.get("format") != "nca-explorer-model" or version != FORMAT_VERSION:
        raise ModelFileError(f"unsupported model format {metadata.get('format')!r} version {version!r}")
    model = NCA(**{name: params[name] for name in _SAVED_PARAMS if name in params})
    try:
        model._validate_params()
    except ValueError as exc:
        raise ModelFileError(f"invalid parameters in model file: {exc}") from exc
    model.components_ = components.astype(np.float64)
    model.classes_ = classes
    model.n_features_in_ = components.shape[1]
    model.n_iter_ = int(metadata.get("n_iter", 0))
    model.objective_curve_ = [float(v) for v in metadata.get("objective_curve", [])]
    return model
