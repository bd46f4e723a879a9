"""Saving and loading a fitted NCA as an .npz file of plain arrays (no pickle).

The file holds ``classes`` (numbers or unicode strings), ``metadata`` (a JSON string with
the estimator's parameters) and the map: ``components`` (float64, shape (n_components,
n_features)) for a linear or diagonal encoder, or ``layer0.weight``, ``layer0.bias``,
``layer1.weight``, ... for the MLP. Loading parses arrays with ``allow_pickle=False`` and
checks shapes, dtypes and finiteness before anything is used. Version 1 files (linear
only) still load.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .encoders import MLPEncoder
from .estimator import NCA

__all__ = ["FORMAT_VERSION", "ModelFileError", "load_model", "save_model"]

FORMAT_VERSION = 2
_READABLE_VERSIONS = (1, 2)
_SAVED_PARAMS = (
    "n_components",
    "objective",
    "encoder",
    "hidden_sizes",
    "kernel",
    "dof",
    "max_iter",
    "tol",
    "weight_decay",
)


class ModelFileError(ValueError):
    """A model file that is not a valid NCA Explorer model."""


def save_model(model: NCA, file) -> None:
    """Write a fitted NCA to ``file`` (a path or a binary file object)."""
    if not (hasattr(model, "components_") or hasattr(model, "encoder_")):
        raise ValueError("only a fitted NCA can be saved: call fit first")
    params = {name: getattr(model, name) for name in _SAVED_PARAMS}
    params["hidden_sizes"] = [int(h) for h in params["hidden_sizes"]]
    metadata = {
        "format": "nca-explorer-model",
        "version": FORMAT_VERSION,
        "params": params,
        "n_iter": int(model.n_iter_),
        "objective_curve": [float(v) for v in model.objective_curve_],
        "dof": getattr(model, "dof_", None),
    }
    classes = np.asarray(model.classes_)
    if classes.dtype.kind not in "iufU":
        classes = classes.astype(str)
    arrays = {"classes": classes, "metadata": np.array(json.dumps(metadata))}
    if hasattr(model, "components_"):
        arrays["components"] = np.asarray(model.components_, dtype=np.float64)
    else:
        for i, layer in enumerate(_linear_layers(model.encoder_)):
            arrays[f"layer{i}.weight"] = layer.weight.detach().cpu().numpy()
            arrays[f"layer{i}.bias"] = layer.bias.detach().cpu().numpy()
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
    missing = {"classes", "metadata"} - set(arrays)
    if missing:
        raise ModelFileError(f"model file lacks {sorted(missing)}")
    classes = arrays["classes"]
    if classes.ndim != 1 or classes.dtype.kind not in "iufU" or len(classes) < 1:
        raise ModelFileError("classes must be a 1-D array of numbers or strings")
    try:
        metadata = json.loads(str(arrays["metadata"]))
        params = metadata["params"]
        version = metadata["version"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelFileError(f"metadata is not valid JSON with 'params' and 'version': {exc}") from exc
    if metadata.get("format") != "nca-explorer-model" or version not in _READABLE_VERSIONS:
        raise ModelFileError(f"unsupported model format {metadata.get('format')!r} version {version!r}")
    if not isinstance(params, dict):
        raise ModelFileError("metadata 'params' must be a JSON object")
    model = NCA(**{name: params[name] for name in _SAVED_PARAMS if name in params})
    try:
        model._validate_params()
    except (ValueError, TypeError) as exc:
        raise ModelFileError(f"invalid parameters in model file: {exc}") from exc
    if model.encoder == "mlp":
        model.encoder_ = _mlp_from_arrays(arrays, model.hidden_sizes)
        n_features = model.encoder_.layers[0].in_features
        model.n_components_ = model.encoder_.layers[-1].out_features
    else:
        if "components" not in arrays:
            raise ModelFileError("model file lacks ['components']")
        components = _finite_float_array(arrays["components"], "components", ndim=2)
        model.components_ = components.astype(np.float64)
        n_features = components.shape[1]
        model.n_components_ = components.shape[0]
    dof = metadata.get("dof")
    if dof is not None and not (isinstance(dof, (int, float)) and np.isfinite(dof) and dof > 0):
        raise ModelFileError(f"dof must be a positive number or null, got {dof!r}")
    model.dof_ = dof
    model.classes_ = classes
    model.n_features_in_ = n_features
    model.n_iter_ = int(metadata.get("n_iter", 0))
    model.objective_curve_ = [float(v) for v in metadata.get("objective_curve", [])]
    return model


def _linear_layers(encoder: nn.Module) -> list[nn.Linear]:
    return [m for m in encoder.modules() if isinstance(m, nn.Linear)]


def _finite_float_array(array: np.ndarray, name: str, ndim: int) -> np.ndarray:
    if array.ndim != ndim or array.dtype.kind != "f" or 0 in array.shape:
        raise ModelFileError(
            f"{name} must be a non-empty {ndim}-D float array, got {array.dtype} {array.shape}"
        )
    if not np.isfinite(array).all():
        raise ModelFileError(f"{name} contain NaN or infinite values")
    return array


def _mlp_from_arrays(arrays: dict, hidden_sizes) -> MLPEncoder:
    """Rebuild the MLP, checking every layer's shape against hidden_sizes and its neighbours."""
    if not all(isinstance(h, int) and not isinstance(h, bool) and h > 0 for h in hidden_sizes):
        raise ModelFileError(f"hidden_sizes must be positive integers, got {hidden_sizes!r}")
    n_layers = len(hidden_sizes) + 1
    weights, biases = [], []
    for i in range(n_layers):
        if f"layer{i}.weight" not in arrays or f"layer{i}.bias" not in arrays:
            raise ModelFileError(f"model file lacks layer{i}.weight or layer{i}.bias")
        weights.append(_finite_float_array(arrays[f"layer{i}.weight"], f"layer{i}.weight", ndim=2))
        biases.append(_finite_float_array(arrays[f"layer{i}.bias"], f"layer{i}.bias", ndim=1))
    n_features = weights[0].shape[1]
    sizes = [n_features, *hidden_sizes, weights[-1].shape[0]]
    for i, (w, b) in enumerate(zip(weights, biases)):
        if w.shape != (sizes[i + 1], sizes[i]) or b.shape != (sizes[i + 1],):
            raise ModelFileError(
                f"layer{i} has weight {w.shape} and bias {b.shape}; expected {(sizes[i + 1], sizes[i])}"
            )
    dtype = torch.float64 if weights[0].dtype == np.float64 else torch.float32
    encoder = MLPEncoder(n_features, sizes[-1], hidden_sizes, dtype=dtype)
    with torch.no_grad():
        for layer, w, b in zip(_linear_layers(encoder), weights, biases):
            layer.weight.copy_(torch.from_numpy(np.ascontiguousarray(w)))
            layer.bias.copy_(torch.from_numpy(np.ascontiguousarray(b)))
    return encoder
