"""Baselines and the shared k-NN evaluation, on the bundled datasets (no download)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from nca_core import knn_accuracy, leave_one_out_accuracy, stratified_subsample
from nca_core.datasets import load
from nca_core.runs.comparison import (
    MethodResult,
    class_mix,
    evaluate,
    fit_baseline,
    model_cache_dir,
    quick_nca,
    subset_rows,
    training_subset,
)
from nca_core.runs.run import recommended_config


@pytest.fixture(scope="module")
def datasets():
    return {name: load(name) for name in ("wine", "rings", "digits")}


def _raw(X):
    return X


def _one_nn_reference(Z_ref, y_ref, Z_query, leave_one_out=False):
    """1-NN labels by brute force in float64 numpy, independent of nca_core.search.knn."""
    Z_ref, Z_query = np.asarray(Z_ref, np.float64), np.asarray(Z_query, np.float64)
    dist = ((Z_query[:, None, :] - Z_ref[None, :, :]) ** 2).sum(-1)
    if leave_one_out:
        np.fill_diagonal(dist, np.inf)
    return np.asarray(y_ref)[dist.argmin(1)]


@pytest.mark.parametrize(("name", "asked", "cap"), [("wine", 5, 2), ("digits", 12, 9), ("rings", 3, 3)])
def test_lda_is_capped_at_n_classes_minus_one_with_a_note(datasets, name, asked, cap):
    data = datasets[name]
    transform, seconds, note = fit_baseline("lda", data, asked, standardize=True)
    assert transform(data.X_test).shape == (len(data.X_test), min(asked, cap))
    assert seconds > 0
    if asked > cap:
        assert note == f"LDA is limited to n_classes - 1 = {cap} dimensions; it gives {cap}, not {asked}."
    else:
        assert note == ""


def test_lda_within_the_cap_has_no_note_and_separates_wine(datasets):
    data = datasets["wine"]
    transform, _, note = fit_baseline("lda", data, 2, standardize=True)
    assert note == ""
    result = evaluate("LDA", transform, data, 5, None, 0.0)
    assert result.dimensions == 2 and result.test_accuracy >= 0.9


@pytest.mark.parametrize("standardize", [False, True])
def test_pca_matches_an_svd_of_the_training_set(datasets, standardize):
    data = datasets["wine"]
    transform, _, note = fit_baseline("pca", data, 2, standardize=standardize)
    X_train, X_test = data.X_train.astype(np.float64), data.X_test.astype(np.float64)
    if standardize:  # the scaler is fitted on the training set only
        mean, std = X_train.mean(0), X_train.std(0)
        X_train, X_test = (X_train - mean) / std, (X_test - mean) / std
    centre = X_train.mean(0)
    _, _, Vt = np.linalg.svd(X_train - centre, full_matrices=False)
    expected = (X_test - centre) @ Vt[:2].T
    Z = transform(data.X_test)
    signs = np.sign((Z * expected).sum(0))  # principal directions are defined up to sign
    np.testing.assert_allclose(Z * signs, expected, rtol=1e-6, atol=1e-6)
    assert note == ""


def test_unknown_baseline_is_refused(datasets):
    with pytest.raises(ValueError, match=r"method must be one of \('pca', 'lda'\), got 'tsne'"):
        fit_baseline("tsne", datasets["wine"], 2, standardize=False)


@pytest.mark.parametrize("name", ["wine", "rings", "digits"])
def test_evaluate_scores_with_the_knn_functions(datasets, name):
    data = datasets[name]
    result = evaluate("raw", _raw, data, 5, None, 1.5, loo_sample=len(data.y_train))
    Z_train = data.X_train.astype(np.float32)
    assert result.train_accuracy == leave_one_out_accuracy(Z_train, data.y_train, 5, device="cpu")
    assert result.test_accuracy == knn_accuracy(
        Z_train, data.y_train, data.X_test, data.y_test, 5, device="cpu"
    )
    assert result.dimensions == data.n_features
    assert (result.name, result.fit_seconds, result.note, result.embedding) == ("raw", 1.5, "", None)


def test_evaluate_agrees_with_a_brute_force_one_nn(datasets):
    data = datasets["wine"]
    scaler = StandardScaler().fit(data.X_train)
    result = evaluate("scaled", scaler.transform, data, 1, None, 0.0, loo_sample=len(data.y_train))
    Z_train, Z_test = scaler.transform(data.X_train), scaler.transform(data.X_test)
    loo = _one_nn_reference(Z_train, data.y_train, Z_train, leave_one_out=True)
    test = _one_nn_reference(Z_train, data.y_train, Z_test)
    assert result.train_accuracy == pytest.approx(np.mean(loo == data.y_train))
    assert result.test_accuracy == pytest.approx(np.mean(test == data.y_test))
    assert result.test_accuracy > 0.9  # standardised wine is easy for 1-NN


def test_leave_one_out_uses_a_seeded_stratified_sample(datasets):
    data = datasets["digits"]
    result = evaluate("raw", _raw, data, 5, None, 0.0, loo_sample=200)
    sample = stratified_subsample(data.y_train, 200, seed=0)
    Z_train = data.X_train.astype(np.float32)
    expected = leave_one_out_accuracy(Z_train, data.y_train, 5, sample=sample, device="cpu")
    assert result.train_accuracy == expected
    assert result.train_accuracy * 200 == pytest.approx(round(result.train_accuracy * 200))


def test_embedding_is_the_display_rows_in_float32(datasets):
    data = datasets["rings"]
    transform, seconds, note = fit_baseline("pca", data, 2, standardize=False)
    display = np.array([0, 5, 17, 400])
    result = evaluate("PCA", transform, data, 5, display, seconds, note)
    assert result.embedding.dtype == np.float32 and result.embedding.shape == (4, 2)
    np.testing.assert_array_equal(result.embedding, transform(data.X_train).astype(np.float32)[display])
    assert result.fit_seconds == seconds and result.dimensions == 2


def test_without_a_test_set_there_is_no_test_accuracy(datasets):
    data = datasets["wine"]
    no_test = dataclasses.replace(data, X_test=data.X_test[:0], y_test=data.y_test[:0])
    result = evaluate("raw", _raw, no_test, 5, None, 0.0)
    assert result.test_accuracy is None
    assert 0.0 < result.train_accuracy <= 1.0


def test_method_result_is_frozen_with_defaults():
    result = MethodResult("raw", None, 0.9, None, 0.1)
    assert (result.note, result.dimensions) == ("", 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.train_accuracy = 1.0


# --- the quick NCA model ----------------------------------------------------------------


def test_quick_nca_trains_on_a_stratified_subset_and_loads_it_from_the_cache(datasets, tmp_path):
    data = datasets["digits"]
    epochs = []
    first = quick_nca(
        data, 8, False, max_train=300, cache_dir=tmp_path, progress=lambda e, n: epochs.append((e, n))
    )
    assert (first.n_train, first.from_cache) == (300, False)
    assert epochs[-1] == (first.epochs, first.epochs) == (recommended_config(data, 8).max_iter,) * 2
    saved = list(tmp_path.glob("quick-digits-*.npz"))
    assert len(saved) == 1
    again = quick_nca(
        data, 8, False, max_train=300, cache_dir=tmp_path, progress=lambda e, n: epochs.append(e)
    )
    assert again.from_cache and len(epochs) == first.epochs + 1  # no training the second time
    np.testing.assert_array_equal(again.model.transform(data.X_test), first.model.transform(data.X_test))
    assert (
        1
        - knn_accuracy(
            first.model.transform(data.X_train), data.y_train, first.model.transform(data.X_test), data.y_test
        )
        < 0.1
    )


def test_quick_nca_folds_standardisation_into_a_map_of_raw_inputs(datasets, tmp_path):
    """Wine's features differ in scale by 1000x: the map must standardise them itself."""
    data = datasets["wine"]
    quick = quick_nca(data, 2, True, cache_dir=tmp_path)
    scale = StandardScaler().fit(data.X_train).scale_
    norms = np.linalg.norm(quick.model.components_ * scale, axis=0)  # weight per standardised feature
    assert norms.max() / norms.min() < 1e3 < scale.max() / scale.min()
    Z_train, Z_test = quick.model.transform(data.X_train), quick.model.transform(data.X_test)
    assert knn_accuracy(Z_train, data.y_train, Z_test, data.y_test) > 0.9


@pytest.mark.parametrize(("name", "standardize"), [("wine", True), ("wine", False), ("digits", False)])
def test_the_nca_panel_is_centred_as_pca_and_lda_are(datasets, tmp_path, name, standardize):
    """Compare draws NCA's quick model beside PCA and LDA, which centre on the training
    mean: NCA's training rows average to the origin too."""
    data = training_subset(datasets[name], 400)
    nca = quick_nca(data, 2, standardize, cache_dir=tmp_path).model.transform
    pca, lda = (fit_baseline(method, data, 2, standardize)[0] for method in ("pca", "lda"))
    for method, transform in (("NCA", nca), ("PCA", pca), ("LDA", lda)):
        Z = transform(data.X_train)
        assert np.abs(Z.mean(0)).max() < 1e-4 * np.abs(Z).max(), method


def test_an_unreadable_cached_model_is_trained_again(datasets, tmp_path):
    data = datasets["wine"]
    quick_nca(data, 2, True, cache_dir=tmp_path)
    (saved,) = tmp_path.glob("quick-wine-*.npz")
    saved.write_bytes(b"not a model")
    again = quick_nca(data, 2, True, cache_dir=tmp_path)
    assert not again.from_cache and saved.read_bytes() != b"not a model"


def test_models_are_cached_beside_the_decoded_data(monkeypatch, tmp_path):
    monkeypatch.setenv("NCA_CACHE_DIR", str(tmp_path))
    assert model_cache_dir() == tmp_path / "models"
    monkeypatch.delenv("NCA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg" / "nca-explorer" / "models"


def test_class_mix_counts_the_chosen_points_per_class_most_first():
    y = np.array([0, 1, 1, 2, 2, 2, 1, 0])
    assert class_mix(y, [1, 2, 3, 6, 7], ["a", "b", "c"]) == [("b", 3), ("a", 1), ("c", 1)]
    assert class_mix(y, np.array([], dtype=int), ["a", "b", "c"]) == []


def test_training_subset_is_stratified_and_keeps_the_test_set(datasets):
    data = datasets["digits"]
    subset = training_subset(data, 300)
    assert len(subset.y_train) == 300 and subset.X_train.shape == (300, data.n_features)
    assert subset.X_test is data.X_test and subset.name == data.name
    share = np.bincount(subset.y_train, minlength=10) / 300
    assert np.abs(share - np.bincount(data.y_train) / len(data.y_train)).max() < 0.01
    assert training_subset(data, len(data.y_train)) is data
    rows = subset_rows(data, 300)  # which rows of the whole set the subset holds, in its order
    np.testing.assert_array_equal(subset.X_train, data.X_train[rows])
    np.testing.assert_array_equal(subset_rows(data, len(data.y_train)), np.arange(len(data.y_train)))


def test_quick_nca_keeps_its_fit_time_with_the_cached_model(datasets, tmp_path):
    data = datasets["wine"]
    first = quick_nca(data, 2, True, cache_dir=tmp_path)
    assert first.fit_seconds > 0
    again = quick_nca(data, 2, True, cache_dir=tmp_path)
    assert again.from_cache and again.fit_seconds == first.fit_seconds


def test_quick_nca_fits_deep_nca_on_request(datasets, tmp_path):
    data = datasets["rings"]
    deep = quick_nca(data, 2, False, encoder="mlp", cache_dir=tmp_path)
    assert not hasattr(deep.model, "components_") and deep.model.kernel == "student-t"
    assert deep.epochs == recommended_config(data, encoder="mlp").max_iter
    Z_train, Z_test = deep.model.transform(data.X_train), deep.model.transform(data.X_test)
    assert knn_accuracy(Z_train, data.y_train, Z_test, data.y_test) > 0.9
    assert len(list(tmp_path.glob("quick-rings-*.npz"))) == 1


def test_a_model_cached_in_an_older_format_is_trained_again(datasets, tmp_path, monkeypatch):
    """Version 2 files dropped the run's centring: one left in the cache is not reused."""
    from nca_core.runs import comparison

    data = training_subset(datasets["wine"], 60)
    with monkeypatch.context() as patched:
        patched.setattr(comparison, "FORMAT_VERSION", 2)
        quick_nca(data, 2, True, cache_dir=tmp_path)
    assert not quick_nca(data, 2, True, cache_dir=tmp_path).from_cache
    assert quick_nca(data, 2, True, cache_dir=tmp_path).from_cache
    assert len(list(tmp_path.glob("quick-wine-*.npz"))) == 2


def test_visitors_asking_for_the_same_quick_model_at_once_train_it_once(datasets, tmp_path):
    """A second call made while the first trains waits for it and loads its file: a class
    opening Compare together trains each model once, not once each."""
    import threading

    data, results = datasets["wine"], {}

    def second_visitor():
        results["second"] = quick_nca(data, 2, True, cache_dir=tmp_path, progress=lambda e, n: trained.append(e))

    trained, visitor = [], threading.Thread(target=second_visitor)

    def first_progress(epoch, epochs):
        if epoch == 0:  # the first call is training: the second asks now
            visitor.start()
            visitor.join(2.0)

    first = quick_nca(data, 2, True, cache_dir=tmp_path, progress=first_progress)
    visitor.join(30)
    assert not first.from_cache and results["second"].from_cache and trained == []
    np.testing.assert_array_equal(results["second"].model.components_, first.model.components_)


def test_an_uploads_subset_keeps_each_rows_place_in_the_file():
    """Compare's subset of a large upload names the file's rows it holds, as the whole set
    does: a row's number must follow it into the subset."""
    from nca_core.datasets import from_csv

    rng = np.random.default_rng(0)
    lines = ["label,a,b"] + [f"{i % 3},{rng.normal():.4f},{rng.normal():.4f}" for i in range(900)]
    data = from_csv("\n".join(lines).encode(), "label")
    subset = training_subset(data, 300)
    rows = subset_rows(data, 300)
    np.testing.assert_array_equal(subset.rows_train, data.rows_train[rows])
    np.testing.assert_array_equal(subset.rows_test, data.rows_test)
