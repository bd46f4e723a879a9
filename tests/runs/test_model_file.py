"""The model file a run exports reproduces the run's picture: ``load_model(file).transform``
of raw rows is their embedding in the run's snapshots (the CSV download), for every dataset
the app offers, standardised or not, for a map and for a network."""

from __future__ import annotations

import io

import numpy as np
import pytest

from nca_core import datasets, load_model
from nca_core.datasets import Dataset
from nca_core.runs.comparison import training_subset
from nca_core.runs.run import Run, recommended_config

BUNDLED = ("rings", "wine", "digits")  # generated or shipped with scikit-learn
FILED = ("usps", "mnist", "fashion-mnist")  # real files: only where the data folder has them
SUBSET = 600  # training rows kept of a large set: a few seconds a run on two shared cores


def far_from_the_origin() -> Dataset:
    """Three classes in 6-D, each feature at a different scale and about 1e4 times its
    spread from the origin, as an uploaded table of raw measurements can be."""
    rng = np.random.default_rng(0)
    y = np.arange(240) % 3
    scale = np.array([1.0, 10.0, 0.1, 100.0, 1.0, 3.0])
    X = (rng.standard_normal((240, 6)) + y[:, None] * [1.0, 0.5, 0, 0, 0, 0]) * scale + 1e4 * scale
    X = X.astype(np.float32)
    return Dataset("uploaded", X[:180], y[:180], X[180:], y[180:], ("a", "b", "c"))


_LOADED: dict[str, Dataset] = {}


def _dataset(name: str, data_dir) -> Dataset:
    if name not in _LOADED:
        if name == "far":
            data = far_from_the_origin()
        else:
            data = datasets.load(name, data_dir=data_dir, download=False)
        _LOADED[name] = training_subset(data, SUBSET)
    return _LOADED[name]


def _config(data: Dataset, encoder: str, standardize: bool):
    config = recommended_config(data, encoder="mlp" if encoder == "mlp" else "linear")
    config = config.replace(standardize=standardize, max_iter=2, device="cpu")
    if encoder == "diagonal":
        config = config.replace(encoder="diagonal", n_components=data.n_features, init="identity")
    if encoder == "mlp":
        config = config.replace(hidden_sizes=(32, 32))
    return config


def _trained(data: Dataset, encoder: str, standardize: bool) -> tuple[Run, np.ndarray]:
    run = Run(_config(data, encoder, standardize), data)
    snapshots = list(run.stream(eval_every=None))
    return run, snapshots[-1].embedding


def assert_same_picture(run: Run, Z: np.ndarray, picture: np.ndarray) -> None:
    """Equal as two float32 computations of the run's map can be. A map's dot products of
    length D may each stray by (D + 2) units of float32 rounding of the sum of their terms'
    sizes (the standard bound, inputs' rounding included), the terms taken with the rows as
    large as they are, centred or not; a network's outputs, by a few units in the last
    place of the largest coordinate drawn."""
    assert Z.shape == picture.shape
    if run.is_linear:
        P = _prepared(run, run.data.X_train[run.display_index])
        sizes = np.abs(P) + np.abs(_prepared(run, run.data.X_train).mean(0))
        bound = (P.shape[1] + 2) * 2.0**-24 * (sizes @ np.abs(run.model.components_).T)
        assert np.all(np.abs(Z - picture) <= bound), np.abs(Z - picture).max()
    else:
        np.testing.assert_allclose(Z, picture, rtol=0, atol=2e-5 * float(np.abs(picture).max()))


SETTINGS = [("linear", True), ("linear", False), ("mlp", True), ("mlp", False)]


@pytest.mark.parametrize(("encoder", "standardize"), SETTINGS)
@pytest.mark.parametrize("name", [*BUNDLED, "far"])
def test_the_model_file_maps_raw_rows_to_the_runs_picture(name, encoder, standardize):
    data = _dataset(name, None)
    run, picture = _trained(data, encoder, standardize)
    model = load_model(io.BytesIO(run.model_file()))
    assert_same_picture(run, model.transform(data.X_train[run.display_index]), picture)
    assert_same_picture(run, run.transform(data.X_train[run.display_index]), picture)


@pytest.mark.parametrize(("encoder", "standardize"), SETTINGS)
@pytest.mark.parametrize("name", FILED)
def test_the_model_file_maps_raw_rows_to_the_runs_picture_on_real_files(name, encoder, standardize, data_dir):
    data = _dataset(name, data_dir)
    run, picture = _trained(data, encoder, standardize)
    model = load_model(io.BytesIO(run.model_file()))
    assert_same_picture(run, model.transform(data.X_train[run.display_index]), picture)


@pytest.mark.parametrize("standardize", [True, False])
def test_a_diagonal_map_exports_its_picture_too(standardize):
    data = _dataset("wine", None)
    run, picture = _trained(data, "diagonal", standardize)
    model = load_model(io.BytesIO(run.model_file()))
    assert_same_picture(run, model.transform(data.X_train[run.display_index]), picture)


@pytest.mark.parametrize(("encoder", "standardize"), SETTINGS)
def test_the_model_file_keeps_float32_digits_of_data_far_from_the_origin(encoder, standardize):
    """Rows about 1e4 spreads from the origin: the model maps float32 rows as it maps them
    in float64, and both as the run's pipeline does in float64 (centre, scale, map)."""
    data = _dataset("far", None)
    run, _ = _trained(data, encoder, standardize)
    model = load_model(io.BytesIO(run.model_file()))
    X32 = data.X_test
    Z32, Z64 = model.transform(X32), model.transform(X32.astype(np.float64))
    assert Z32.dtype == np.float32 and Z64.dtype == np.float64
    spread = float(Z64.std(0).max())
    np.testing.assert_allclose(Z32, Z64, rtol=0, atol=1e-5 * max(spread, np.abs(Z64).max()))
    if encoder == "linear":  # the run's pipeline in float64: standardise if asked, centre, map
        reference = (_prepared(run, X32) - run.model.center_) @ run.model.components_.T
        np.testing.assert_allclose(Z64, reference, rtol=0, atol=1e-5 * np.abs(reference).max())
        np.testing.assert_allclose(Z32, reference, rtol=0, atol=1e-5 * np.abs(reference).max())


def _prepared(run: Run, X: np.ndarray) -> np.ndarray:
    """Rows as the run's map receives them, computed in float64."""
    X = X.astype(np.float64)
    return X if run.scaler is None else (X - run.scaler.mean_) / run.scaler.scale_


def test_a_run_on_a_linear_map_draws_a_centred_picture():
    """As PCA's and LDA's: every training row's embedding averages to the origin."""
    for name, standardize in (("wine", True), ("wine", False), ("digits", False)):
        data = _dataset(name, None)
        run = Run(_config(data, "linear", standardize).replace(display_size=len(data.y_train)), data)
        picture = list(run.stream(eval_every=None))[-1].embedding
        assert np.abs(picture.mean(0)).max() < 1e-5 * np.abs(picture).max(), name


def test_the_downloaded_csv_and_model_agree_on_wine_with_its_defaults():
    """The two downloads of a run: the model maps the CSV's training rows (by their position
    in the training set) to the CSV's coordinates, each written as the float32 it is."""
    data = datasets.load("wine")
    run = Run(recommended_config(data).replace(max_iter=3, device="cpu"), data)
    assert run.config.standardize
    last = list(run.stream(eval_every=None))[-1]
    table = np.genfromtxt(io.BytesIO(run.embedding_csv(last)), delimiter=",", skip_header=1, usecols=(0, 3, 4))
    rows, csv = table[: len(data.y_train), 0].astype(np.int64), table[: len(data.y_train), 1:]
    Z = load_model(io.BytesIO(run.model_file())).transform(data.X_train[rows])
    np.testing.assert_allclose(Z, csv, rtol=2e-6, atol=1e-6 * np.abs(csv).max())
