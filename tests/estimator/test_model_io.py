import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nca_core import NCA, ModelFileError, load_model, save_model
from nca_core.estimator.model_io import _SAVED_PARAMS


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


def _model_file(params=None, components=None, classes=None, **metadata):
    """A linear model file written field by field, so each test can break exactly one."""
    meta = {"format": "nca-explorer-model", "version": 2, "params": params or {}, "n_iter": 1}
    meta.update(metadata)
    return _npz_bytes(
        classes=np.array([0, 1]) if classes is None else classes,
        components=np.eye(2, 3) if components is None else components,
        metadata=np.array(json.dumps(meta)),
    )


def _npy_bytes():
    buffer = io.BytesIO()
    np.save(buffer, np.eye(2, 3))
    return buffer.getvalue()


def _zip_bytes(members):
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _npy_member(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def _truncated():
    good = _model_file()
    return good[: len(good) // 2]


def _bad_crc():
    good = bytearray(_model_file())
    body = good.index(b"\x93NUMPY") + 128  # the first member's values, after its .npy header
    good[body] ^= 0xFF
    return bytes(good)


MALFORMED = {
    "npy instead of npz": (_npy_bytes(), "holds a single array"),
    "truncated zip": (_truncated(), "not a readable .npz model file"),
    "member with a bad CRC": (_bad_crc(), "not a readable .npz model file"),
    "member that is not an array": (
        _zip_bytes({"classes": b"hello", "metadata.npy": _npy_member(np.array("{}"))}),
        "'classes' is not a .npy array",
    ),
    "metadata not a string": (
        _npz_bytes(classes=np.array([0, 1]), components=np.eye(2, 3), metadata=np.array([1.0, 2.0])),
        "metadata must be a single JSON string",
    ),
    "deeply nested metadata": (
        _npz_bytes(classes=np.array([0, 1]), components=np.eye(2, 3), metadata=np.array("[" * 100_000)),
        "not valid JSON",
    ),
    "metadata a JSON list": (
        _npz_bytes(classes=np.array([0, 1]), components=np.eye(2, 3), metadata=np.array("[1, 2]")),
        "metadata must be a JSON object",
    ),
    "version true": (_model_file(version=True), "unsupported model format"),
    "duplicate classes": (_model_file(classes=np.array([1, 1])), "classes must be distinct"),
    "n_iter a string": (_model_file(n_iter="x"), "n_iter must be a non-negative integer, got 'x'"),
    "n_iter a list": (_model_file(n_iter=[1]), r"n_iter must be a non-negative integer, got \[1\]"),
    "n_iter negative": (_model_file(n_iter=-3), "n_iter must be a non-negative integer, got -3"),
    "n_iter fractional": (_model_file(n_iter=1.5), "n_iter must be a non-negative integer, got 1.5"),
    "n_iter true": (_model_file(n_iter=True), "n_iter must be a non-negative integer, got True"),
    "objective_curve of strings": (
        _model_file(objective_curve=["x"]),
        "objective_curve must be a list of numbers",
    ),
    "objective_curve a string": (
        _model_file(objective_curve="123"),
        "objective_curve must be a list of numbers",
    ),
    "objective_curve null": (_model_file(objective_curve=None), "objective_curve must be a list of numbers"),
    "n_components against rows": (
        _model_file(params={"n_components": 5}),
        r"components has 2 rows but n_components is 5",
    ),
    "linear map wider out than in": (
        _model_file(components=np.ones((3, 2))),
        r"a linear map cannot have more rows \(3\) than columns \(2\)",
    ),
    "diagonal non-square": (
        _model_file(params={"encoder": "diagonal"}),
        r"a diagonal model needs a square components matrix, got \(2, 3\)",
    ),
    "diagonal with off-diagonal entries": (
        _model_file(params={"encoder": "diagonal"}, components=np.ones((3, 3))),
        "a diagonal model's components must be zero off the diagonal",
    ),
    "dof true": (
        _model_file(params={"kernel": "student-t"}, dof=True),
        "dof must be a positive number, got True",
    ),
    "dof param true": (
        _model_file(params={"kernel": "student-t", "dof": True}, dof=2.0),
        "parameter 'dof' is true/false",
    ),
    "n_components param true": (
        _model_file(params={"n_components": True}),
        "parameter 'n_components' is true/false",
    ),
    "dof for a Gaussian kernel": (_model_file(dof=2.0), "a gaussian kernel has no dof, got 2.0"),
    "student-t without dof": (
        _model_file(params={"kernel": "student-t"}),
        "dof must be a positive number, got None",
    ),
    "hidden_sizes not integers": (
        _model_file(params={"hidden_sizes": ["a"]}),
        "hidden_sizes must be positive integers",
    ),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_each_malformed_file_raises_model_file_error_saying_what_is_wrong(case):
    payload, message = MALFORMED[case]
    with pytest.raises(ModelFileError, match=message):
        load_model(payload)


def test_a_well_formed_file_built_by_hand_loads():
    model = load_model(_model_file(params={"n_components": 2}, objective_curve=[0.5, 0.75]))
    assert model.components_.shape == (2, 3) and model.n_iter_ == 1
    assert model.objective_curve_ == [0.5, 0.75] and model.dof_ is None


def test_mlp_output_width_must_match_n_components(fitted_mlp):
    model, _ = fitted_mlp

    def wrong_n_components(arrays):
        meta = json.loads(str(arrays["metadata"]))
        meta["params"]["n_components"] = 3
        arrays["metadata"] = np.array(json.dumps(meta))

    with pytest.raises(ModelFileError, match="the network has 2 outputs but n_components is 3"):
        load_model(_resave(model, wrong_n_components))


def test_a_saved_diagonal_model_loads(wine):
    X, y = wine
    model = NCA(encoder="diagonal", init="identity", max_iter=3, device="cpu").fit(X, y)
    buffer = io.BytesIO()
    save_model(model, buffer)
    np.testing.assert_array_equal(load_model(buffer.getvalue()).transform(X), model.transform(X))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)
FIELDS = ["format", "version", "params", "n_iter", "objective_curve", "dof"]


@settings(max_examples=200, deadline=None)
@given(
    field=st.sampled_from(FIELDS + [f"params.{name}" for name in _SAVED_PARAMS]),
    value=json_values,
    kernel=st.sampled_from(["gaussian", "student-t"]),
)
def test_any_json_value_in_any_field_loads_or_raises_model_file_error(field, value, kernel):
    meta = {
        "format": "nca-explorer-model",
        "version": 2,
        "params": {"n_components": 2, "kernel": kernel},
        "n_iter": 1,
        "objective_curve": [0.5, 0.6],
        "dof": 1.0 if kernel == "student-t" else None,
    }
    if field.startswith("params."):
        meta["params"][field.removeprefix("params.")] = value
    else:
        meta[field] = value
    payload = _npz_bytes(
        classes=np.array([0, 1]), components=np.eye(2, 3), metadata=np.array(json.dumps(meta))
    )
    try:
        model = load_model(payload)
    except ModelFileError as exc:
        assert str(exc)
        return
    assert model.transform(np.ones((4, 3))).shape == (4, 2)


def test_a_linear_student_t_model_keeps_its_dof(wine, tmp_path):
    X, y = wine
    model = NCA(2, kernel="student-t", max_iter=3, device="cpu", random_state=0).fit(X, y)
    save_model(model, tmp_path / "t.npz")
    loaded = load_model(tmp_path / "t.npz")
    assert loaded.dof_ == pytest.approx(model.dof_) and loaded.dof_ > 0
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))


def test_a_centred_model_keeps_its_center(wine, tmp_path):
    X, y = wine
    model = NCA(2, max_iter=3, device="cpu", random_state=0, center=True).fit(X + 100.0, y)
    save_model(model, tmp_path / "centred.npz")
    loaded = load_model(tmp_path / "centred.npz")
    np.testing.assert_array_equal(loaded.center_, model.center_)
    assert loaded.center_.dtype == np.float64 and np.abs(loaded.center_ - 100.0).max() < 1.0
    np.testing.assert_array_equal(loaded.transform(X + 100.0), model.transform(X + 100.0))


def _as_version_two(arrays):
    meta = json.loads(str(arrays["metadata"]))
    meta["version"] = 2
    arrays["metadata"] = np.array(json.dumps(meta))
    del arrays["center"]


@pytest.mark.parametrize("kind", ["map", "network"])
def test_version_two_files_still_load_and_subtract_nothing(fitted, fitted_mlp, kind):
    model, X = fitted if kind == "map" else fitted_mlp
    loaded = load_model(_resave(model, _as_version_two))
    np.testing.assert_array_equal(loaded.center_, np.zeros(X.shape[1]))
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))


def test_a_version_three_file_needs_a_finite_center_of_one_value_per_feature(fitted):
    model, _ = fitted

    def without(arrays):
        del arrays["center"]

    def too_short(arrays):
        arrays["center"] = np.zeros(12)

    def not_finite(arrays):
        arrays["center"] = np.full(13, np.inf)

    def integers(arrays):
        arrays["center"] = np.zeros(13, dtype=np.int64)

    for edit, message in [
        (without, r"model file lacks \['center'\]"),
        (too_short, "center has 12 values but the map takes 13 features"),
        (not_finite, "NaN or infinite"),
        (integers, "center must be a non-empty 1-D float array"),
    ]:
        with pytest.raises(ModelFileError, match=message):
            load_model(_resave(model, edit))
