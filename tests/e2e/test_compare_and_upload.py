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


_SELECTED = """() => Array.from(document.querySelectorAll('.js-plotly-plot'), plot =>
    plot.data.flatMap(trace => (trace.selectedpoints || []).map(i => trace.customdata[i])).sort((a, b) => a - b))"""


def test_a_box_over_one_panel_highlights_the_same_points_in_every_panel(page, app_url, screenshot):
    page.goto(f"{app_url}/compare")
    plots = page.locator(".js-plotly-plot")
    plots.nth(2).wait_for(timeout=120_000)
    page.get_by_test_id("stStatusWidget").wait_for(state="detached")
    area = plots.nth(2).locator(".nsewdrag").first.bounding_box()  # NCA's plot area
    page.mouse.move(area["x"] + area["width"] * 0.5, area["y"] + area["height"] * 0.15)
    page.mouse.down()  # a drag starts a box: the panels open in select mode
    page.mouse.move(area["x"] + area["width"] * 0.9, area["y"] + area["height"] * 0.6, steps=8)
    page.mouse.up()
    summary = page.get_by_text(" selected in NCA: ")
    summary.wait_for()
    page.get_by_test_id("stStatusWidget").wait_for(state="detached")
    count = int(summary.inner_text().split(" of ")[0].replace(",", ""))
    selected = page.evaluate(_SELECTED)
    assert len(selected) == 3 and 0 < count < 700
    assert selected[0] == selected[1] == selected[2] and len(selected[0]) == count
    screenshot(page, "compare-brushed")
    page.get_by_role("button", name="Clear selection").click()
    page.get_by_text("Drag a box").wait_for()
    page.get_by_test_id("stStatusWidget").wait_for(state="detached")
    assert page.evaluate(_SELECTED) == [[], [], []]
    assert page.locator("[data-testid='stException']").count() == 0


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
