"""Compare and Your data in real Chromium."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "sample-iris.csv"


def test_compare_page_shows_three_panels_and_the_table(page, app_url, screenshot):
    page.goto(f"{app_url}/compare")
    page.get_by_role("heading", name="NCA against PCA and LDA").wait_for()
    for name in ("PCA", "LDA", "NCA"):
        page.get_by_role("heading", name=name, exact=True).wait_for(timeout=120_000)
    page.locator("[data-testid='stDataFrame']").wait_for()
    page.locator(".js-plotly-plot").nth(2).wait_for()  # Plotly draws after the elements arrive
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "compare-page")


def test_upload_bad_then_good_csv(page, app_url, screenshot, tmp_path):
    page.goto(f"{app_url}/your_data")
    page.get_by_role("heading", name="Use your own data").wait_for()
    bad = tmp_path / "bad.csv"
    bad.write_text("a,label\n1,x\nfoo,x\n3,y\n4,y\n")
    page.locator("input[type='file']").set_input_files(str(bad))
    page.get_by_text(
        "This file cannot be used: column 'a' holds 'foo', which is not a number on line 3."
    ).wait_for()
    screenshot(page, "upload-error")
    page.locator("input[type='file']").set_input_files(str(SAMPLE))
    page.get_by_text("105 training and 45 test rows, 4 features, 3 classes", exact=False).wait_for()
    page.get_by_role("button", name="Use this dataset on every page").click()
    page.get_by_role("heading", name="Train NCA and watch it learn").wait_for()
    page.get_by_text("About this dataset: 105 training and 45 test points, 4 features, 3 classes").wait_for()
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "upload-used-on-train")
