"""Your data in real Chromium: a student's wine file, numbered by an id column and with an
empty cell, at a laptop's 1024 x 768."""

import numpy as np
import pytest
from sklearn import datasets as sk

pytestmark = pytest.mark.e2e


def test_a_file_with_an_id_column_and_an_empty_cell_trains_on_its_measurements(
    page, app_url, screenshot, tmp_path
):
    data = sk.load_wine(as_frame=True).frame.rename(columns={"target": "class"})
    data.insert(0, "sample_id", np.arange(1, len(data) + 1))
    table = data.astype(str)
    table.loc[15, "alcohol"] = ""
    path = tmp_path / "wine.csv"
    table.to_csv(path, index=False)
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(f"{app_url}/your_data")
    page.get_by_role("heading", name="Use your own data").wait_for()
    page.locator("input[type='file']").set_input_files(str(path))
    page.get_by_text("Guessed class: its name is a usual name for class labels").wait_for()
    page.get_by_text("Left out by default (sample_id: named like an identifier)").wait_for()
    page.get_by_text("124 training and 53 test rows, 13 features, 3 classes").wait_for()
    page.get_by_text("Dropped 1 row with missing values (line 17); missing cells: 1 in 'alcohol'").wait_for()
    # the file's first rows: the table's code loads in the browser on its first use
    page.locator("[data-testid='stDataFrame']").first.wait_for()
    assert page.locator("[data-testid='stDataFrame']").count() == 1
    screenshot(page, "your-data-wine-with-id")
    leave_out = page.get_by_test_id("stMultiSelect")
    leave_out.get_by_role("button", name="sample_id").click()  # a chip's x: keep the id after all
    page.get_by_text("124 training and 53 test rows, 14 features, 3 classes").wait_for()
    page.get_by_role("button", name="Use this dataset on every page").click()
    page.get_by_role("heading", name="Train NCA and watch it learn").wait_for()
    page.get_by_text("About this dataset: 124 training and 53 test points, 14 features, 3 classes").wait_for()
    assert page.locator("[data-testid='stException']").count() == 0
