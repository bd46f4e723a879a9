"""scikit-learn's own estimator checks, run on CPU in float64 and float32, linear and deep."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from nca_core import NCA


@parametrize_with_checks(
    [
        NCA(device="cpu", max_iter=20),
        NCA(n_components=2, device="cpu", optimizer="adam", max_iter=5, dtype="float64"),
        NCA(
            n_components=2,
            device="cpu",
            encoder="mlp",
            hidden_sizes=(8,),
            kernel="student-t",
            objective="mcml",
            optimizer="adam",
            max_iter=3,
        ),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
