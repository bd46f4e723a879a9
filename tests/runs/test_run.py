import io

import numpy as np
import pytest

from nca_core import NCA, datasets, load_model
from nca_core.config.rules import DataShape
from nca_core.runs.run import Run, RunConfig, blow_up_note, recommended_config
from tests.conftest import real_data_dir


@pytest.mark.parametrize("name", ["rings", "wine", "digits"])
def test_recommended_settings_converge(name):
    data = datasets.load(name)
    config = recommended_config(data).replace(device="cpu")
    run = Run(config, data)
    snaps = list(run.stream())
    assert len(snaps) == config.max_iter + 1
    first, last = snaps[0], snaps[-1]
    assert last.objective > first.objective
    # digits in 2-D: scikit-learn's NCA reaches about 74% test accuracy on this split
    assert last.test_accuracy >= {"rings": 0.95, "wine": 0.9, "digits": 0.72}[name]


def _resolved(config: RunConfig, data) -> tuple[RunConfig, list[str]]:
    """What a run makes of ``config`` on ``data``: its settings and notes."""
    run = Run(config, data)
    return run.config, run.notes


def test_exports(tmp_path):
    data = datasets.load("wine")
    run = Run(recommended_config(data).replace(max_iter=3, device="cpu"), data)
    snaps = list(run.stream())
    text = run.embedding_csv(snaps[-1]).decode().splitlines()
    assert text[0] == "row,split,label,z1,z2" and len(text) == len(data.y_train) + len(data.y_test) + 1
    model = load_model(io.BytesIO(run.model_file()))
    # the scaler is folded in: raw inputs through the saved map give the trained distances
    Z_saved = model.transform(data.X_train.astype(np.float64))
    Z_trained = run.scaler.transform(data.X_train) @ run.model.components_.T
    d_saved = np.linalg.norm(Z_saved[0] - Z_saved[1:], axis=1)
    d_trained = np.linalg.norm(Z_trained[0] - Z_trained[1:], axis=1)
    np.testing.assert_allclose(d_saved, d_trained, rtol=1e-5)


def test_a_stop_request_ends_a_run_part_way_through_an_epoch_keeping_its_map():
    """A stop probe reaches through the estimator: the run ends at the next minibatch
    after the request, without scoring again, and the model is the map last shown."""
    data = datasets.load("rings")
    run = Run(recommended_config(data).replace(max_iter=20, batch_size=64, device="cpu"), data)
    seen = []
    seen.extend(run.stream(should_stop=lambda: len(seen) >= 2))  # once the start and epoch 1 are seen
    assert [(s.epoch, s.fraction) for s in seen] == [(0, 1.0), (1, 1.0), (2, 1 / 11)]  # 11 batches an epoch
    assert seen[1].test_accuracy is not None and seen[-1].test_accuracy is None
    np.testing.assert_array_equal(run.model.components_, seen[-1].components)


def test_a_run_taken_back_to_a_frame_is_the_run_that_stopped_there():
    """``Run.at``: a run trained on past a frame gives, at that frame, the model, the file
    and the embedding a run of the same settings stopped there gives."""
    data = datasets.load("wine")
    config = recommended_config(data).replace(max_iter=8, device="cpu")
    stopped = Run(config, data)
    kept = []
    for snap in stopped.stream(frames_per_epoch=3, should_stop=lambda: len(kept) >= 9):
        kept.append(snap)
    frame = kept[-1]
    assert (frame.epoch, frame.fraction) == (5, 0.5)  # part-way into epoch 5: four whole ones
    trained_on = Run(config, data)
    frames = list(trained_on.stream(frames_per_epoch=3))
    assert frames[-1].epoch == 8 and frames[len(kept) - 1].epoch == frame.epoch
    back = trained_on.at(frames[len(kept) - 1])
    assert back.model.n_iter_ == stopped.model.n_iter_ == 4
    assert back.model.objective_curve_ == stopped.model.objective_curve_
    np.testing.assert_array_equal(back.model.components_, stopped.model.components_)
    X = data.X_test.astype(np.float32)
    np.testing.assert_array_equal(back.transform(X), stopped.transform(X))
    assert back.model_file() == stopped.model_file()
    assert back.latest is frames[len(kept) - 1] and back.fit_seconds == back.latest.elapsed
    # the run itself is untouched: it still stands at its end
    assert trained_on.model.n_iter_ == 8 and trained_on.latest is frames[-1]
    np.testing.assert_array_equal(trained_on.model.components_, frames[-1].components)


def test_only_a_linear_maps_run_is_taken_back_to_a_frame():
    data = datasets.load("wine")
    run = Run(recommended_config(data, encoder="mlp").replace(max_iter=1, device="cpu"), data)
    first = next(iter(run.stream()))
    with pytest.raises(ValueError, match="network"):
        run.at(first)


def test_neighbours_are_nearest_first():
    data = datasets.load("rings")
    run = Run(RunConfig(max_iter=1, device="cpu"), data)
    snap = list(run.stream())[-1]
    order = run.neighbours(snap, 0, k=5)
    distances = ((snap.embedding[order] - snap.embedding[0]) ** 2).sum(1)
    assert 0 not in order and np.all(np.diff(distances) >= 0)


def test_run_explains_adjustments():
    wine = datasets.load("wine")
    config, notes = _resolved(RunConfig(n_components=20, batch_size=4096), wine)
    assert config.n_components == 13 and config.batch_size == len(wine.y_train)
    assert notes == [
        "The output dimension is capped at the 13 input features.",
        "The batch size is capped at the 125 training points (one batch per epoch).",
    ]
    config, notes = _resolved(RunConfig(n_components=5, init="lda", batch_size=64), wine)
    assert notes == ["LDA gives at most n_classes - 1 = 2 directions; the other 3 start from PCA."]
    config, notes = _resolved(RunConfig(encoder="diagonal", init="pca", batch_size=64), wine)
    assert config.n_components == 13 and config.init == "identity" and len(notes) == 2


def test_run_says_when_a_network_gets_inputs_far_from_unit_scale():
    from nca_core.config.rules import input_scale_note

    wine = datasets.load("wine")  # proline's values vary by hundreds
    scale_text = input_scale_note("mlp", 1e3).text
    assert scale_text in _resolved(RunConfig(encoder="mlp", standardize=False), wine)[1]
    for config in (RunConfig(encoder="mlp", standardize=True), RunConfig(encoder="linear", standardize=False)):
        assert scale_text not in _resolved(config, wine)[1]
    digits = datasets.load("digits")  # pixels of 0 to 16: near enough
    assert scale_text not in _resolved(RunConfig(encoder="mlp", standardize=False), digits)[1]


@pytest.mark.parametrize("name", ["rings", "wine", "digits"])
def test_recommended_deep_settings_converge(name):
    from nca_core.runs.run import recommended_config

    data = datasets.load(name)
    config = recommended_config(data, encoder="mlp").replace(device="cpu")
    assert config.objective == "g"  # what won for deep NCA (benchmarks/RESULTS.md, "Deep NCA against the paper")
    snaps = list(Run(config, data).stream())
    assert snaps[-1].components is None and snaps[-1].dof == pytest.approx(1.0)
    assert snaps[-1].objective > snaps[0].objective
    assert snaps[-1].test_accuracy >= {"rings": 0.95, "wine": 0.9, "digits": 0.72}[name]


def test_deep_model_file_has_the_scaler_folded_into_the_first_layer():
    data = datasets.load("wine")
    config = RunConfig(encoder="mlp", init="random", standardize=True, max_iter=2, batch_size=64, device="cpu")
    run = Run(config, data)
    list(run.stream())
    model = load_model(io.BytesIO(run.model_file()))
    np.testing.assert_allclose(
        model.transform(data.X_train), run.transform(data.X_train), rtol=1e-4, atol=1e-5
    )


def test_run_explains_deep_adjustments():
    wine = datasets.load("wine")
    config, notes = _resolved(
        RunConfig(encoder="mlp", init="pca", optimizer="lbfgs", neighbors="memory", standardize=True), wine
    )
    assert config.init == "random" and config.neighbors == "all"
    assert notes == [
        "A neural network starts from random weights (PCA, LDA and identity starts are for linear maps).",
        "L-BFGS takes every step on all points, so neighbours come from all points.",
    ]


def test_blow_up_is_put_in_words_and_a_healthy_run_is_not():
    from nca_core.training.loop import Snapshot

    def snap(epoch, scale, accuracy):
        return Snapshot(epoch, 0.5, 0.0, None, np.ones((4, 2), np.float32) * scale, accuracy, accuracy)

    healthy = [snap(0, 3, 0.4), snap(1, 5, 0.9), snap(2, 6, 0.99)]
    assert blow_up_note(healthy) is None
    blown = [snap(0, 3, 0.4), snap(1, 3e3, 0.9), snap(2, 3e5, 0.44)]
    note = blow_up_note(blown)
    assert "grew from ±3 to ±3e+05" in note and "accuracy fell from 90% to 44%" in note
    assert "lower the learning rate" in note


def test_feature_influence_weighs_each_column_of_a_by_the_features_spread():
    data = datasets.load("wine")
    run = Run(recommended_config(data).replace(max_iter=1, device="cpu"), data)
    list(run.stream())
    A = run.model.components_
    influence = run.feature_influence()
    assert influence.shape == (13,)
    np.testing.assert_allclose(run.map_weights(), np.linalg.norm(A, axis=0))
    # standardised inputs have spread 1: the influence is the column length of A
    np.testing.assert_allclose(influence, np.linalg.norm(A, axis=0), rtol=1e-3)
    raw = Run(recommended_config(data).replace(max_iter=1, standardize=False, device="cpu"), data)
    list(raw.stream())
    expected = np.linalg.norm(raw.model.components_, axis=0) * data.X_train.std(0)
    np.testing.assert_allclose(raw.feature_influence(), expected, rtol=1e-4)
    assert raw.top_features(3) == list(np.argsort(-expected, kind="stable")[:3])


def _digits_at_16_pixels():
    """The 8 x 8 digits with every pixel doubled: real 16 x 16 images, as USPS's."""
    import dataclasses

    digits = datasets.load("digits")

    def doubled(X):
        images = X.reshape(-1, 8, 8)
        return np.kron(images, np.ones((1, 2, 2), dtype=X.dtype)).reshape(len(X), 256)

    return dataclasses.replace(
        digits, X_train=doubled(digits.X_train), X_test=doubled(digits.X_test), image_shape=(16, 16)
    )


def test_the_deep_preset_shifts_images_and_decays_its_step_size():
    from nca_core import RandomShift

    images, wine, digits = _digits_at_16_pixels(), datasets.load("wine"), datasets.load("digits")
    deep = recommended_config(images, encoder="mlp")
    assert (deep.shift, deep.learning_rate_schedule) == (1, "cosine")
    assert recommended_config(digits, encoder="mlp").shift == 0  # a pixel is an eighth of an 8 x 8 digit
    assert recommended_config(wine, encoder="mlp").shift == 0  # rows that are not images
    assert recommended_config(images, encoder="mlp", optimizer="lbfgs").shift == 0  # full batch: no anchors
    assert (recommended_config(images).shift, recommended_config(images).learning_rate_schedule) == (
        0,
        "constant",
    )
    run = Run(deep.replace(device="cpu"), images)
    assert (run.model.shift, run.model.image_shape, run.model.learning_rate_schedule) == (1, (16, 16), "cosine")
    from nca_core.estimator.report import Report
    from nca_core.estimator.start import make_start

    plan = run.model.plan(DataShape(len(images.y_train), 256, 10))
    X, y = images.X_train, images.y_train
    start = make_start(X, y, y, plan, None, np.random.RandomState(0), Report(run.model, 0))
    assert start.augment == RandomShift((16, 16), 1)


def test_run_turns_shifting_off_where_it_cannot_apply():
    config, notes = _resolved(
        RunConfig(encoder="mlp", init="random", shift=1, batch_size=64, standardize=True), datasets.load("wine")
    )
    assert config.shift == 0
    assert notes == ["Shifting is for images; this dataset's rows are not images, so it is off."]
    images = _digits_at_16_pixels()
    config, notes = _resolved(RunConfig(shift=1, neighbors="all"), images)  # a linear map, all points
    assert config.shift == 0 and notes == [
        "Shifting images while training needs minibatches with neighbours from a memory bank "
        "or the batch, so it is off."
    ]
    config, notes = _resolved(RunConfig(shift=1, neighbors="batch"), images)
    assert config.shift == 1 and notes == []


def test_a_deep_run_on_shifted_images_learns():
    images = _digits_at_16_pixels()
    config = recommended_config(images, encoder="mlp").replace(device="cpu", max_iter=8, hidden_sizes=(64, 64))
    snaps = list(Run(config, images).stream(eval_every=8))
    assert snaps[-1].test_accuracy > snaps[0].test_accuracy + 0.4  # 2-D after 8 epochs: about 0.7


@pytest.mark.parametrize("optimizer", ["adam", "sgd", "lbfgs"])
def test_the_apps_network_preset_is_what_the_estimator_gives_a_network(optimizer):
    """The Train page's "neural network" choice and ``NCA(encoder="mlp", image_shape=...)``
    train the same layers, kernel, objective, step schedule and size, batches, epochs,
    neighbours, shift and start, for a picture and for a wide map: the app's settings are the
    library's plan."""
    images = _digits_at_16_pixels()
    shape = DataShape(len(images.y_train), images.n_features, images.n_classes)
    names = ("kernel", "objective", "learning_rate_schedule", "learning_rate", "batch_size", "max_iter",
             "shift", "init")  # fmt: skip
    for d in (2, 30):
        preset = recommended_config(images, d, encoder="mlp", optimizer=optimizer)
        model = NCA(d, encoder="mlp", image_shape=images.image_shape, optimizer=optimizer)
        library = model.plan(shape).settings
        assert {name: getattr(preset, name) for name in names} == {name: library[name] for name in names}
        # the app offers neighbours as "automatic", which its run resolves as the library does
        assert preset.neighbors == "auto"
        assert Run(preset.replace(device="cpu"), images).plan.settings["neighbors"] == library["neighbors"]
        assert preset.hidden_sizes == model.hidden_sizes
        assert preset.shift == (0 if optimizer == "lbfgs" else 1)  # L-BFGS encodes all points together
        assert preset.objective == ("g" if d == 2 else "mcml")


def test_a_run_resolves_its_settings_once(monkeypatch):
    """The page shows a run's notes before Train and then trains that same run: the rules
    run once, when the run is made, not again when it trains."""
    import nca_core.config.plan as planning

    calls = []
    resolve = planning.resolve
    monkeypatch.setattr(planning, "resolve", lambda *args: calls.append(1) or resolve(*args))
    wine = datasets.load("wine")
    run = Run(RunConfig(n_components=20, batch_size=4096, max_iter=2, device="cpu"), wine)
    assert run.config.n_components == 13 and len(calls) == 1
    snaps = list(run.stream())
    assert len(calls) == 1 and run.model.n_components_ == 13 and snaps[-1].epoch == 2


@pytest.mark.parametrize(
    "config",
    [
        RunConfig(n_components=20, batch_size=4096),
        RunConfig(n_components=5, init="lda", batch_size=64),
        RunConfig(encoder="diagonal", init="pca"),
        RunConfig(encoder="mlp", init="pca", optimizer="lbfgs", neighbors="memory", standardize=True),
        RunConfig(encoder="mlp", init="random", shift=1, batch_size=64, standardize=True),
        RunConfig(optimizer="lbfgs", neighbors="nearest"),
        RunConfig(encoder="mlp", objective="mcml", kernel="student-t", n_components=3),
    ],
)
def test_the_settings_a_run_trains_with_are_what_its_own_parameters_resolve_to(config):
    """A run trains the request's plan with the model of the adjusted settings: resolving
    that model's parameters again must give the same settings, or the plan would lie."""
    wine = datasets.load("wine")
    run = Run(config, wine)
    again = run.model.plan(run.plan.shape)
    assert run.plan.settings == again.settings
    warnings = [note for note in again.notes if note.level == "warning"]
    assert warnings == [note for note in run.plan.notes if note.level == "warning"]
    assert all(note.level != "error" for note in again.notes + run.plan.notes)


def test_standardised_rows_far_from_the_origin_are_rounded_once():
    """Features about 10^4 spreads from the origin: each standardised value is the float64
    one rounded once to float32, not shifted by a mean rounded to float32 first."""
    rng = np.random.default_rng(0)
    X = (1e4 * np.array([1.0, 100.0]) + rng.normal(size=(300, 2))).astype(np.float32)
    y = np.arange(300) % 2
    data = datasets.Dataset("far", X[:200], y[:200], X[200:], y[200:], ("a", "b"))
    run = Run(RunConfig(standardize=True, max_iter=1, device="cpu"), data)
    exact = (X.astype(np.float64) - run.scaler.mean_) / run.scaler.scale_
    prepared = run._prepare(X)
    assert prepared.dtype == np.float32
    np.testing.assert_array_equal(prepared, exact.astype(np.float32))


def test_a_run_learns_from_its_stated_subset_and_scores_on_the_whole_test_set():
    digits = datasets.load("digits")
    config = recommended_config(digits).replace(train_size=300, max_iter=2, device="cpu")
    run = Run(config, digits)
    assert len(run.data.y_train) == 300 and len(run.data.y_test) == len(digits.y_test)
    counts = np.bincount(run.data.y_train, minlength=10) / 300
    np.testing.assert_allclose(counts, np.bincount(digits.y_train) / len(digits.y_train), atol=0.01)  # stratified
    snaps = list(run.stream())
    assert snaps[-1].embedding.shape[0] == min(config.display_size, 300)
    assert recommended_config(digits).train_size == len(digits.y_train)  # all of them by default


@pytest.mark.skipif(real_data_dir() is None, reason="needs the MNIST files (NCA_DATA_DIR or ../shared/data)")
def test_a_network_on_mnist_shows_ten_clusters_within_a_few_epochs():
    """The Train page's network on MNIST (``LIVE_NETWORK``): a stratified 10,000 digits, from
    random weights, past 90% test 5-NN at d = 2 within four epochs."""
    from nca_core.runs.run import LIVE_NETWORK, recommended_config

    mnist = datasets.load("mnist")
    config = recommended_config(mnist, encoder="mlp")
    assert {name: getattr(config, name) for name in LIVE_NETWORK} == LIVE_NETWORK
    run = Run(config.replace(device="cpu"), mnist)
    assert run.plan.neighbors == "memory"
    stream = run.stream()
    snaps = []
    for snap in stream:
        snaps.append(snap)
        if snap.epoch == 4:
            break
    stream.close()
    assert snaps[0].test_accuracy < 0.5 and snaps[-1].test_accuracy >= 0.9
