"""AppTests of the Your data page: validation messages and using an upload everywhere."""

import json
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[2] / "app_pages" / "assets" / "sample-iris.csv"


def open_upload(app):
    app.switch_page("app_pages/your_data.py").run()
    assert not app.exception, app.exception
    return app


def test_bad_upload_shows_the_exact_validation_message(app):
    at = open_upload(app)
    at.file_uploader(key="upload").set_value(
        ("bad.csv", b"a,label\n1,x\nfoo,x\n3,y\n4,y\n", "text/csv")
    ).run()
    assert [e.value for e in at.error] == [
        "This file cannot be used: column 'a' holds 'foo', which is not a number on line 3."
    ]
    assert "uploaded_dataset" not in at.session_state


def test_sample_upload_is_used_on_the_train_page(app):
    at = open_upload(app)
    at.file_uploader(key="upload").set_value(("sample-iris.csv", SAMPLE.read_bytes(), "text/csv")).run()
    assert at.selectbox(key="upload-label").value == "species"
    assert "105 training and 45 test rows, 4 features, 3 classes" in at.success[0].value
    next(b for b in at.button if b.label == "Use this dataset on every page").click().run()
    assert not at.exception
    assert at.session_state["dataset_choice"] == "uploaded"
    assert at.session_state["uploaded_dataset"].classes == ("setosa", "versicolor", "virginica")
    assert at.title[0].value == "Train NCA and watch it learn"
    assert at.selectbox(key="dataset").value == "uploaded"


def test_an_empty_upload_is_refused_without_spoiling_the_next_one(app):
    at = open_upload(app)
    at.file_uploader(key="upload").set_value(("empty.csv", b"", "text/csv")).run()
    assert [e.value for e in at.error] == ["This file cannot be used: the file is empty."]
    assert "upload-label" not in [s.key for s in at.selectbox]  # no label choice without columns
    at.file_uploader(key="upload").set_value(("sample-iris.csv", SAMPLE.read_bytes(), "text/csv")).run()
    assert not at.error
    assert at.selectbox(key="upload-label").value == "species"


def test_images_and_binary_files_get_a_plain_message(app):
    at = open_upload(app)
    icon = (SAMPLE.parent / "icon.png").read_bytes()
    at.file_uploader(key="upload").set_value(("photo.csv", icon, "text/csv")).run()
    assert [e.value for e in at.error] == [
        "This file cannot be used: this is a PNG image, not a CSV text file."
    ]
    at.file_uploader(key="upload").set_value(("data.csv", bytes(range(256)) * 4, "text/csv")).run()
    assert [e.value for e in at.error] == [
        "This file cannot be used: this is a binary file, not a CSV text file."
    ]
    latin = "label,x,y\ncafé,1,2\n".encode("latin-1") * 3
    at.file_uploader(key="upload").set_value(("latin.csv", latin, "text/csv")).run()
    assert "not UTF-8 text" in at.error[0].value and "codec" not in at.error[0].value
    at.file_uploader(key="upload").set_value(("sample-iris.csv", SAMPLE.read_bytes(), "text/csv")).run()
    assert not at.error and at.selectbox(key="upload-label").value == "species"


def test_a_png_after_an_empty_file_shows_its_own_reason(app):
    at = open_upload(app)
    # The browser must hand every file to the page: an uploader limited to .csv refuses a .png
    # itself, showing a red chip with no reason while the page still judges the previous file.
    assert list(at.file_uploader(key="upload").proto.type) == []
    assert not at.file_uploader(key="upload").proto.multiple_files  # one file, one chip
    at.file_uploader(key="upload").set_value(("empty.csv", b"", "text/csv")).run()
    assert [e.value for e in at.error] == ["This file cannot be used: the file is empty."]
    icon = (SAMPLE.parent / "icon.png").read_bytes()
    at.file_uploader(key="upload").set_value(("bad.png", icon, "image/png")).run()
    assert [e.value for e in at.error] == [
        "This file cannot be used: this is a PNG image, not a CSV text file."
    ]


def test_pixels_start_from_the_image_shape_the_columns_hold(app):
    """A file of 8 x 8 images: switching on "pixels" offers 8 x 8, with no error to mend by hand."""
    rows = ["label," + ",".join(f"p{i}" for i in range(64))]
    rows += [f"{i % 2}," + ",".join(str((i * 7 + j) % 16) for j in range(64)) for i in range(40)]
    at = open_upload(app)
    at.file_uploader(key="upload").set_value(("digits.csv", "\n".join(rows).encode(), "text/csv")).run()
    at.toggle(key="upload-image").set_value(True).run()
    assert not at.error and not at.exception
    assert (at.number_input(key="upload-height-64").value, at.number_input(key="upload-width-64").value) == (
        8,
        8,
    )
    assert "64 features" in at.success[0].value


def test_a_file_over_the_upload_cap_is_refused_before_it_is_parsed(app):
    """The server refuses an upload over ``server.maxUploadSize``; the page refuses one that
    reaches it all the same, without parsing it (a CSV that would parse)."""
    import streamlit as st

    limit = st.get_option("server.maxUploadSize")
    row = b"x,1,2\ny,3,4\n"
    raw = b"label,a,b\n" + row * (limit * 2**20 // len(row) + 1)
    at = open_upload(app)
    at.file_uploader(key="upload").set_value(("big.csv", raw, "text/csv")).run()
    assert [e.value for e in at.error] == [
        f"This file cannot be used: it is larger than {limit} MB, the limit for a file here."
    ]
    assert "upload-label" not in [s.key for s in at.selectbox]
    at.file_uploader(key="upload").set_value(("sample-iris.csv", SAMPLE.read_bytes(), "text/csv")).run()
    assert not at.error and at.selectbox(key="upload-label").value == "species"


def _wine_csv(blanks: dict[int, tuple[str, str]] | None = None) -> bytes:
    """Wine as its UCI file has it, sorted by class, numbered by a sample_id column; ``blanks``
    empties cells (data row -> (column, what the cell reads))."""
    import numpy as np
    from sklearn import datasets as sk

    data = sk.load_wine(as_frame=True).frame.rename(columns={"target": "class"})
    data.insert(0, "sample_id", np.arange(1, len(data) + 1))
    table = data.astype(str)
    for row, (column, marker) in (blanks or {}).items():
        table.loc[row, column] = marker
    return table.to_csv(index=False).encode()


def _digits_csv(label: str) -> bytes:
    """scikit-learn's digits with the label first, as Kaggle's digit files have it."""
    from sklearn import datasets as sk

    X, y = sk.load_digits(return_X_y=True)
    lines = [f"{label}," + ",".join(f"px{j}" for j in range(64))]
    lines += [f"{c}," + ",".join(str(int(v)) for v in row) for c, row in zip(y, X)]
    return "\n".join(lines).encode()


def test_a_wine_file_with_an_identifier_and_a_gap_trains_on_its_measurements(app):
    """The number follows the classes in a file sorted by class: it is left out by default,
    saying why, and the row with an empty cell is left out, saying which."""
    at = open_upload(app)
    at.file_uploader(key="upload").set_value(("wine.csv", _wine_csv({15: ("alcohol", "")}), "text/csv")).run()
    assert not at.error
    preview = at.dataframe[0].value
    assert preview.shape == (5, 15) and list(preview.columns[:2]) == ["sample_id", "alcohol"]
    marks = json.loads(at.dataframe[0].proto.columns)  # the label pinned first, the id marked
    assert marks["class"] == {"label": "class (label)", "pinned": True}
    assert marks["sample_id"] == {"label": "sample_id (left out)"}
    assert at.selectbox(key="upload-label").value == "class"
    assert (
        "Guessed **class**: its name is a usual name for class labels, and it holds 3 distinct values."
        in [c.value for c in at.caption]
    )
    assert at.multiselect(key="upload-leave-out").value == ["sample_id"]
    assert at.info[0].value.startswith("Left out by default (**sample_id**: named like an identifier).")
    assert "124 training and 53 test rows, 13 features, 3 classes" in at.success[0].value
    assert [i.value for i in at.info[1:]] == [
        "Dropped 1 row with missing values (line 17); missing cells: 1 in 'alcohol'"
    ]
    next(b for b in at.button if b.label == "Use this dataset on every page").click().run()
    data = at.session_state["uploaded_dataset"]
    assert "sample_id" not in data.feature_names and data.n_features == 13
    assert 15 not in set(data.rows_train) | set(data.rows_test) and len(data.rows_train) == 124


def test_a_column_kept_or_left_out_by_hand_is_what_trains(app):
    at = open_upload(app)
    at.file_uploader(key="upload").set_value(("wine.csv", _wine_csv(), "text/csv")).run()
    at.multiselect(key="upload-leave-out").set_value([]).run()
    assert "125 training and 53 test rows, 14 features" in at.success[0].value
    at.multiselect(key="upload-leave-out").set_value(["sample_id", "proline", "hue"]).run()
    assert "11 features" in at.success[0].value
    at.multiselect(key="upload-leave-out").set_value(
        [c for c in at.multiselect(key="upload-leave-out").options]
    ).run()
    assert [e.value for e in at.error] == [
        "This file cannot be used: every feature column is left out; NCA needs at least two to map to a picture."
    ]


def test_a_digits_file_with_its_label_first_offers_that_label(app):
    at = open_upload(app)
    at.file_uploader(key="upload").set_value(("digits.csv", _digits_csv("digit"), "text/csv")).run()
    assert at.selectbox(key="upload-label").value == "digit"
    assert "1,258 training and 539 test rows, 61 features, 10 classes" in at.success[0].value
    at.file_uploader(key="upload").set_value(("digits.csv", _digits_csv("d"), "text/csv")).run()
    assert at.selectbox(key="upload-label").value == "d"
    assert (
        "Guessed **d**: it is the first column and holds few distinct whole numbers (10 in 1,797 rows; the last "
        "column holds 17), as class labels do." in [c.value for c in at.caption]
    )


def test_a_new_file_or_label_starts_from_its_own_guesses(app):
    """A label or columns chosen for one file are not carried to the next, nor the columns
    left out for one label column to another."""
    at = open_upload(app)
    at.file_uploader(key="upload").set_value(("wine.csv", _wine_csv(), "text/csv")).run()
    at.multiselect(key="upload-leave-out").set_value(["sample_id", "hue"]).run()
    at.selectbox(key="upload-label").set_value("magnesium").run()
    assert at.multiselect(key="upload-leave-out").value == ["sample_id"]  # the guesses for this label
    at.file_uploader(key="upload").set_value(("wine-2.csv", _wine_csv({3: ("ash", "?")}), "text/csv")).run()
    assert at.selectbox(key="upload-label").value == "class"
    assert at.multiselect(key="upload-leave-out").value == ["sample_id"]
    assert not at.error
