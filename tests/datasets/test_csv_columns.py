"""What the Your data form guesses about an uploaded table's columns: the label column, and
the columns to leave out of the features."""

import numpy as np
import pytest
from sklearn import datasets as sk

from nca_core.datasets import columns_to_leave_out, guess_label_column, read_csv_table


def _table(columns: dict[str, list]):
    """A CSV file of these columns (name -> cells), read as the form reads an upload."""
    names = list(columns)
    lines = [",".join(names), *(",".join(str(v) for v in row) for row in zip(*columns.values()))]
    return read_csv_table("\n".join(lines).encode())


def _digits(label_name: str):
    """scikit-learn's 1,797 digits as a CSV with the label first, as Kaggle's files have it."""
    X, y = sk.load_digits(return_X_y=True)
    return _table({label_name: list(y), **{f"px{j}": list(X[:, j].astype(int)) for j in range(64)}})


def _continuous(n: int, seed: int) -> list[str]:
    return [f"{v:.4f}" for v in np.random.default_rng(seed).normal(size=n)]


def test_a_digits_file_with_its_label_first_is_guessed_by_the_labels_name():
    """The last column, px63, holds 17 values (0 to 16): a column of few values at the far
    end, which the label's name outranks."""
    guess = guess_label_column(_digits("digit"))
    assert guess.column == "digit"
    assert guess.reason == "its name is a usual name for class labels, and it holds 10 distinct values"


def test_without_a_telling_name_the_end_column_with_fewer_values_is_the_guess():
    guess = guess_label_column(_digits("d"))
    assert guess.column == "d"
    assert guess.reason == (
        "it is the first column and holds few distinct whole numbers (10 in 1,797 rows; the last column "
        "holds 17), as class labels do"
    )


@pytest.mark.parametrize(
    "name", ["diagnosis", "quality", "outcome", "category", "Class label", "target_class", "Digit", "y"]
)
def test_label_like_names_are_guessed_wherever_they_stand(name):
    n = 60
    table = _table({"a": _continuous(n, 0), name: [i % 4 for i in range(n)], "b": _continuous(n, 1)})
    assert guess_label_column(table).column == name


def test_a_label_like_name_on_a_column_of_measurements_is_passed_over():
    """A regression target called y holds a different number on every row: no classes."""
    n = 60
    table = _table({"y": _continuous(n, 0), "a": _continuous(n, 1), "group": [i % 3 for i in range(n)]})
    guess = guess_label_column(table)
    assert guess.column == "group"
    assert guess.reason.startswith(
        "it is the last column and holds few distinct whole numbers (3 in 60 rows)"
    )


def test_a_column_of_text_among_numbers_is_the_guess():
    n = 30
    flowers = ["setosa", "versicolor", "virginica"]
    table = _table(
        {"a": _continuous(n, 0), "flower": [flowers[i % 3] for i in range(n)], "b": _continuous(n, 1)}
    )
    guess = guess_label_column(table)
    assert guess.column == "flower"
    assert guess.reason == "it is the only column of text among columns of numbers, with 3 distinct values"


def test_with_nothing_to_tell_the_last_column_is_offered():
    n = 40
    table = _table({"a": _continuous(n, 0), "b": _continuous(n, 1), "c": _continuous(n, 2)})
    assert guess_label_column(table) == (
        "c",
        "no column has a label-like name, text or few distinct whole numbers at an end, so the last one is offered",
    )


def test_an_end_column_of_more_values_than_classes_allowed_is_no_label():
    """150 whole numbers in 2,000 rows: more than the 100 classes a file may have."""
    n = 2000
    table = _table(
        {"k": [i % 5 for i in range(n)], "a": _continuous(n, 0), "count": [i % 150 for i in range(n)]}
    )
    assert guess_label_column(table).column == "k"


def _wine(id_column: str, ids: list[int]):
    X, y = sk.load_wine(return_X_y=True)  # its rows sorted by class, as the UCI file is
    return _table({id_column: ids, **{f"f{j}": list(X[:, j]) for j in range(13)}, "class": list(y)})


def test_an_identifier_in_a_file_sorted_by_class_is_left_out():
    """Wine numbered row by row follows the classes' order: a map would separate the classes
    by the number alone (mean p_i 1.000, every test point right)."""
    assert columns_to_leave_out(_wine("sample_id", list(range(1, 179))), "class") == {
        "sample_id": "named like an identifier"
    }
    assert columns_to_leave_out(_wine("s", list(range(1, 179))), "class") == {
        "s": "counts up row by row, like a row number"
    }
    shuffled = np.random.default_rng(0).permutation(178).tolist()
    assert columns_to_leave_out(_wine("s", shuffled), "class") == {
        "s": "a different whole number on every row, like a shuffled row number"
    }


@pytest.mark.parametrize(
    "name", ["id", "ID", "sample_id", "PatientID", "sampleId", "Sample ID", "index", "row", "uuid"]
)
def test_names_of_identifiers_are_left_out_whatever_they_hold(name):
    table = _table({name: _continuous(20, 0), "a": _continuous(20, 1), "label": [i % 2 for i in range(20)]})
    assert columns_to_leave_out(table, "label") == {name: "named like an identifier"}


@pytest.mark.parametrize("name", ["malic_acid", "fluid", "idle_time", "width", "video"])
def test_names_that_merely_hold_the_letters_id_are_features(name):
    table = _table({name: _continuous(20, 0), "a": _continuous(20, 1), "label": [i % 2 for i in range(20)]})
    assert columns_to_leave_out(table, "label") == {}


def test_measurements_that_differ_on_every_row_are_features():
    """Floats always differ; whole numbers that differ but leave gaps (proline) measure something."""
    n = 50
    sparse = sorted(np.random.default_rng(0).choice(np.arange(200, 2000), n, replace=False).tolist())[::-1]
    sparse[3], sparse[4] = sparse[4], sparse[3]
    table = _table({"a": _continuous(n, 1), "proline": sparse, "label": [i % 2 for i in range(n)]})
    assert columns_to_leave_out(table, "label") == {}


def test_text_and_empty_columns_are_left_out_and_the_label_never():
    n = 12
    table = _table(
        {
            "name": [f"wine {i}" for i in range(n)],
            "colour": ["red", "white", "red"] * 4,
            "a": _continuous(n, 0),
            "b": _continuous(n, 1),
            "kind": ["x", "y"] * 6,
            "": [""] * n,  # every line ends with a separator
        }
    )
    assert columns_to_leave_out(table, "kind") == {
        "name": "a different text on every row, like an identifier",
        "colour": "text, not numbers",
        "Unnamed: 5": "empty on every row",
    }


def test_a_short_file_is_judged_by_names_only():
    """Nine rows numbered 1 to 9 say too little to call the numbers an identifier."""
    table = _table(
        {"a": list(range(1, 10)), "b": _continuous(9, 0), "id": list(range(9)), "label": [0, 1, 0] * 3}
    )
    assert columns_to_leave_out(table, "label") == {"id": "named like an identifier"}
