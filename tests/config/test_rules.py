"""Rules between settings: the app adjusts and explains where the estimator refuses."""

import numpy as np
import pytest

from nca_core import NCA, datasets
from nca_core.config.plan import resolve
from nca_core.config.rules import (
    DEFAULT_CANDIDATES,
    NEAREST_MIN_SAMPLES,
    DataShape,
    default_learning_rate,
    image_shift,
)

WINE = DataShape(n_samples=125, n_features=13, n_classes=3)
BASE = {
    "n_components": 2, "encoder": "linear", "init": "auto", "optimizer": "adam", "neighbors": "auto",
    "learning_rate": None, "batch_size": 64, "max_iter": None, "kernel": "gaussian", "objective": "f", "n_candidates": None,
}  # fmt: skip

IMPOSSIBLE = [
    ({"encoder": "mlp", "init": np.zeros((2, 13))}, "init", None),
    ({"n_components": 20}, "n_components", 13),
    ({"encoder": "diagonal", "n_components": 5}, "n_components", 13),
    ({"encoder": "diagonal", "n_components": None, "init": "pca"}, "init", "identity"),
    ({"encoder": "mlp", "init": "lda"}, "init", "random"),
    ({"optimizer": "lbfgs", "neighbors": "memory"}, "neighbors", "all"),
    ({"neighbors": "nearest", "objective": "mcml"}, "neighbors", "all"),
    ({"n_candidates": 10, "objective": "mcml"}, "neighbors", "all"),
    ({"augment": lambda X, generator: X}, "augment", None),
    ({"shift": 1}, "shift", 0),  # wine's rows are not images
    ({"image_shape": (4, 4)}, "image_shape", None),  # 16 pixels for 13 features
    ({"image_shape": (13, 1), "shift": 1}, "augment", None),  # a map whose neighbours come from all points
    ({"encoder": "mlp", "image_shape": (13, 1), "shift": 1, "augment": lambda X, generator: X}, "shift", 0),
]


@pytest.mark.parametrize("change, setting, adjusted", IMPOSSIBLE)
def test_an_impossible_request_is_adjusted_for_the_app_and_refused_by_the_estimator(
    change, setting, adjusted
):
    settings, notes = resolve({**BASE, **change}, WINE)
    (note,) = [n for n in notes if n.level == "error"]
    assert note.setting == setting and note.text
    if adjusted is not None:
        assert settings[setting] == adjusted
    wine = datasets.load("wine")
    model = NCA(**{**BASE, **change, "max_iter": 1}, device="cpu")
    with pytest.raises(ValueError) as refused:
        model.fit(wine.X_train, wine.y_train)
    assert str(refused.value) == note.error
    assert not hasattr(model, "classes_")  # a refused fit leaves nothing half-fitted


def test_auto_values_become_concrete():
    settings, notes = resolve(BASE, WINE)
    assert notes == []
    assert settings["init"] == "lda" and settings["neighbors"] == "all"
    assert settings["learning_rate"] == default_learning_rate("adam") == 0.01
    deep, _ = resolve({**BASE, "encoder": "mlp"}, WINE)
    assert deep["init"] == "random" and deep["neighbors"] == "memory" and deep["learning_rate"] == 0.003
    big = DataShape(NEAREST_MIN_SAMPLES + 1, 784, 10)
    nearest, _ = resolve(BASE, big)
    assert nearest["neighbors"] == "nearest" and nearest["n_candidates"] == DEFAULT_CANDIDATES
    assert resolve({**BASE, "encoder": "mlp"}, big)[0]["neighbors"] == "memory"
    assert resolve({**BASE, "neighbors": "all"}, big)[0]["n_candidates"] is None
    assert resolve({**BASE, "n_candidates": 8}, WINE)[0]["neighbors"] == "nearest"
    full, _ = resolve({**BASE, "n_components": None, "optimizer": "lbfgs", "n_candidates": 5}, WINE)
    assert full["init"] == "identity" and full["n_components"] == 13 and full["n_candidates"] is None


def test_a_picture_of_a_large_set_trains_on_nearest_points_for_more_epochs():
    """MNIST at d = 2: an exact epoch costs ~3x a nearest one, and 15 exact epochs reach
    the k-NN accuracy of 40 nearest ones; a wide map keeps exact epochs below
    NEAREST_MIN_SAMPLES."""
    mnist = DataShape(60000, 784, 10)
    picture, _ = resolve({**BASE, "n_components": 2}, mnist)
    assert picture["neighbors"] == "nearest" and picture["max_iter"] == 40
    wide, _ = resolve({**BASE, "n_components": 32}, mnist)
    assert wide["neighbors"] == "all" and wide["max_iter"] == 5
    exact, _ = resolve({**BASE, "n_components": 2, "neighbors": "all"}, mnist)
    assert exact["max_iter"] == 15
    usps, _ = resolve({**BASE, "n_components": 2}, DataShape(7291, 256, 10))
    assert usps["neighbors"] == "all"


def test_auto_objective_is_f_for_a_map_and_for_a_network_depends_on_d_and_size():
    """f for linear and diagonal maps, as the paper and scikit-learn. A network gets MCML for
    a wide map of a set up to MNIST's size, and g for a picture, a large set or nearest
    points (which serve only f and g). A named objective stays."""
    auto = {**BASE, "objective": "auto"}
    chosen = {
        encoder: resolve({**auto, "encoder": encoder, "n_components": None}, WINE)[0]["objective"]
        for encoder in ("linear", "diagonal", "mlp")
    }
    assert chosen == {"linear": "f", "diagonal": "f", "mlp": "mcml"}
    network = {**auto, "encoder": "mlp"}
    usps, mnist = DataShape(7291, 256, 10), DataShape(60000, 784, 10)
    assert resolve({**network, "n_components": 30}, usps)[0]["objective"] == "mcml"
    assert resolve({**network, "n_components": 3}, usps)[0]["objective"] == "g"
    assert resolve({**network, "n_components": 30}, mnist)[0]["objective"] == "g"
    nearest, notes = resolve({**network, "n_components": 30, "neighbors": "nearest"}, usps)
    assert nearest["objective"] == "g" and notes == []
    assert resolve({**BASE, "encoder": "mlp"}, WINE)[0]["objective"] == "f"


def test_a_network_trains_longer_in_smaller_batches_than_a_map_on_a_large_set():
    """A network on MNIST: 12 epochs of batches of 256; on USPS 40 of 256; a map on MNIST at
    d = 30 keeps 5 epochs of 1,024."""
    network = {**BASE, "encoder": "mlp", "n_components": 30, "batch_size": None}
    mnist, usps = DataShape(60000, 784, 10), DataShape(7291, 256, 10)
    large = resolve(network, mnist)[0]
    assert (large["max_iter"], large["batch_size"], large["learning_rate"]) == (12, 256, 0.003)
    assert (resolve(network, usps)[0]["max_iter"], resolve(network, usps)[0]["batch_size"]) == (40, 256)
    linear = resolve({**network, "encoder": "linear"}, mnist)[0]
    assert (linear["max_iter"], linear["batch_size"]) == (5, 1024)


def test_a_network_decays_its_step_size_and_a_map_keeps_it_unless_told():
    chosen = {
        encoder: resolve({**BASE, "encoder": encoder, "n_components": None}, WINE)[0][
            "learning_rate_schedule"
        ]
        for encoder in ("linear", "diagonal", "mlp")
    }
    assert chosen == {"linear": "constant", "diagonal": "constant", "mlp": "cosine"}
    told = {**BASE, "encoder": "mlp", "learning_rate_schedule": "constant"}
    assert resolve(told, WINE)[0]["learning_rate_schedule"] == "constant"


def test_images_shift_by_a_pixel_per_sixteen_and_tabular_rows_not_at_all():
    assert [image_shift(shape) for shape in (None, (8, 8), (16, 16), (28, 28), (40, 20))] == [0, 0, 1, 1, 1]


def test_auto_kernel_is_the_student_t_for_a_network_and_the_gaussian_for_a_map():
    kernels = {
        encoder: resolve({**BASE, "encoder": encoder, "kernel": "auto", "n_components": 13}, WINE)[0]["kernel"]
        for encoder in ("linear", "diagonal", "mlp")
    }
    assert kernels == {"linear": "gaussian", "diagonal": "gaussian", "mlp": "student-t"}
    assert resolve({**BASE, "encoder": "mlp", "kernel": "gaussian"}, WINE)[0]["kernel"] == "gaussian"


def test_auto_shift_moves_a_networks_images_only():
    """One pixel per 16 of the shorter side for a network's images; nothing for a map,
    for rows that are not images, or where anchors are not encoded alone."""
    usps = DataShape(n_samples=7291, n_features=256, n_classes=10)
    network = {**BASE, "encoder": "mlp", "shift": "auto", "image_shape": (16, 16)}
    assert resolve(network, usps) == ({**resolve(network, usps)[0], "shift": 1}, [])
    for change in ({"encoder": "linear"}, {"image_shape": None}, {"optimizer": "lbfgs"}):
        settings, notes = resolve({**network, **change}, usps)
        assert settings["shift"] == 0 and notes == []


def test_augmentation_stays_only_where_anchors_are_encoded_on_their_own():
    """A memory bank or batch-only neighbours keep it; neighbours recomputed from clean
    inputs (all points, candidates, L-BFGS) drop it with a note."""

    def shift(X, generator):
        return X

    kept = {
        change: resolve({**BASE, **dict(change), "augment": shift}, WINE)
        for change in [(("encoder", "mlp"),), (("neighbors", "batch"),), (("neighbors", "memory"),)]
    }
    assert all(settings["augment"] is shift and notes == [] for settings, notes in kept.values())
    for change in [{}, {"optimizer": "lbfgs"}, {"neighbors": "memory", "n_candidates": 5}]:
        settings, notes = resolve({**BASE, **change, "augment": shift}, WINE)
        assert settings["augment"] is None and "augment" in [n.setting for n in notes]


def test_the_lda_cap_is_a_warning_in_the_estimator_and_a_note_in_the_app():
    settings, notes = resolve({**BASE, "n_components": 5, "init": "lda"}, WINE)
    assert [n.level for n in notes] == ["warning"] and settings["init"] == "lda"
    wine = datasets.load("wine")
    with pytest.warns(UserWarning, match="at most n_classes - 1 = 2 directions; the other 3 rows"):
        model = NCA(5, init="lda", max_iter=1, device="cpu").fit(wine.X_train, wine.y_train)
    assert model.components_.shape == (5, 13)


def test_a_batch_larger_than_the_data_is_capped_quietly():
    settings, notes = resolve({**BASE, "batch_size": 4096}, WINE)
    assert settings["batch_size"] == 125 and [n.level for n in notes] == ["info"]
    X = np.random.default_rng(0).normal(size=(40, 3))
    y = np.arange(40) % 2
    NCA(2, batch_size=4096, max_iter=1, device="cpu").fit(X, y)  # no error, no warning


def test_a_diagonal_map_starts_from_the_identity_by_default():
    """'auto' would pick LDA here (d = 2 <= n_classes - 1), which a diagonal map cannot use."""
    settings, notes = resolve({**BASE, "encoder": "diagonal", "n_components": None}, DataShape(75, 2, 3))
    assert settings["init"] == "identity" and notes == []


def test_the_encoder_names_the_rules_offer_are_the_ones_make_encoder_builds():
    """Declared in rules (read without torch) and, until encoders.py takes them from there,
    in encoders too: the two must agree."""
    from nca_core.config import rules
    from nca_core.objective import kernels, weights
    from nca_core.training import encoders

    assert encoders.ENCODERS == rules.ENCODERS
    assert kernels.KERNELS is rules.KERNELS and weights.OBJECTIVES is rules.OBJECTIVES


def test_only_a_network_is_warned_of_inputs_far_from_unit_scale():
    from nca_core.config.rules import NETWORK_MAX_FEATURE_STD, input_scale_note

    assert input_scale_note("mlp", NETWORK_MAX_FEATURE_STD) is None
    note = input_scale_note("mlp", 26.1)
    assert note.level == "warning" and "26.1" in note.error and "StandardScaler" in note.error
    assert input_scale_note("linear", 1e6) is None
    assert input_scale_note("mlp", float("nan")) is None  # no finite spread: nothing to say
    assert input_scale_note("mlp", None) is None  # not measured


def test_resolve_notes_a_network_on_inputs_far_from_unit_scale_where_the_spread_was_measured():
    from nca_core.config.rules import SCALE_CHECK_ROWS, input_scale_note

    X = np.random.default_rng(0).normal(size=(1500, 300)) * np.r_[np.ones(299), 40.0]  # wide last column
    measured = DataShape.of(X, 3, "mlp")
    assert measured.largest_feature_std == pytest.approx(X[:, -1].std())  # found past the first 256 columns
    for not_measured in (DataShape.of(X, 3, "linear"), DataShape.of(X, 3, None)):
        assert not_measured.largest_feature_std is None and not_measured.n_samples == 1500
    rows = 2 * SCALE_CHECK_ROWS - 1  # evenly spaced rows, at most SCALE_CHECK_ROWS of them
    tall = np.zeros((rows, 2))
    tall[::2, 1] = 1.0  # every other row: all rows spread 0.5, every second row (the sample) 0
    assert DataShape.of(tall, 2, "mlp").largest_feature_std == 0.0
    wide = {**BASE, "encoder": "mlp", "n_components": 2}
    note = input_scale_note("mlp", measured.largest_feature_std)
    assert note in resolve(wide, measured)[1]
    for unsaid in (resolve(wide, DataShape.of(X, 3)), resolve({**wide, "encoder": "linear"}, measured)):
        assert not any(said.text == note.text for said in unsaid[1])
