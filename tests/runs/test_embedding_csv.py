"""The embedding file a run offers: every row of the data, with its place in the file, its
split, its label and the coordinates the model file gives it."""

import io

import numpy as np
import pandas as pd
import pytest
from sklearn import datasets as sk

from nca_core import datasets, load_model
from nca_core.runs.run import Run, recommended_config

MISSING_ROW, MISLABELLED_ROW = 15, 100  # data rows of the wine file with a missing cell


@pytest.fixture(scope="module")
def wine_file(tmp_path_factory):
    """Wine as a student's file: numbered by sample_id, sorted by class, two empty cells."""
    data = sk.load_wine(as_frame=True).frame.rename(columns={"target": "class"})
    data.insert(0, "sample_id", np.arange(1, len(data) + 1))
    table = data.astype(str)
    table.loc[MISSING_ROW, "alcohol"] = ""
    table.loc[MISLABELLED_ROW, "class"] = "NA"
    path = tmp_path_factory.mktemp("upload") / "wine.csv"
    table.to_csv(path, index=False)
    return path


def _table(csv: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(csv), dtype={"label": str})


def _model(run: Run, tmp_path):
    """The model as the Downloads tab offers it, saved to a file and loaded back."""
    path = tmp_path / "model.npz"
    path.write_bytes(run.model_file())
    return load_model(path)


def _float64_map(run: Run, X: np.ndarray) -> np.ndarray:
    """The run's linear map in float64: standardise, centre, multiply."""
    X = X.astype(np.float64)
    if run.scaler is not None:
        X = (X - run.scaler.mean_) / run.scaler.scale_
    return (X - run.model.center_) @ run.model.components_.T.astype(np.float64)


def test_an_uploaded_files_every_row_is_written_at_its_place_with_the_model_files_coordinates(
    wine_file, tmp_path
):
    """The id column left out and two rows dropped for a missing cell: the file's rows are
    numbered past the gaps, training and test rows alike, and the model file maps each row
    of the file to its coordinates."""
    data = datasets.from_csv(wine_file, "class", drop_columns=["sample_id"])
    run = Run(recommended_config(data).replace(max_iter=3, device="cpu"), data)
    assert run.config.standardize and run.config.display_size == 123  # fewer drawn than written
    last = list(run.stream(eval_every=None))[-1]
    table = _table(run.embedding_csv(last))
    assert list(table.columns) == ["row", "split", "label", "z1", "z2"]
    assert table["row"].tolist() == [r for r in range(178) if r not in (MISSING_ROW, MISLABELLED_ROW)]
    assert (table["split"] == "train").sum() == len(data.y_train) == 123
    assert (table["split"] == "test").sum() == len(data.y_test) == 53
    file = pd.read_csv(wine_file, dtype=str, keep_default_na=False)
    assert table["label"].tolist() == file.loc[table["row"], "class"].tolist()
    X = file.loc[table["row"], list(data.feature_names)].to_numpy(dtype=np.float32)
    Z = table[["z1", "z2"]].to_numpy(dtype=np.float32)
    scale = np.abs(Z).max()
    np.testing.assert_allclose(_model(run, tmp_path).transform(X), Z, rtol=0, atol=1e-5 * scale)
    np.testing.assert_allclose(_float64_map(run, X), Z, rtol=0, atol=1e-5 * scale)  # float64 reference


def test_a_registered_set_numbers_each_row_within_its_split(tmp_path):
    data = datasets.load("wine")
    run = Run(recommended_config(data).replace(max_iter=2, device="cpu"), data)
    last = list(run.stream(eval_every=None))[-1]
    table = _table(run.embedding_csv(last))
    train, test = table[table["split"] == "train"], table[table["split"] == "test"]
    assert train["row"].tolist() == list(range(len(data.y_train))) and table.index[
        : len(train)
    ].tolist() == list(range(len(train)))
    assert test["row"].tolist() == list(range(len(data.y_test)))
    assert test["label"].tolist() == [data.classes[c] for c in data.y_test]
    model = _model(run, tmp_path)
    for X, part in ((data.X_train, train), (data.X_test, test)):
        Z = part[["z1", "z2"]].to_numpy(dtype=np.float32)
        np.testing.assert_allclose(model.transform(X), Z, rtol=0, atol=1e-5 * np.abs(Z).max())


def test_an_earlier_frame_is_written_with_that_frames_map_and_agrees_with_its_picture(wine_file):
    """The drawn points' rows of the file carry the frame's picture's coordinates."""
    data = datasets.from_csv(wine_file, "class", drop_columns=["sample_id"])
    run = Run(recommended_config(data).replace(max_iter=6, display_size=40, device="cpu"), data)
    frames = list(run.stream(eval_every=None))
    frame = frames[2]
    table = _table(run.embedding_csv(frame)).set_index("row")
    drawn = data.rows_train[run.display_index]
    np.testing.assert_allclose(
        table.loc[drawn, ["z1", "z2"]].to_numpy(dtype=np.float32),
        frame.embedding,
        rtol=0,
        atol=1e-5 * np.abs(frame.embedding).max(),
    )
    assert not np.allclose(frames[-1].embedding, frame.embedding)  # the map moved on since


def test_a_training_subset_still_writes_every_row(wine_file, tmp_path):
    """A run that trains on part of the training rows writes the rest too, at their places."""
    data = datasets.from_csv(wine_file, "class", drop_columns=["sample_id"])
    run = Run(recommended_config(data).replace(max_iter=2, train_size=60, device="cpu"), data)
    last = list(run.stream(eval_every=None))[-1]
    assert len(run.data.y_train) == 60 and set(run.data.rows_train) < set(data.rows_train)
    np.testing.assert_array_equal(
        run.data.X_train, data.X_train[np.isin(data.rows_train, run.data.rows_train)]
    )
    table = _table(run.embedding_csv(last))
    assert len(table) == 176 and (table["split"] == "train").sum() == 123


def test_a_network_writes_its_last_frame_and_refuses_an_earlier_one(wine_file, tmp_path):
    data = datasets.from_csv(wine_file, "class", drop_columns=["sample_id"])
    run = Run(recommended_config(data, encoder="mlp").replace(max_iter=2, device="cpu"), data)
    frames = list(run.stream(eval_every=None))
    table = _table(run.embedding_csv(frames[-1]))
    file = pd.read_csv(wine_file, dtype=str, keep_default_na=False)
    X = file.loc[table["row"], list(data.feature_names)].to_numpy(dtype=np.float32)
    Z = table[["z1", "z2"]].to_numpy(dtype=np.float32)
    np.testing.assert_allclose(_model(run, tmp_path).transform(X), Z, rtol=0, atol=1e-5 * np.abs(Z).max())
    with pytest.raises(ValueError, match="keeps no weights"):
        run.embedding_csv(frames[0])


def test_labels_with_commas_and_quotes_are_quoted():
    cells = ['"x, y"', '"say ""hi"""']  # the file's own quoting of x, y and say "hi"
    text = "a,b,label\n" + "".join(f"{i},{i * i % 7},{cells[i % 2]}\n" for i in range(20))
    data = datasets.from_csv(text.encode(), "label")
    assert data.classes == ('say "hi"', "x, y")
    run = Run(recommended_config(data).replace(max_iter=1, device="cpu"), data)
    last = list(run.stream(eval_every=None))[-1]
    table = _table(run.embedding_csv(last))
    assert table["label"].tolist() == [["x, y", 'say "hi"'][i % 2] for i in range(20)]
