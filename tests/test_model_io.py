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
