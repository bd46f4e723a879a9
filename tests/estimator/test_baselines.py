import numpy as np
import pytest

from nca_core import fit_projection
from nca_core.estimator.baselines import discriminant_directions


def test_pca_and_lda_project_to_the_requested_size(wine):
    X, y = wine
    for method in ("pca", "lda"):
        projection = fit_projection(method, X, y, 2)
        assert projection.transform(X).shape == (len(X), 2)
        assert projection.note == ""


def test_lda_says_when_it_is_limited_by_the_classes(wine):
    X, y = wine
    projection = fit_projection("lda", X, y, 5)
    assert projection.n_components == 2
    assert projection.note == "LDA is limited to n_classes - 1 = 2 dimensions; it gives 2, not 5."


def test_lda_separates_wine_better_than_pca(wine):
    from sklearn.neighbors import KNeighborsClassifier

    X, y = wine
    scores = {}
    for method in ("pca", "lda"):
        Z = fit_projection(method, X, y, 2).transform(X)
        scores[method] = KNeighborsClassifier(5).fit(Z, y).score(Z, y)
    assert scores["lda"] >= scores["pca"]
    assert scores["lda"] > 0.95


def test_unknown_method():
    with pytest.raises(ValueError, match="method must be one of"):
        fit_projection("tsne", np.zeros((4, 2)), [0, 0, 1, 1], 2)


@pytest.mark.parametrize("name", ["wine", "digits"])
def test_discriminant_directions_match_scikit_learns_lda(name, request):
    """The in-house LDA (the estimator's start) gives scikit-learn's scalings, float32 data too."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    X, y = request.getfixturevalue(name)
    reference = LinearDiscriminantAnalysis().fit(X.astype(np.float64), y).scalings_.T
    for dtype in (np.float64, np.float32):
        directions = discriminant_directions(X.astype(dtype), y)
        assert directions.shape == (len(np.unique(y)) - 1, X.shape[1])
        scale = np.abs(reference).max()
        rtol = 1e-10 if dtype == np.float64 else 1e-4
        np.testing.assert_allclose(np.abs(directions), np.abs(reference), atol=rtol * scale)


def test_discriminant_directions_whiten_the_within_class_spread(wine):
    X, y = wine
    Z = X @ discriminant_directions(X, y).T
    within = np.concatenate([Z[y == c] - Z[y == c].mean(0) for c in np.unique(y)])
    np.testing.assert_allclose(within.T @ within / len(X), np.eye(2), atol=1e-10)


def test_classes_with_equal_means_have_no_discriminant_direction():
    X = np.array([[0.0, 1.0], [0.0, -1.0], [0.0, 1.0], [0.0, -1.0]])
    assert discriminant_directions(X, [0, 0, 1, 1]).shape == (0, 2)


def test_discriminant_directions_keep_their_digits_far_from_the_origin(wine):
    """float32 data shifted by 1e4: the directions of the unshifted float64 data."""
    X, y = wine
    reference = discriminant_directions(X, y)
    shifted = discriminant_directions((X + 1e4).astype(np.float32), y)
    np.testing.assert_allclose(np.abs(shifted), np.abs(reference), atol=2e-3 * np.abs(reference).max())
