"""Baselines and the shared k-NN evaluation, on the bundled datasets (no download)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from nca_core import knn_accuracy, leave_one_out_accuracy, stratified_subsample
from nca_core.comparison import MethodResult, SearchCost, evaluate, fit_baseline, knn_search_cost
from nca_core.datasets import load


@pytest.fixture(scope="module")
def datasets():
    return {name: load(name) for name in ("wine", "rings", "digits")}


def _raw(X):
    return X


def _one_nn_reference(Z_ref, y_ref, Z_query, leave_one_out=False):
    """1-NN labels by brute force in float64 numpy, independent of nca_core.knn."""
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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_components", [None, 2])
def test_knn_search_cost_reports_error_and_float32_index_size(datasets, dtype, n_components):
    data = datasets["digits"]
    Z_train, Z_test = data.X_train.astype(dtype), data.X_test.astype(dtype)
    if n_components is not None:
        transform, _, _ = fit_baseline("pca", data, n_components, standardize=False)
        Z_train, Z_test = transform(data.X_train).astype(dtype), transform(data.X_test).astype(dtype)
    cost = knn_search_cost("m", Z_train, data.y_train, Z_test, data.y_test, k=5, repeats=2)
    assert isinstance(cost, SearchCost) and cost.name == "m"
    expected = 1.0 - knn_accuracy(
        Z_train.astype(np.float32), data.y_train, Z_test.astype(np.float32), data.y_test, 5, device="cpu"
    )
    assert cost.error == pytest.approx(expected, abs=1e-12)
    d = Z_train.shape[1]
    assert cost.dimensions == d
    assert cost.stored_bytes == len(Z_train) * d * 4 == np.zeros_like(Z_train, dtype=np.float32).nbytes
    assert cost.query_seconds > 0


def test_raw_digits_are_more_accurate_but_larger_than_two_pca_dimensions(datasets):
    data = datasets["digits"]
    transform, _, _ = fit_baseline("pca", data, 2, standardize=False)
    raw = knn_search_cost("raw", data.X_train, data.y_train, data.X_test, data.y_test)
    pca = knn_search_cost("pca", transform(data.X_train), data.y_train, transform(data.X_test), data.y_test)
    assert raw.error < 0.05 < pca.error
    assert raw.stored_bytes == 32 * pca.stored_bytes
