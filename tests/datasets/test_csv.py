"""Every validation case of from_csv, with its exact message."""

import io
from pathlib import Path

import numpy as np
import pytest

from nca_core.datasets import DatasetError, from_csv, guess_label_column, read_csv_table

GOOD = "a,b,label\n" + "".join(f"{i},{(i * 7) % 5},{'xy'[i % 2]}\n" for i in range(20))


def test_good_file_becomes_a_dataset():
    data = from_csv(GOOD.encode(), "label")
    assert data.classes == ("x", "y")
    assert data.X_train.shape[1] == 2 and len(data.y_train) + len(data.y_test) == 20
    assert len(data.y_test) == 6 and data.X_train.dtype == np.float32


def test_numeric_labels_sort_as_numbers():
    text = "f,g,label\n" + "".join(f"{i},{i % 5},{[10, 9, 2][i % 3]}\n" for i in range(12))
    assert from_csv(text.encode(), "label").classes == ("2", "9", "10")


def test_reads_paths_and_file_objects(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(GOOD)
    assert from_csv(path, "label").n_features == 2
    assert from_csv(io.BytesIO(GOOD.encode()), "label").n_features == 2


def test_image_shape_is_checked_and_kept():
    text = "p0,p1,p2,p3,label\n" + "".join(f"0,{i},1,{i % 3},{i % 2}\n" for i in range(10))
    data = from_csv(text.encode(), "label", image_shape=(2, 2))
    assert data.image_shape == (2, 2) and data.n_features == 4  # constant pixels are kept
    with pytest.raises(DatasetError) as info:
        from_csv(text.encode(), "label", image_shape=(3, 2))
    assert str(info.value) == "image width x height = 2 x 3 = 6 pixels, but the file has 4 feature columns"


def test_constant_columns_are_dropped_with_a_note():
    text = "a,k,b,label\n" + "".join(f"{i},5,{i % 3},{i % 2}\n" for i in range(10))
    data = from_csv(text.encode(), "label")
    assert data.n_features == 2
    assert data.notes == ("dropped 1 constant column(s): 'k'",)


def test_tiny_file_trains_on_everything_and_says_so():
    data = from_csv(b"a,b,label\n1,0,x\n2,1,x\n3,0,y\n4,1,y\n", "label")
    assert len(data.y_test) == 0
    assert "too few rows for a test split: everything is used for training" in data.notes


CASES = [
    (b"", {}, "the file is empty"),
    (b"a,label\n", {}, "the file has a header but no data rows"),
    (b"a,b\n1,2\n", {}, "there is no column named 'label'; the columns are 'a', 'b'"),
    (b"label\nx\ny\n", {}, "the file has no feature column besides the labels"),
    (
        b"a,label\n1,x\n2,x\n3,y\n4,y\n",
        {},
        "the file has one feature column besides the labels; NCA needs at least two to map to a picture",
    ),
    (
        b"a,k,label\n1,5,x\n2,5,x\n3,5,y\n4,5,y\n",
        {},
        "the file has one feature column that is not constant besides the labels; NCA needs at least two",
    ),
    (b"a,label\n1,x\nfoo,x\n3,y\n4,y\n", {}, "column 'a' holds 'foo', which is not a number on line 3"),
    (
        b"a,label\n1,x\n,x\n3,y\n4,y\n",
        {},
        "after dropping 1 row with missing values, class 'x' has only 1 sample; every class needs at least 2",
    ),
    (
        b"a,label\n1,x\nnan,x\n3,y\n4,y\n",
        {},
        "after dropping 1 row with missing values, class 'x' has only 1 sample; every class needs at least 2",
    ),
    (
        b"a,label\n1,x\n2,x\ninf,y\n4,y\n",
        {},
        "column 'a' holds 'inf' on line 4; values must be finite numbers",
    ),
    (
        b"a,label\n1,x\n2,\n3,y\n4,x\n",
        {},
        "after dropping 1 row with missing values, class 'y' has only 1 sample; every class needs at least 2",
    ),
    (
        b"a,b,label\n1,,x\n2,3,?\n",
        {},
        "every row has a missing value (empty, NA, N/A, NaN, null, None or ?); missing cells: 1 in 'b', 1 in 'label'",
    ),
    (b"a,label\n1,x\n2,x\n3,x\n", {}, "label column 'label' has only one class ('x'); NCA needs at least 2"),
    (b"a,label\n1,x\n2,x\n3,y\n", {}, "class 'y' has only 1 sample; every class needs at least 2"),
    (
        b"a,label\n1,x\n1,x\n1,y\n1,y\n",
        {},
        "every feature column is constant: there is nothing to learn from",
    ),
    (b"a,label\n1,x\n2,x\n3,y\n4,y\n", {"max_rows": 3}, "the file has 4 rows; the limit is 3"),
    (b"a,b,c,label\n1,2,3,x\n", {"max_columns": 2}, "the file has 3 feature columns; the limit is 2"),
    (b"a,label\n" + b"1,x\n" * 100, {"max_bytes": 100}, "the file is larger than the limit of 100 bytes"),
    (b"a,label\n1,x\n1e39,x\n3,y\n4,y\n", {}, "a value is too large to represent as a 32-bit float"),
    (b'a,label\n"1,x\n', {}, "the file is not a readable CSV"),
    (b"a ,a,label\n1,2,x\n3,4,x\n5,6,y\n7,8,y\n", {}, "the header names column 'a' twice"),
    (
        b"a,b,label\n" + b"".join(b"%d,%d,c%d\n" % (i, i * i % 7, i % 4) for i in range(8)),
        {"max_classes": 3},
        "label column 'label' has 4 classes; the limit is 3",
    ),
]


@pytest.mark.parametrize(("payload", "options", "message"), CASES)
def test_each_problem_has_its_exact_message(payload, options, message):
    with pytest.raises(DatasetError) as info:
        from_csv(payload, "label", **options)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("header", "columns", "labels"),
    [
        (b"a,b,label", ["a", "b", "label"], "label"),
        (b"Species,x1,x2", ["Species", "x1", "x2"], "Species"),  # a label-like name, any case
        (b'f1, f2 ,"target",f4', ["f1", "f2", "target", "f4"], "target"),  # wherever it stands
        (b"\xef\xbb\xbfclass,x,z\r", ["class", "x", "z"], "class"),  # byte-order mark and Windows line end
    ],
)
def test_label_column_guess_reads_the_header(header, columns, labels):
    """Features of a different number on every row; the labels, three whole numbers."""
    cells = [
        [str(i % 3) if c == labels else f"{i + j / 10 + 0.01:.2f}" for j, c in enumerate(columns)]
        for i in range(20)
    ]
    table = read_csv_table(header + b"\n" + "".join(",".join(r) + "\n" for r in cells).encode())
    assert list(table.columns) == columns
    assert guess_label_column(table).column == labels


def test_the_guess_names_a_column_that_from_csv_accepts():
    raw = b"\xef\xbb\xbflabel,a,b\nx,1,0\nx,2,1\ny,3,0\ny,4,1\n"  # as a spreadsheet exports it
    table = read_csv_table(raw)
    assert from_csv(table, guess_label_column(table).column).classes == ("x", "y")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"", "the file is empty"),
        (b" \n\n", "the file is empty"),
        (b",,\n1,2,3\n", "the first line names no columns; it must be a header row such as label,x1,x2"),
    ],
)
def test_no_header_means_no_table(raw, message):
    with pytest.raises(DatasetError) as info:
        read_csv_table(raw)
    assert str(info.value) == message


ICON = (Path(__file__).resolve().parents[2] / "app_pages" / "assets" / "icon.png").read_bytes()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (ICON, "this is a PNG image, not a CSV text file"),
        (b"%PDF-1.7\n" + bytes(200), "this is a PDF document, not a CSV text file"),
        (bytes(range(256)) * 4, "this is a binary file, not a CSV text file"),
    ],
    ids=["png", "pdf", "binary"],
)
@pytest.mark.parametrize(
    "reader", [read_csv_table, lambda raw: from_csv(raw, "label")], ids=["table", "read"]
)
def test_binary_content_is_refused_in_words(reader, content, message):
    with pytest.raises(DatasetError) as info:
        reader(content)
    assert str(info.value) == message


def test_text_that_is_not_utf8_is_refused_with_how_to_fix_it():
    latin = "label,x,y\ncafé,1,2\n".encode("latin-1") * 3
    for reader in (read_csv_table, lambda raw: from_csv(raw, "label")):
        with pytest.raises(
            DatasetError, match=r"not UTF-8 text \(byte 14 cannot be read\); save it as CSV UTF-8"
        ):
            reader(latin)


def test_feature_names_come_from_the_header_without_the_dropped_columns():
    text = "a,k,b,label\n" + "".join(f"{i},5,{i % 3},{i % 2}\n" for i in range(10))
    assert from_csv(text.encode(), "label").feature_names == ("a", "b")


@pytest.mark.parametrize("separator", [";", "\t", "|"])
def test_a_file_separated_by_semicolons_tabs_or_bars_reads_as_its_comma_twin(separator):
    """Spreadsheets in locales whose decimal mark is a comma export semicolons: the header
    row says which separator the file uses."""
    rows = ["label,a,b", *(f"{'xy'[i % 2]},{i},{i * i % 7}" for i in range(20))]
    comma = from_csv("\n".join(rows).encode(), "label")
    other = from_csv("\n".join(rows).replace(",", separator).encode(), "label")
    np.testing.assert_array_equal(other.X_train, comma.X_train)
    np.testing.assert_array_equal(other.y_test, comma.y_test)
    assert other.feature_names == ("a", "b")
    assert list(
        read_csv_table(f"a{separator}b{separator}label\n1{separator}2{separator}x\n".encode()).columns
    ) == [
        "a",
        "b",
        "label",
    ]


@pytest.mark.parametrize(
    "pixels, shape", [(784, (28, 28)), (256, (16, 16)), (64, (8, 8)), (60, (6, 10)), (7, (1, 7))]
)
def test_an_image_shape_is_guessed_from_the_pixel_count(pixels, shape):
    from nca_core.datasets import image_shape_for

    assert image_shape_for(pixels) == shape


def test_a_header_wider_than_the_limit_is_refused_before_any_column_list_is_built():
    """The form's label choice lists the header's columns: a header line of 5,001 feature
    names is refused before the parse, which would build every column."""
    from nca_core.datasets._csv_read import MAX_COLUMNS

    names = ",".join(f"f{i}" for i in range(MAX_COLUMNS + 1))
    raw = f"{names},label\n".encode() + b"1," * (MAX_COLUMNS + 1) + b"x\n"
    message = f"the file has {MAX_COLUMNS + 1:,} feature columns; the limit is {MAX_COLUMNS:,}"
    for reader in (read_csv_table, lambda raw: from_csv(raw, "label")):
        with pytest.raises(DatasetError) as info:
            reader(raw)
        assert str(info.value) == message
    quoted = b'"a,b",c,label\n1,2,x\n'  # a separator inside quotes names no column
    assert list(read_csv_table(quoted).columns) == ["a,b", "c", "label"]
    assert read_csv_table(f"{names}\n1\n".encode()).shape[1] == MAX_COLUMNS + 1  # the label among them


def test_rows_past_the_limit_are_not_parsed():
    """A file longer than the row limit is refused without reading the rest: a broken line
    further down is never reached."""
    rows = b"".join(b"%d,%s\n" % (i, b"xy"[i % 2 : i % 2 + 1]) for i in range(40))
    with pytest.raises(DatasetError) as info:
        from_csv(b"a,label\n" + rows + b"1,2,3,4\n", "label", max_rows=10)
    assert str(info.value) == "the file has 41 rows; the limit is 10"


def test_the_default_class_limit_refuses_one_class_per_two_rows():
    from nca_core.datasets._csv_read import MAX_CLASSES

    n = MAX_CLASSES + 1
    raw = b"a,b,label\n" + b"".join(b"%d,%d,c%d\n" % (i, i % 7, i // 2) for i in range(2 * n))
    with pytest.raises(DatasetError) as info:
        from_csv(raw, "label")
    assert str(info.value) == f"label column 'label' has {n} classes; the limit is {MAX_CLASSES}"
    assert from_csv(raw[: raw.index(b"c%d\n" % (n - 1))] + b"c0\n", "label").n_classes == MAX_CLASSES


def test_the_parse_holds_the_numbers_once_as_float32():
    """The text of a column is let go as it is converted and no float64 copy of all the
    numbers is made: numpy's share of the parse's peak (what tracemalloc sees of it) stays
    near the float32 array's 4 bytes a cell, where a float64 array and its float32 copy
    took 12."""
    import tracemalloc

    from nca_core.datasets._csv import _numeric_features

    rows, columns = 2000, 300
    values = np.random.default_rng(0).integers(10, 100, size=(rows, columns))
    text = "label," + ",".join(f"f{j}" for j in range(columns)) + "\n"
    text += "".join(f"{i % 3}," + ",".join(map(str, r)) + "\n" for i, r in enumerate(values))
    frame = read_csv_table(text.encode(), max_rows=rows, max_columns=columns).drop(columns="label")
    texts = dict(frame.items())
    del frame
    tracemalloc.start()
    try:
        X, missing, _ = _numeric_features(texts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(X, values.astype(np.float32))
    assert X.dtype == np.float32 and not texts and not missing.any()
    assert peak < 6 * rows * columns, peak / (rows * columns)
