import numpy as np
import pytest
import torch
from sklearn.neighbors import KNeighborsClassifier

from nca_core.search import knn
from nca_core.search.knn import knn_accuracy, knn_predict, leave_one_out_accuracy
from tests.search.neighbours import float64_neighbours, needs_faiss


@pytest.fixture
def blobs(rng):
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int) + 2 * (X[:, 1] > 0)
    return X, y


@pytest.mark.parametrize("k", [1, 3, 5])
def test_matches_scikit_learn_on_continuous_data(blobs, k):
    X, y = blobs
    queries = X[:100] + 0.01
    expected = KNeighborsClassifier(n_neighbors=k).fit(X, y).predict(queries)
    ours = knn_predict(queries, X, y, k, device="cpu")
    # scikit-learn breaks vote ties by the smallest label; count only rows without a tie
    assert np.mean(ours == expected) > 0.97


def test_tie_goes_to_the_class_with_the_nearest_member():
    refs = np.array([[1.0], [2.0], [3.0], [4.0]])
    labels = np.array(["b", "a", "b", "a"])
    assert knn_predict(np.array([[0.0]]), refs, labels, k=4, device="cpu")[0] == "b"
    assert knn_predict(np.array([[5.0]]), refs, labels, k=4, device="cpu")[0] == "a"


def test_blocks_do_not_change_the_answer(blobs):
    X, y = blobs
    whole = knn_predict(X, X, y, 5, device="cpu")
    tiny_blocks = knn_predict(X, X, y, 5, device="cpu", max_block_elements=900)
    np.testing.assert_array_equal(whole, tiny_blocks)


def test_leave_one_out_excludes_self():
    X = np.array([[0.0], [0.1], [10.0], [10.1], [5.0]])
    y = np.array([0, 0, 1, 1, 2])
    # without exclusion every point would vote for itself and score 1.0
    assert leave_one_out_accuracy(X, y, k=1, device="cpu") == pytest.approx(4 / 5)
    assert leave_one_out_accuracy(X, y, k=1, sample=[0, 4], device="cpu") == pytest.approx(0.5)


def test_accuracy_and_tensor_inputs(blobs):
    X, y = blobs
    Z = torch.tensor(X, dtype=torch.float32)
    acc = knn_accuracy(Z[:200], y[:200], Z[200:], y[200:], k=5, device="cpu")
    sk = KNeighborsClassifier(5).fit(X[:200], y[:200]).score(X[200:], y[200:])
    assert acc == pytest.approx(sk, abs=0.03)


def test_bounded_block_at_mnist_scale():
    """10,000 queries against 60,000 references, one block of at most 2^22 entries."""
    gen = torch.Generator().manual_seed(0)
    refs = torch.randn(60000, 8, generator=gen)
    labels = np.arange(60000) % 10
    queries = refs[:10000] + 1e-4
    predicted = knn_predict(queries, refs, labels, k=1, device="cpu", max_block_elements=1 << 22)
    np.testing.assert_array_equal(predicted, labels[:10000])


def test_bad_inputs_are_explained():
    with pytest.raises(ValueError, match="k must be at least 1"):
        knn_predict(np.zeros((2, 2)), np.zeros((3, 2)), [0, 1, 0], k=0, device="cpu")
    with pytest.raises(ValueError, match="equal widths"):
        knn_predict(np.zeros((2, 3)), np.zeros((3, 2)), [0, 1, 0], device="cpu")
    with pytest.raises(ValueError, match="3 references but 2 labels"):
        knn_predict(np.zeros((2, 2)), np.zeros((3, 2)), [0, 1], device="cpu")


@needs_faiss
@pytest.mark.parametrize("split", ["digits_split", "usps_split"])
def test_backends_predict_identically_on_real_data(request, split):
    X_train, y_train, X_test, _ = request.getfixturevalue(split)
    answers = [knn_predict(X_test, X_train, y_train, 5, backend=b, device="cpu") for b in ("faiss", "torch")]
    np.testing.assert_array_equal(*answers)
    sample = np.arange(0, len(y_train), 7)
    loo = [
        leave_one_out_accuracy(X_train, y_train, 5, sample=sample, backend=b, device="cpu")
        for b in ("faiss", "torch")
    ]
    assert loo[0] == loo[1]


def test_neighbour_lists_of_a_2d_embedding_are_the_nearest_others(blobs):
    X, _ = blobs
    Z = torch.tensor(X[:, :2], dtype=torch.float32)
    found = knn.neighbour_lists(Z, 6).numpy()
    own = np.arange(len(X))
    np.testing.assert_array_equal(found, float64_neighbours(Z.numpy(), Z.numpy(), 6, own))
