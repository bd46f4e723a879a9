"""from_csv's rows and columns: columns left out, rows with a missing cell left out and
counted, and every row's place in the file kept."""

import io

import numpy as np
import pandas as pd
import pytest
from sklearn import datasets as sk

from nca_core import datasets
from nca_core.datasets import DatasetError, from_csv, read_csv_table


def _wine_csv(blanks: dict[int, tuple[str, str]] = {}) -> bytes:  # noqa: B006 (read, never changed)
    """Wine as a CSV sorted by class, numbered by a sample_id column; ``blanks`` puts a
    missing-cell marker in (data row -> (column, marker))."""
    data = sk.load_wine(as_frame=True).frame.rename(columns={"target": "class"})
    data.insert(0, "sample_id", np.arange(1, len(data) + 1))
    table = data.astype(str)
    for row, (column, marker) in blanks.items():
        table.loc[row, column] = marker
    return table.to_csv(index=False).encode()


def test_a_column_left_out_is_no_feature():
    kept = from_csv(_wine_csv(), "class")
    assert kept.feature_names[0] == "sample_id"
    left = from_csv(_wine_csv(), "class", drop_columns=["sample_id"])
    assert "sample_id" not in left.feature_names and left.n_features == kept.n_features - 1
    np.testing.assert_array_equal(left.X_train, kept.X_train[:, 1:])


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        (
            ["sample_id", "colour", "size"],
            "there is no column named 'colour', 'size' to leave out; the columns are 'sample_id', 'alcohol', ",
        ),
        (["class"], "the label column 'class' cannot be left out"),
    ],
)
def test_columns_to_leave_out_must_be_columns_other_than_the_label(drop, message):
    with pytest.raises(DatasetError) as info:
        from_csv(_wine_csv(), "class", drop_columns=drop)
    assert str(info.value).startswith(message)


def test_leaving_out_every_feature_or_all_but_one_is_refused_in_words():
    raw = b"id,a,b,label\n" + b"".join(
        b"%d,%d,%d,%s\n" % (i, i % 3, i % 5, b"xy"[i % 2 : i % 2 + 1]) for i in range(10)
    )
    with pytest.raises(DatasetError) as info:
        from_csv(raw, "label", drop_columns=("id", "a", "b"))
    assert str(info.value) == "every feature column is left out; NCA needs at least two to map to a picture"
    with pytest.raises(DatasetError) as info:
        from_csv(raw, "label", drop_columns=("id", "a"))
    assert str(info.value) == (
        "the file has one feature column besides the labels and the columns left out; NCA needs at least two "
        "to map to a picture"
    )
    with pytest.raises(TypeError, match="a list of column names, not the string 'id'"):
        from_csv(raw, "label", drop_columns="id")


@pytest.mark.parametrize("marker", ["", "NA", "n/a", "NaN", "nan", "null", "None", "?", " ? "])
def test_a_row_with_a_missing_cell_is_left_out_and_counted(marker):
    data = from_csv(_wine_csv({15: ("alcohol", marker)}), "class", drop_columns=["sample_id"])
    assert len(data.y_train) + len(data.y_test) == 177
    assert data.notes == ("dropped 1 row with missing values (line 17); missing cells: 1 in 'alcohol'",)
    rows = np.concatenate([data.rows_train, data.rows_test])
    assert sorted(rows) == [r for r in range(178) if r != 15]


def test_missing_cells_in_features_and_labels_are_counted_by_column():
    blanks = {15: ("alcohol", ""), 39: ("ash", "NA"), 96: ("alcohol", "?"), 120: ("class", "")}
    data = from_csv(_wine_csv(blanks), "class")
    assert data.notes == (
        "dropped 4 rows with missing values (lines 17, 41, 98, 122); missing cells: 2 in 'alcohol', 1 in 'ash', "
        "1 in 'class'",
    )
    assert len(data.y_train) + len(data.y_test) == 174


def test_text_in_a_feature_still_refuses_the_file_with_its_line():
    with pytest.raises(DatasetError) as info:
        from_csv(_wine_csv({15: ("alcohol", ""), 40: ("ash", "n.a.")}), "class")
    assert str(info.value) == "column 'ash' holds 'n.a.', which is not a number on line 42"


def test_too_few_rows_left_is_refused_saying_rows_were_dropped():
    raw = b"a,b,label\n1,2,x\n2,,x\n3,4,x\n4,NA,y\n5,6,y\n6,7,z\n7,8,z\n"
    with pytest.raises(DatasetError) as info:
        from_csv(raw, "label")
    assert str(info.value) == (
        "after dropping 2 rows with missing values, class 'y' has only 1 sample; every class needs at least 2"
    )
    raw = b"a,b,label\n1,,x\n2,3,y\n4,5,\n"
    with pytest.raises(DatasetError) as info:
        from_csv(raw, "label")
    assert str(info.value) == (
        "after dropping 2 rows with missing values, label column 'label' has only one class ('y'); NCA needs at least 2"
    )


def test_many_dropped_rows_show_their_first_ten_lines():
    blanks = {row: ("ash", "") for row in range(0, 120, 10)}
    (note,) = from_csv(_wine_csv(blanks), "class").notes
    assert note == (
        "dropped 12 rows with missing values (lines 2, 12, 22, 32, 42, 52, 62, 72, 82, 92 and 2 more); "
        "missing cells: 12 in 'ash'"
    )


def test_each_row_keeps_its_place_in_the_file():
    """rows_train and rows_test name the data row of the file each row came from: its
    features are that row's, its label that row's, past the gaps of the rows left out."""
    raw = _wine_csv({15: ("alcohol", ""), 70: ("class", "?")})
    data = from_csv(raw, "class", drop_columns=["sample_id"])
    file = pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False)
    for X, y, rows in (
        (data.X_train, data.y_train, data.rows_train),
        (data.X_test, data.y_test, data.rows_test),
    ):
        assert rows.dtype == np.int64 and np.all(np.diff(rows) > 0)
        expected = file.loc[rows, list(data.feature_names)].to_numpy(dtype=np.float64)
        np.testing.assert_allclose(X, expected, rtol=1e-7)  # float32 of the file's decimals
        assert [data.classes[c] for c in y] == file.loc[rows, "class"].tolist()
    assert sorted([*data.rows_train, *data.rows_test]) == [r for r in range(178) if r not in (15, 70)]


def test_a_table_read_once_gives_the_dataset_the_file_gives():
    raw = _wine_csv({15: ("alcohol", "")})
    table = read_csv_table(raw)
    from_table = from_csv(table, "class", drop_columns=["sample_id"])
    from_file = from_csv(raw, "class", drop_columns=["sample_id"])
    np.testing.assert_array_equal(from_table.X_train, from_file.X_train)
    np.testing.assert_array_equal(from_table.rows_test, from_file.rows_test)
    assert from_table.notes == from_file.notes
    assert table.shape == (178, 15)  # the caller's table is left as it was


def test_registered_sets_number_rows_by_their_split():
    """A registered set has no file of rows: its rows are placed by their split alone."""
    data = datasets.load("wine")
    assert data.rows_train is None and data.rows_test is None
    subset = data.subset_train(np.array([0, 5]))
    assert subset.rows_train is None and len(subset.y_train) == 2
    uploaded = from_csv(_wine_csv(), "class")
    picked = uploaded.subset_train(np.array([3, 1]))
    np.testing.assert_array_equal(picked.rows_train, uploaded.rows_train[[3, 1]])
    np.testing.assert_array_equal(picked.X_train, uploaded.X_train[[3, 1]])
