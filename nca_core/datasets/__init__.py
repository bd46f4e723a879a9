"""Datasets: the one place that knows where data comes from.

``load(name)`` returns a :class:`Dataset` for a registered name; ``available()`` says which
are ready without a download; ``from_csv`` turns a user's CSV file into a Dataset, after
``read_csv_table``, ``guess_label_column`` and ``columns_to_leave_out`` have offered a form
its choices. Files
live in the data directory: the ``data_dir`` argument, else ``$NCA_DATA_DIR``, else a
per-user cache folder. Every file is checked against a pinned SHA-256 of its content, and
every decoded array against a pinned SHA-256 of its bytes, when decoded and when read back
from the cache of decoded arrays.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..util.sampling import stratified_subsample
from ._cache import cached_arrays
from ._csv import from_csv, image_shape_for
from ._csv_columns import LabelGuess, columns_to_leave_out, guess_label_column
from ._csv_read import MISSING_IN_WORDS, read_csv_table
from ._deformed import VERSION as DEFORMED_VERSION
from ._deformed import copied_images, deformed_copies
from ._download import ProgressCallback, download
from ._errors import DatasetError
from ._formats import read_idx_set, read_usps, read_usps_part
from ._pins import check_decoded, decoded_mismatch
from ._registry import REGISTRY, DatasetSpec, RemoteFile
from ._synthetic import make_rings, make_stretched_blobs

__all__ = [
    "DEFORMED",
    "MISSING_IN_WORDS",
    "REGISTRY",
    "Availability",
    "Dataset",
    "DatasetError",
    "LabelGuess",
    "available",
    "columns_to_leave_out",
    "data_directory",
    "from_csv",
    "guess_label_column",
    "image_shape_for",
    "load",
    "make_stretched_blobs",
    "read_csv_table",
    "stratified_subsample",
]

_CACHE_VERSION = 1


@dataclasses.dataclass(frozen=True, eq=False)
class Dataset:
    """A labelled dataset with a fixed train/test split.

    Attributes
    ----------
    name : str
    X_train : ndarray of shape (n_train, n_features), float32 (images flattened)
    y_train : ndarray of shape (n_train,), int64 class indices into ``classes``
    X_test : ndarray of shape (n_test, n_features)
    y_test : ndarray of shape (n_test,)
    classes : tuple of str, display names
    image_shape : (height, width) or None for tabular data
    description : str, one paragraph
    citation : str
    notes : tuple of str, things the user should know (e.g. dropped columns)
    feature_names : tuple of str or None, one name per column of X (None: unnamed)
    rows_train : ndarray of shape (n_train,), int64, or None
        For a set read from a file (``from_csv``): the file's data row each training row
        came from (0-based, the header excluded: row r is on line r + 2), increasing. Rows
        left out for a missing cell leave gaps. None where the split itself is the only
        order there is (registered sets): a row's place is its position in its split.
    rows_test : ndarray of shape (n_test,), int64, or None
        As ``rows_train``, for the test rows.
    """

    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    classes: tuple[str, ...]
    image_shape: tuple[int, int] | None = None
    description: str = ""
    citation: str = ""
    notes: tuple[str, ...] = ()
    feature_names: tuple[str, ...] | None = None
    rows_train: np.ndarray | None = None
    rows_test: np.ndarray | None = None

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    @property
    def feature_labels(self) -> tuple[str, ...]:
        """A name for every column: ``feature_names``, else the pixel's row and column for
        an image, else x1, x2, ..."""
        if self.feature_names is not None:
            return self.feature_names
        if self.image_shape is not None:
            width = self.image_shape[1]
            return tuple(f"pixel ({i // width + 1}, {i % width + 1})" for i in range(self.n_features))
        return tuple(f"x{i + 1}" for i in range(self.n_features))

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    def subset_train(self, index: np.ndarray) -> Dataset:
        """This dataset with only the training rows at ``index`` (their places in the file
        with them); the test set stays whole."""
        rows = None if self.rows_train is None else self.rows_train[index]
        return dataclasses.replace(
            self, X_train=self.X_train[index], y_train=self.y_train[index], rows_train=rows
        )


class Availability(NamedTuple):
    name: str
    ready: bool


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "nca-explorer"


def data_directory(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: ``data_dir``, else $NCA_DATA_DIR, else a per-user cache folder."""
    if data_dir is not None:
        return Path(data_dir)
    if os.environ.get("NCA_DATA_DIR"):
        return Path(os.environ["NCA_DATA_DIR"])
    return _user_cache() / "data"


def _decoded_cache_dir() -> Path:
    """Decoded arrays live in $NCA_CACHE_DIR or the user cache, never in the data folder,
    which may be shared or read-only."""
    return Path(os.environ.get("NCA_CACHE_DIR") or _user_cache() / "decoded")


def available(data_dir=None) -> list[Availability]:
    """Every registered dataset with whether it loads without a download."""
    root = data_directory(data_dir)
    return [
        Availability(spec.name, all((root / spec.name / f.name).is_file() for f in spec.files))
        for spec in REGISTRY.values()
    ]


def load(
    name: str,
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
    progress: ProgressCallback | None = None,
    *,
    mirrors: Sequence[str] | None = None,
    n_samples: int = 1000,
    noise: float = 0.15,
    seed: int = 0,
    n_train: int = 1_000_000,
) -> Dataset:
    """Load a registered dataset by name.

    Parameters
    ----------
    name : str
        One of ``REGISTRY``: "rings", "wine", "digits", "usps", "mnist", "fashion-mnist";
        or "mnist-deformed": MNIST's 60,000 training images followed by n_train - 60,000
        deformed copies generated from ``seed`` (``_deformed``), with MNIST's test set.
    data_dir : path, optional
        Where files live (see the module docstring).
    download : bool
        Fetch missing files from the mirrors; False raises DatasetError instead.
    progress : callable, optional
        ``progress(file_name, bytes_done, bytes_total_or_None)`` while downloading.
    mirrors : list of str, optional
        Base URLs to use instead of the registered mirrors.
    n_samples, noise, seed
        For "rings": total points, radial jitter and generator seed. ``seed`` also seeds
        the 70/30 split of "wine" and "digits" and the deformations of "mnist-deformed".
    n_train : int
        For "mnist-deformed": training images, at least 60,000.
    """
    if name == DEFORMED:
        mnist = load("mnist", data_dir, download, progress, mirrors=mirrors)
        return _deformed_mnist(mnist, n_train, seed, data_directory(data_dir) / "mnist")
    spec = REGISTRY.get(name)
    if spec is None:
        raise DatasetError(f"unknown dataset {name!r}; choose one of {', '.join(REGISTRY)}")
    if name == "rings":
        X, y = make_rings(n_samples=n_samples, noise=noise, seed=seed)
        return _split(spec, X, y, seed)
    if name in ("wine", "digits"):
        from sklearn import datasets as sk

        X, y = (sk.load_wine if name == "wine" else sk.load_digits)(return_X_y=True)
        return _split(spec, X.astype(np.float32), y.astype(np.int64), seed)

    return _from_files(spec, data_directory(data_dir) / name, download, progress, mirrors)


DEFORMED = "mnist-deformed"


def _deformed_mnist(mnist: Dataset, n_train: int, seed: int, folder: Path) -> Dataset:
    """MNIST's training set grown to ``n_train`` images by deformed copies, generated once
    per size, seed and MNIST folder and kept as bytes in the decoded-array cache."""
    n = len(mnist.X_train)
    if not isinstance(n_train, int | np.integer) or n_train < n:
        raise DatasetError(f"mnist-deformed needs n_train of at least {n} (MNIST's training set), got {n_train!r}")
    pixels = np.rint(mnist.X_train * 255).astype(np.uint8).reshape(n, *mnist.image_shape)
    count = n_train - n

    def generate() -> dict[str, np.ndarray]:
        return {"copies": deformed_copies(pixels, count, seed)[0]}

    def check(arrays: dict[str, np.ndarray]) -> None:
        if arrays["copies"].shape != (count, mnist.n_features) or arrays["copies"].dtype != np.uint8:
            raise DatasetError("a cached mnist-deformed entry has the wrong shape")

    key = f"{DEFORMED}-v{DEFORMED_VERSION}-{n_train}-seed{seed}-{_folder_key(folder)}"
    mnist_files = [folder / f.name for f in REGISTRY["mnist"].files]
    copies = (cached_arrays(_decoded_cache_dir(), key, mnist_files, generate, check) if count else generate())["copies"]
    sources = copied_images(count, n)
    X = np.empty((n_train, mnist.n_features), dtype=np.float32)
    X[:n] = mnist.X_train
    np.divide(copies, np.float32(255), out=X[n:], dtype=np.float32)
    return Dataset(
        DEFORMED, X, np.concatenate([mnist.y_train, mnist.y_train[sources]]), mnist.X_test, mnist.y_test,
        mnist.classes, mnist.image_shape,
        f"MNIST's {n:,} training digits and {n_train - n:,} copies of them, each moved by a small "
        f"random affine map and an elastic distortion (seed {seed}), as infiMNIST does; MNIST's test set.",
        mnist.citation,
    )  # fmt: skip


def _folder_key(folder: Path) -> str:
    """A short name for a data folder in cache keys: entries from two folders never mix."""
    return hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:12]


def _from_files(spec: DatasetSpec, folder: Path, allow_download, progress, mirrors) -> Dataset:
    """A downloadable set: its files checked against their pins, decoded once and cached."""
    paths = [_ensure_file(spec, f, folder, allow_download, progress, mirrors) for f in spec.files]
    key = f"{spec.name}-v{_CACHE_VERSION}-{_folder_key(folder)}"
    reader = read_usps if spec.name == "usps" else read_idx_set

    def decode() -> dict[str, np.ndarray]:
        contents = [_verify(spec, remote, path) for remote, path in zip(spec.files, paths)]
        arrays = reader(spec, contents, [str(path) for path in paths])
        check_decoded(spec, arrays)
        return arrays

    arrays = cached_arrays(_decoded_cache_dir(), key, paths, decode, check=lambda a: check_decoded(spec, a))
    return Dataset(
        spec.name,
        _as_float(arrays["X_train"]),
        arrays["y_train"],
        _as_float(arrays["X_test"]),
        arrays["y_test"],
        spec.classes,
        spec.image_shape,
        spec.description,
        spec.citation,
    )


def _as_float(X: np.ndarray) -> np.ndarray:
    """Images stored as bytes become float32 in [0, 1], one flattened row per image."""
    if X.dtype != np.uint8:
        return X
    X = X.reshape(len(X), -1).astype(np.float32)
    return np.divide(X, np.float32(255), out=X)  # in place: one new array, not two


def _split(spec: DatasetSpec, X: np.ndarray, y: np.ndarray, seed: int) -> Dataset:
    """Seeded, stratified 70/30 split."""
    test = stratified_subsample(y, int(round(0.3 * len(y))), seed)
    is_test = np.zeros(len(y), dtype=bool)
    is_test[test] = True
    return Dataset(
        spec.name,
        X[~is_test],
        y[~is_test],
        X[is_test],
        y[is_test],
        spec.classes,
        spec.image_shape,
        spec.description,
        spec.citation,
        feature_names=spec.feature_names,
    )


def _ensure_file(spec, remote: RemoteFile, folder: Path, allow_download, progress, mirrors) -> Path:
    path = folder / remote.name
    if path.is_file():
        return path
    if not allow_download:
        raise DatasetError(
            f"{path} is missing. Put {', '.join(f.name for f in spec.files)} in {folder} "
            f"(or set NCA_DATA_DIR to a folder that has {spec.name}/ with them), or connect "
            f"to the internet and load again with downloads allowed."
        )

    def verify(candidate: Path) -> None:  # raises DatasetError saying why a copy is refused
        _verify(spec, remote, candidate)

    download(remote.name, path, tuple(mirrors) if mirrors is not None else spec.mirrors, verify, progress)
    return path


def _decompressed(path: Path) -> bytes:
    try:
        if path.suffix == ".gz":
            return gzip.decompress(path.read_bytes())
        if path.suffix == ".bz2":
            return bz2.decompress(path.read_bytes())
        return path.read_bytes()
    except (OSError, EOFError, ValueError) as exc:
        raise DatasetError(
            f"{path} cannot be decompressed ({exc}): it is truncated or corrupt. Delete it "
            f"and load again to download a fresh copy."
        ) from exc


def _verify(spec: DatasetSpec, remote: RemoteFile, path: Path) -> bytes:
    """The decompressed content of ``path`` if it matches its pins, else DatasetError.

    A USPS copy from another mirror may write the same numbers differently ("-1" or
    "-1.0"), so a USPS file whose content hash differs passes when every array decoded
    from it (pixels and labels) matches its pin.
    """
    content = _decompressed(path)
    digest = hashlib.sha256(content).hexdigest()
    if digest == remote.sha256:
        return content
    reason = ""
    if spec.name == "usps":
        part = ("train", "test")[spec.files.index(remote)]
        mismatch = decoded_mismatch(spec, read_usps_part(spec, part, content, str(path)))
        if mismatch is None:
            return content
        reason = f" ({mismatch})"
    raise DatasetError(
        f"{path}: SHA-256 of its content is {digest}, expected {remote.sha256}{reason}. The "
        f"file is corrupt, truncated or a different version; delete it and load again."
    )
