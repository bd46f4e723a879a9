"""Saving and loading a fitted NCA as an .npz file of plain arrays (no pickle).

The file holds ``classes`` (numbers or unicode strings), ``metadata`` (a JSON string with
the estimator's parameters), ``center`` (float64, shape (n_features,): what the model
subtracts from its inputs, ``NCA.center_``) and the map: ``components`` (float64, shape
(n_components, n_features)) for a linear or diagonal encoder, or ``layer0.weight``,
``layer0.bias``, ``layer1.weight``, ... for the MLP. Loading parses arrays with
``allow_pickle=False`` and checks shapes, dtypes and finiteness before anything is used;
a file that would unpack to more than ``MAX_MODEL_BYTES`` is refused before any of it is.
Version 2 files (no ``center``) and version 1 files (linear only) still load, subtracting
nothing.
"""

from __future__ import annotations

import io
import json
import lzma
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..config.rules import auto_kernel
from ..training.encoders import MLPEncoder
from ..util.files import atomic_file
from ..util.formatting import byte_size
from .nca import NCA

__all__ = ["FORMAT_VERSION", "MAX_MODEL_BYTES", "ModelFileError", "load_model", "save_model"]

FORMAT_VERSION = 3
# The most a model file may unpack to. The app's largest model, a network of two 1,000-unit
# layers from 5,000 inputs to 64, is 24 MB (float32), the paper's deep network
# (784-500-500-2000-30) 14 MB in float64: ten times the first leaves room, while a
# compressed file of a few kilobytes that unpacks to gigabytes is refused unread.
MAX_MODEL_BYTES = 256 * 2**20
_READABLE_VERSIONS = (1, 2, 3)
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
    """A model file that is not a valid NCA Explorer model.

    ``load_model`` raises it, saying what is wrong, for anything it refuses: no .npz
    archive, a missing or malformed member, a map of the wrong shape or not finite, or an
    archive that would unpack to more than ``MAX_MODEL_BYTES`` (256 MiB).

    Examples
    --------
    >>> from nca_core import ModelFileError, load_model
    >>> try:
    ...     load_model(b"not a model")
    ... except ModelFileError as error:
    ...     print(str(error).split(":")[0])
    not a readable .npz model file
    """


def save_model(model: NCA, file) -> None:
    """Write a fitted NCA to ``file`` as an .npz archive of plain arrays, for ``load_model``:
    the map (or the network's weights), ``center_``, the classes, the parameters, the
    iterations and the objective curve, as format version ``FORMAT_VERSION`` (3).

    Parameters
    ----------
    model : NCA
        A fitted estimator.
    file : str, os.PathLike or binary file object

    Raises
    ------
    ValueError
        ``model`` is not fitted.

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from nca_core import NCA, load_model, save_model
    >>> X, y = load_iris(return_X_y=True)
    >>> nca = NCA(n_components=2, random_state=0).fit(X, y)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     save_model(nca, os.path.join(folder, "iris.npz"))
    ...     loaded = load_model(os.path.join(folder, "iris.npz"))
    >>> bool(np.array_equal(loaded.transform(X), nca.transform(X)))
    True
    """
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
    arrays = {
        "classes": classes,
        "metadata": np.array(json.dumps(metadata)),
        "center": np.asarray(model.center_, dtype=np.float64),
    }
    if hasattr(model, "components_"):
        arrays["components"] = np.asarray(model.components_, dtype=np.float64)
    else:
        for i, layer in enumerate(_linear_layers(model.encoder_)):
            arrays[f"layer{i}.weight"] = layer.weight.detach().cpu().numpy()
            arrays[f"layer{i}.bias"] = layer.bias.detach().cpu().numpy()
    if isinstance(file, (str, os.PathLike)):
        with atomic_file(Path(file)) as handle:
            np.savez(handle, **arrays)
    else:
        np.savez(file, **arrays)


def load_model(file) -> NCA:
    """Read a model written by ``save_model`` (format versions 1 to 3).

    Nothing is unpickled and every shape, dtype and value is checked before it is used, so
    a file from anywhere can be opened.

    Parameters
    ----------
    file : str, os.PathLike, bytes or binary file object

    Returns
    -------
    NCA
        An estimator that transforms as the saved one did (``components_`` or
        ``encoder_``, ``center_``, ``classes_``, ``n_iter_``, ...); parameters the file
        does not hold take their defaults.

    Raises
    ------
    ModelFileError
        Not a valid model file; the message says what is wrong.

    Examples
    --------
    >>> import io
    >>> from sklearn.datasets import load_iris
    >>> from nca_core import NCA, load_model, save_model
    >>> X, y = load_iris(return_X_y=True)
    >>> save_model(NCA(n_components=2, random_state=0).fit(X, y), buffer := io.BytesIO())
    >>> loaded = load_model(buffer.getvalue())  # a path, a file object or bytes
    >>> loaded.transform(X[:3]).shape, loaded.classes_
    ((3, 2), array([0, 1, 2]))
    """
    arrays = _read_arrays(file)
    missing = {"classes", "metadata"} - set(arrays)
    if missing:
        raise ModelFileError(f"model file lacks {sorted(missing)}")
    classes = _checked_classes(arrays["classes"])
    metadata = _read_metadata(arrays["metadata"])
    model = _model_from_params(metadata["params"])
    if model.encoder == "mlp":
        model.encoder_ = _mlp_from_arrays(arrays, model.hidden_sizes)
        n_features = model.encoder_.layers[0].in_features
        model.n_components_ = model.encoder_.layers[-1].out_features
        expected = n_features if model.n_components is None else model.n_components
        if model.n_components_ != expected:
            raise ModelFileError(
                f"the network has {model.n_components_} outputs but n_components is {expected}"
            )
    else:
        model.components_ = _checked_components(arrays, model.encoder, model.n_components)
        model.n_components_, n_features = model.components_.shape
    model.center_ = _checked_center(arrays, metadata["version"], n_features)
    kernel = auto_kernel(model.encoder) if model.kernel == "auto" else model.kernel
    model.dof_ = _checked_dof(metadata.get("dof"), kernel)
    model.classes_ = classes
    model.n_features_in_ = n_features
    model.n_iter_ = _checked_n_iter(metadata.get("n_iter", 0))
    model.objective_curve_ = _checked_curve(metadata.get("objective_curve", []))
    return model


# What np.load can raise on bytes that are not a valid .npz: zipfile, zlib, bz2 and lzma
# errors, an encrypted or unsupported member (RuntimeError, NotImplementedError), a .npy
# header that does not parse (ValueError), or one whose shape claims more memory than the
# machine can even reserve (MemoryError).
_UNREADABLE = (
    MemoryError,
    OSError,
    ValueError,
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    NotImplementedError,
    RuntimeError,
)


def _read_arrays(file) -> dict[str, np.ndarray]:
    """Every member of an .npz as an array, read without pickle."""
    if isinstance(file, (bytes, bytearray)):
        file = io.BytesIO(file)
    try:
        loaded = np.load(file, allow_pickle=False)
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded as data:
                _check_unpacked_size(data)
                arrays = {name: data[name] for name in data.files}
    except _UNREADABLE as exc:
        raise ModelFileError(f"not a readable .npz model file: {exc}") from exc
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise ModelFileError("the file holds a single array (.npy); a model file is an .npz archive")
    for name, value in arrays.items():
        if not isinstance(value, np.ndarray):  # NpzFile returns raw bytes for a non-.npy member
            raise ModelFileError(f"member {name!r} is not a .npy array")
    return arrays


def _check_unpacked_size(npz: np.lib.npyio.NpzFile) -> None:
    """Refuse an archive whose members unpack to more than ``MAX_MODEL_BYTES`` (the sizes
    its directory declares: zipfile reads no member past its declared size)."""
    unpacked = sum(member.file_size for member in npz.zip.infolist())
    if unpacked > MAX_MODEL_BYTES:
        raise ModelFileError(
            f"the file unpacks to {byte_size(unpacked)}, more than a model file may ({byte_size(MAX_MODEL_BYTES)})"
        )


def _checked_classes(classes: np.ndarray) -> np.ndarray:
    if classes.ndim != 1 or classes.dtype.kind not in "iufU" or len(classes) < 1:
        raise ModelFileError("classes must be a 1-D array of numbers or strings")
    if len(np.unique(classes)) != len(classes):
        raise ModelFileError("classes must be distinct")
    return classes


def _read_metadata(array: np.ndarray) -> dict:
    """The metadata JSON object, with a readable format and version and a 'params' object."""
    if array.ndim != 0 or array.dtype.kind != "U":
        raise ModelFileError(f"metadata must be a single JSON string, got {array.dtype} {array.shape}")
    try:
        metadata = json.loads(str(array))
    except (ValueError, RecursionError) as exc:
        raise ModelFileError(f"metadata is not valid JSON: {exc}") from exc
    if not isinstance(metadata, dict) or "params" not in metadata or "version" not in metadata:
        raise ModelFileError("metadata must be a JSON object with 'params' and 'version'")
    version = metadata["version"]
    if (
        metadata.get("format") != "nca-explorer-model"
        or not _is_int(version)
        or version not in _READABLE_VERSIONS
    ):
        raise ModelFileError(f"unsupported model format {metadata.get('format')!r} version {version!r}")
    if not isinstance(metadata["params"], dict):
        raise ModelFileError("metadata 'params' must be a JSON object")
    return metadata


def _model_from_params(params: dict) -> NCA:
    """An unfitted NCA with the saved parameters, each checked as ``NCA.fit`` would."""
    saved = {name: params[name] for name in _SAVED_PARAMS if name in params}
    for name, value in saved.items():
        if isinstance(value, bool):  # JSON true is a Python int; no saved parameter is a flag
            raise ModelFileError(f"parameter {name!r} is true/false, which is not a valid value")
    model = NCA(**saved)
    try:
        model._validate_params()
    except (ValueError, TypeError) as exc:
        raise ModelFileError(f"invalid parameters in model file: {exc}") from exc
    if not all(_is_int(h) and h > 0 for h in model.hidden_sizes):
        raise ModelFileError(f"hidden_sizes must be positive integers, got {model.hidden_sizes!r}")
    return model


def _checked_components(arrays: dict, encoder: str, n_components: int | None) -> np.ndarray:
    """The map A of shape (n_components, n_features), as the encoder and n_components allow."""
    if "components" not in arrays:
        raise ModelFileError("model file lacks ['components']")
    components = _finite_float_array(arrays["components"], "components", ndim=2).astype(np.float64)
    rows, columns = components.shape
    if n_components is not None and rows != n_components:
        raise ModelFileError(f"components has {rows} rows but n_components is {n_components}")
    if rows > columns:
        raise ModelFileError(f"a linear map cannot have more rows ({rows}) than columns ({columns})")
    if encoder == "diagonal":
        if rows != columns:
            raise ModelFileError(f"a diagonal model needs a square components matrix, got {(rows, columns)}")
        if np.any(components != np.diag(np.diag(components))):
            raise ModelFileError("a diagonal model's components must be zero off the diagonal")
    return components


def _checked_center(arrays: dict, version: int, n_features: int) -> np.ndarray:
    """What the model subtracts from its inputs: one finite number per feature; nothing
    (zeros) in files from before version 3, which had no centre."""
    if version < 3:
        return np.zeros(n_features)
    if "center" not in arrays:
        raise ModelFileError("model file lacks ['center']")
    center = _finite_float_array(arrays["center"], "center", ndim=1)
    if center.shape != (n_features,):
        raise ModelFileError(f"center has {center.shape[0]} values but the map takes {n_features} features")
    return center.astype(np.float64)


def _checked_dof(dof, kernel: str) -> float | None:
    """The trained degrees of freedom: a positive number for Student-t, null for Gaussian."""
    if kernel == "gaussian":
        if dof is not None:
            raise ModelFileError(f"a gaussian kernel has no dof, got {dof!r}")
        return None
    if not (_is_real(dof) and np.isfinite(dof) and dof > 0):
        raise ModelFileError(f"dof must be a positive number, got {dof!r}")
    return float(dof)


def _checked_n_iter(n_iter) -> int:
    if not (_is_int(n_iter) and n_iter >= 0):
        raise ModelFileError(f"n_iter must be a non-negative integer, got {n_iter!r}")
    return n_iter


def _checked_curve(curve) -> list[float]:
    if not (isinstance(curve, list) and all(_is_real(v) for v in curve)):
        raise ModelFileError(f"objective_curve must be a list of numbers, got {curve!r:.80}")
    return [float(v) for v in curve]


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


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
