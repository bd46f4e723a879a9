"""NCA beside PCA, LDA and raw inputs: one evaluation for every projection.

Every method is scored the same way: k-NN accuracy leave-one-out on the training set (on a
stratified sample of at most ``loo_sample`` points, voting among all of them) and on the
test set, plus the time its fit took.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.preprocessing import StandardScaler

from ..datasets import Dataset
from ..estimator.baselines import fit_projection
from ..estimator.model_io import FORMAT_VERSION, ModelFileError, load_model
from ..estimator.nca import NCA
from ..search.knn import knn_accuracy, leave_one_out_accuracy
from ..util.files import FileLocks, cache_dir, write_atomic
from ..util.sampling import stratified_subsample
from .run import Run, recommended_config

__all__ = [
    "QUICK_TRAIN_POINTS",
    "MethodResult",
    "QuickModel",
    "class_mix",
    "evaluate",
    "fit_baseline",
    "input_transform",
    "model_cache_dir",
    "quick_nca",
    "training_subset",
]


@dataclass(frozen=True)
class MethodResult:
    """How one projection did.

    Attributes
    ----------
    name : str
    embedding : ndarray of shape (n_display, d) or None (raw inputs are not drawn)
    train_accuracy : float, leave-one-out k-NN accuracy on training points
    test_accuracy : float or None, k-NN accuracy on the test set (None without one)
    fit_seconds : float
    note : str, e.g. why LDA gave fewer dimensions
    dimensions : int
    """

    name: str
    embedding: np.ndarray | None
    train_accuracy: float
    test_accuracy: float | None
    fit_seconds: float
    note: str = ""
    dimensions: int = 0


def input_transform(data: Dataset, standardize: bool) -> Callable[[np.ndarray], np.ndarray]:
    """What PCA, LDA and k-NN on the raw inputs do to an input matrix first: nothing, or
    standardise it by ``data``'s training mean and spread (NCA standardises in its fit)."""
    if not standardize:
        return lambda X: X
    return StandardScaler().fit(data.X_train).transform


def fit_baseline(
    method: str, data: Dataset, n_components: int, standardize: bool
) -> tuple[Callable, float, str]:
    """Fit PCA or LDA on the training set; returns (transform, seconds, note)."""
    start = time.perf_counter()
    prepare = input_transform(data, standardize)
    projection = fit_projection(method, prepare(data.X_train), data.y_train, n_components)
    seconds = time.perf_counter() - start
    return (lambda X: projection.transform(prepare(X))), seconds, projection.note


def evaluate(
    name: str,
    transform: Callable[[np.ndarray], np.ndarray],
    data: Dataset,
    k: int,
    display_index: np.ndarray | None,
    fit_seconds: float,
    note: str = "",
    loo_sample: int = 5000,
) -> MethodResult:
    """Score ``transform`` (raw input -> embedding) with k-NN on ``data``."""
    Z_train = np.asarray(transform(data.X_train), dtype=np.float32)
    sample = stratified_subsample(data.y_train, loo_sample, seed=0)
    train_accuracy = leave_one_out_accuracy(Z_train, data.y_train, k, sample=sample, device="cpu")
    test_accuracy = None
    if len(data.y_test):
        Z_test = np.asarray(transform(data.X_test), dtype=np.float32)
        test_accuracy = knn_accuracy(Z_train, data.y_train, Z_test, data.y_test, k, device="cpu")
    embedding = None if display_index is None else Z_train[display_index]
    return MethodResult(name, embedding, train_accuracy, test_accuracy, fit_seconds, note, Z_train.shape[1])


def class_mix(y: np.ndarray, rows: np.ndarray, classes: Sequence[str]) -> list[tuple[str, int]]:
    """How many of the points ``rows`` (indices into ``y``) each class has, most first;
    classes with none are left out."""
    counts = np.bincount(np.asarray(y)[np.asarray(rows, dtype=np.int64)], minlength=len(classes))
    order = np.argsort(-counts, kind="stable")
    return [(str(classes[c]), int(counts[c])) for c in order if counts[c]]


QUICK_TRAIN_POINTS = 5000


@dataclass(frozen=True)
class QuickModel:
    """An NCA fitted in seconds for a comparison, acting on raw inputs.

    Attributes
    ----------
    model : NCA, with any standardisation folded into its map
    n_train : int, training points it learnt from (a stratified subset)
    epochs : int
    from_cache : bool, whether it was read from a file an earlier call wrote
    fit_seconds : float or None, training time (None for a cached model saved without it)
    """

    model: NCA
    n_train: int
    epochs: int
    from_cache: bool
    fit_seconds: float | None = None


def model_cache_dir() -> Path:
    """Where fitted models are kept between runs (``util.files.cache_dir``)."""
    return cache_dir("models")


def _fingerprint(config, subset: Dataset) -> str:
    """Names a cached model by its settings, its data and the model format: a file that an
    older format wrote (before version 3, a map that dropped its run's centring) is trained
    again, not reused."""
    digest = hashlib.sha256(json.dumps(config.as_dict(), sort_keys=True).encode())
    digest.update(f"model format {FORMAT_VERSION}".encode())
    for array in (subset.X_train, subset.y_train):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:16]


def subset_rows(data: Dataset, max_train: int = QUICK_TRAIN_POINTS) -> np.ndarray:
    """The training rows ``training_subset`` keeps: a stratified sample (seed 0) of at most
    ``max_train``, or every row."""
    n = len(data.y_train)
    return np.arange(n) if n <= max_train else stratified_subsample(data.y_train, max_train, seed=0)


def training_subset(data: Dataset, max_train: int = QUICK_TRAIN_POINTS) -> Dataset:
    """``data`` with at most ``max_train`` training points (``subset_rows``); the test set
    is kept whole. ``data`` itself when it is no larger."""
    if len(data.y_train) <= max_train:
        return data
    keep = subset_rows(data, max_train)
    return data.subset_train(keep)


def quick_nca(
    data: Dataset,
    n_components: int,
    standardize: bool,
    *,
    encoder: str = "linear",
    max_train: int = QUICK_TRAIN_POINTS,
    cache_dir: str | os.PathLike | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> QuickModel:
    """NCA with the dataset's recommended settings, trained on a stratified subset.

    At most ``max_train`` training points (``training_subset``) keep the fit to seconds on
    MNIST; ``encoder="mlp"`` fits deep NCA (``runs.run.recommended_config``). With
    ``cache_dir`` the model is saved there (``save_model``'s .npz, no pickle, with its fit
    time beside it in .json), named by the settings and the subset's bytes, and later calls
    load it instead of training; calls for the same file at once take turns, so it is
    trained once. ``progress(epoch, epochs)`` is called after each epoch.
    """
    config = recommended_config(data, n_components=n_components, encoder=encoder)
    config = config.replace(standardize=standardize)
    subset = training_subset(data, max_train)
    if cache_dir is None:
        return _trained(config, subset, progress, None)
    path = Path(cache_dir) / f"quick-{data.name}-{_fingerprint(config, subset)}.npz"
    with _MODEL_LOCKS(path):  # visitors asking at once: one trains, the others load its file
        try:
            model = load_model(path)
            return QuickModel(model, len(subset.y_train), config.max_iter, True, _saved_seconds(path))
        except (OSError, ModelFileError):
            pass  # absent or unreadable: train again
        return _trained(config, subset, progress, path)


_MODEL_LOCKS = FileLocks()


def _trained(config, subset: Dataset, progress, path: Path | None) -> QuickModel:
    """``quick_nca``'s fit of ``subset``, saved at ``path`` (with its fit time) if given."""
    run = Run(config, subset)
    for snap in run.stream(eval_every=None):
        if progress is not None:
            progress(snap.epoch, config.max_iter)
    model_bytes = run.model_file()
    if path is not None:
        _write_to_cache(path, model_bytes)
        _write_to_cache(path.with_suffix(".json"), json.dumps({"fit_seconds": run.fit_seconds}).encode())
    model = load_model(io.BytesIO(model_bytes))
    return QuickModel(model, len(subset.y_train), config.max_iter, False, run.fit_seconds)


def _saved_seconds(model_path: Path) -> float | None:
    """The fit time written beside a cached model, if it is there and readable."""
    try:
        return float(json.loads(model_path.with_suffix(".json").read_text())["fit_seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _write_to_cache(path: Path, content: bytes) -> None:
    """``util.files.write_atomic``; a cache that cannot be written is skipped."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, content)
    except OSError:
        pass  # only costs the next call a fit
