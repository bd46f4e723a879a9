import io
import json

import numpy as np
import pytest

from nca_core import NCA, ModelFileError, load_model, save_model


@pytest.fixture
def fitted(wine):
    X, y = wine
    return NCA(2, max_iter=5, device="cpu", objective="g").fit(X, np.array(["a", "b", "c"])[y]), X


def test_roundtrip_transforms_identically(fitted, tmp_path):
    model, X = fitted
    path = tmp_path / "model.npz"
    save_model(model, path)
    loaded = load_model(path)
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
    assert loaded.objective == "g" and list(loaded.classes_) == ["a", "b", "c"]
    assert loaded.objective_curve_ == model.objective_curve_
    assert not (tmp_path / "model.npz.partial").exists()


def test_roundtrip_through_bytes(fitted):
    model, _ = fitted
    buffer = io.BytesIO()
    save_model(model, buffer)
    loaded = load_model(buffer.getvalue())
    np.testing.assert_array_equal(loaded.components_, model.components_)


def _npz_bytes(**arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


GOOD_META = json.dumps({"format": "nca-explorer-model", "version": 1, "params": {}})


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"not a zip at all", "not a readable .npz model file"),
        (_npz_bytes(components=np.zeros((2, 3))), "model file lacks"),
        (
            _npz_bytes(
                components=np.full((2, 3), np.nan), classes=np.array([0, 1]), metadata=np.array(GOOD_META)
            ),
            "NaN or infinite",
        ),
        (
            _npz_bytes(components=np.zeros(3), classes=np.array([0, 1]), metadata=np.array(GOOD_META)),
            "non-empty 2-D float array",
        ),
        (
            _npz_bytes(components=np.zeros((2, 3)), classes=np.array([0, 1]), metadata=np.array("{")),
            "not valid JSON",
        ),
        (
            _npz_bytes(
                components=np.zeros((2, 3)),
                classes=np.array([0, 1]),
                metadata=np.array(json.dumps({"format": "x", "version": 1, "params": {}})),
            ),
            "unsupported model format",
        ),
        (
            _npz_bytes(
                components=np.zeros((2, 3)),
                classes=np.array([0, 1]),
                metadata=np.array(
                    json.dumps({"format": "nca-explorer-model", "version": 1, "params": {"objective": "zzz"}})
                ),
            ),
            "invalid parameters",
        ),
    ],
)
def test_bad_files_are_refused_with_a_reason(payload, message):
    with pytest.raises(ModelFileError, match=message):
        load_model(payload)


def test_pickled_objects_are_never_loaded():
    payload = _npz_bytes(
        components=np.zeros((2, 3)),
        classes=np.array([object(), 1], dtype=object),
        metadata=np.array(GOOD_META),
    )
    with pytest.raises(ModelFileError, match="not a readable"):
        load_model(payload)


def test_unfitted_model_cannot_be_saved(tmp_path):
    with pytest.raises(ValueError, match="only a fitted NCA can be saved"):
        save_model(NCA(), tmp_path / "m.npz")


@pytest.fixture
def fitted_mlp(wine):
    X, y = wine
    model = NCA(
        2,
        encoder="mlp",
        hidden_sizes=(16, 8),
        kernel="student-t",
        dof="learn",
        optimizer="adam",
        batch_size=32,
        max_iter=3,
        device="cpu",
        random_state=0,
    )
    return model.fit(X, y), X


def test_mlp_roundtrip_transforms_identically_and_keeps_the_learnt_dof(fitted_mlp, tmp_path):
    model, X = fitted_mlp
    save_model(model, tmp_path / "mlp.npz")
    loaded = load_model(tmp_path / "mlp.npz")
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
    assert loaded.encoder == "mlp" and tuple(loaded.hidden_sizes) == (16, 8)
    assert loaded.kernel == "student-t" and loaded.dof == "learn"
    assert loaded.dof_ == pytest.approx(model.dof_) and loaded.dof_ != 1.0
    assert not hasattr(loaded, "components_")


def _resave(model, edit):
    buffer = io.BytesIO()
    save_model(model, buffer)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    edit(arrays)
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def test_mlp_files_with_wrong_layer_shapes_or_values_are_refused(fitted_mlp):
    model, _ = fitted_mlp

    def wrong_shape(arrays):
        arrays["layer1.weight"] = np.zeros((8, 3), dtype=np.float32)

    def missing_layer(arrays):
        del arrays["layer2.bias"]

    def nan_weight(arrays):
        arrays["layer0.weight"][0, 0] = np.nan

    def bad_hidden(arrays):
        meta = json.loads(str(arrays["metadata"]))
        meta["params"]["hidden_sizes"] = ["16", 8]
        arrays["metadata"] = np.array(json.dumps(meta))

    for edit, message in [
        (wrong_shape, "layer1 has weight"),
        (missing_layer, "lacks layer2.weight or layer2.bias"),
        (nan_weight, "NaN or infinite"),
        (bad_hidden, "hidden_sizes must be positive integers"),
    ]:
        with pytest.raises(ModelFileError, match=message):
            load_model(_resave(model, edit))


def test_version_one_linear_files_still_load(fitted):
    model, X = fitted

    def as_version_one(arrays):
        meta = json.loads(str(arrays["metadata"]))
        meta["version"] = 1
        for name in ("hidden_sizes", "kernel", "dof"):
            del meta["params"][name]
        del meta["dof"]
        arrays["metadata"] = np.array(json.dumps(meta))

    loaded = load_model(_resave(model, as_version_one))
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
