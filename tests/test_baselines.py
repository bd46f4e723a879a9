import numpy as np
import pytest

from nca_core import fit_projection


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
