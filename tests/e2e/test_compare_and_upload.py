"""Compare and Your data in real Chromium."""

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from nca_core.plots.colours import class_colors

pytestmark = pytest.mark.e2e

SAMPLE = Path(__file__).resolve().parents[2] / "app_pages" / "assets" / "sample-iris.csv"


CHARTS = "[data-testid='stVegaLiteChart']"
NCA_PANEL = 0  # the panels: NCA, PCA, LDA (NCA first, on the first screen at 1024 pixels)
# The rings' five class colours as RGB, from the palette every chart shares
CLASS_COLOURS = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in class_colors(5)]


def _pixels(chart) -> np.ndarray:
    """The chart's canvas as an (h, w, 3) array of RGB values."""
    return np.asarray(Image.open(io.BytesIO(chart.locator("canvas").screenshot())).convert("RGB")).astype(int)


def _class_coloured(pixels: np.ndarray, colours=CLASS_COLOURS) -> np.ndarray:
    """Where a point is drawn in one of the classes' colours (a faded point is grey)."""
    return np.any([np.abs(pixels - c).sum(2) < 60 for c in colours], axis=0)


def _coloured_counts(page) -> list[int]:
    """Class-coloured pixels in each 2-D panel, legend left out (its top quarter)."""
    counts = []
    for chart in page.locator(CHARTS).all():
        pixels = _pixels(chart)
        counts.append(int(_class_coloured(pixels[len(pixels) // 4 :]).sum()))
    return counts


def _settled(page) -> None:
    """The rerun has ended and Vega has drawn its data: the panels' colours hold still
    across two reads (a fixed second was too short under a loaded machine's full suite)."""
    page.get_by_test_id("stStatusWidget").wait_for(state="detached")
    page.wait_for_timeout(1000)  # Vega draws the new table after the rerun's data arrives
    last = _coloured_counts(page)
    for _ in range(20):
        page.wait_for_timeout(500)
        now = _coloured_counts(page)
        if now == last:
            return
        last = now


def test_compare_page_shows_three_vega_panels_at_one_scale_and_the_table(page, app_url, screenshot):
    page.set_viewport_size({"width": 1024, "height": 768})  # narrow panels: a stretched axis shows
    page.goto(f"{app_url}/compare")
    page.get_by_role("heading", name="NCA against PCA and LDA").wait_for()
    for name in ("PCA", "LDA", "NCA"):
        page.get_by_role("heading", name=name, exact=True).wait_for(timeout=120_000)
    page.locator("[data-testid='stDataFrame']").wait_for()
    page.locator(CHARTS).nth(2).locator("canvas").wait_for()  # Vega draws after the elements arrive
    assert page.locator(CHARTS).count() == 3 and page.locator(".js-plotly-plot").count() == 0
    _settled(page)
    nca = page.locator(CHARTS).nth(NCA_PANEL)
    box = nca.bounding_box()  # NCA's whole picture on the first screen
    assert box["y"] + box["height"] <= 768, box
    nca.scroll_into_view_if_needed()
    pixels = _pixels(nca)
    plot = pixels[len(pixels) // 4 :]  # below the legend
    ys, xs = np.nonzero(_class_coloured(plot, CLASS_COLOURS[:1]))  # NCA's innermost ring, round
    width, height = xs.max() - xs.min(), ys.max() - ys.min()
    assert len(xs) > 100 and 0.8 < width / height < 1.25, (width, height, pixels.shape)
    assert page.locator("[data-testid='stException']").count() == 0
    screenshot(page, "compare-page")


def test_a_box_over_one_panel_highlights_the_same_points_in_every_panel(page, app_url, screenshot):
    page.goto(f"{app_url}/compare")
    charts = page.locator(CHARTS)
    charts.nth(2).locator("canvas").wait_for(timeout=120_000)
    _settled(page)
    before = _coloured_counts(page)
    assert len(before) == 3 and min(before) > 500
    charts.nth(NCA_PANEL).scroll_into_view_if_needed()
    area = charts.nth(NCA_PANEL).locator("canvas").bounding_box()  # legend on top
    page.mouse.move(area["x"] + area["width"] * 0.5, area["y"] + area["height"] * 0.3)
    page.mouse.down()  # a plain drag draws a box
    page.mouse.move(area["x"] + area["width"] * 0.9, area["y"] + area["height"] * 0.7, steps=8)
    page.mouse.up()
    summary = page.get_by_text(" selected in NCA: ")
    summary.wait_for()
    _settled(page)
    count = int(summary.inner_text().split(" of ")[0].replace(",", ""))
    assert 0 < count < 700
    brushed = _coloured_counts(page)
    for panel, (was, now) in enumerate(zip(before, brushed)):  # every panel: the others fade to grey
        assert 0 < now < 0.9 * was, (panel, before, brushed)
    screenshot(page, "compare-brushed")
    page.get_by_role("button", name="Clear selection").click()
    page.get_by_text("Drag a box").wait_for()
    _settled(page)
    cleared = _coloured_counts(page)
    assert all(abs(now - was) < 0.1 * was for was, now in zip(before, cleared)), (before, cleared)
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


def test_on_image_data_the_panels_draw_their_points_and_a_hovered_point_shows_its_picture(
    page, app_url, screenshot
):
    """Digits are 8 x 8 images: each panel's points come with their pictures (as a table of
    its own, which once left the panels empty) and hovering one shows its digit."""
    page.goto(f"{app_url}/compare?dataset=digits")
    charts = page.locator(CHARTS)
    charts.nth(2).wait_for(timeout=120_000)
    page.wait_for_timeout(1500)
    panel = charts.nth(0)
    digit_colours = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in class_colors(10)]
    assert _class_coloured(_pixels(panel), digit_colours).sum() > 500  # points are drawn
    box = panel.locator("canvas").bounding_box()
    tooltip = page.locator("#vg-tooltip-element img")
    for dx in range(-120, 120, 4):  # across the middle, until the pointer is on a point
        page.mouse.move(box["x"] + box["width"] / 2 + dx, box["y"] + box["height"] * 0.6)
        page.wait_for_timeout(40)
        if tooltip.count():
            break
    assert tooltip.count() == 1
    screenshot(page, "compare-hover-picture")


def test_another_dataset_clears_the_last_ones_notes_and_table_while_its_nca_trains(page, app_url, screenshot):
    """Picking another dataset redraws the panels at once, but the notes and the table come
    only once NCA is trained: meanwhile the previous dataset's stayed, greyed, below the
    new panels (rings' "700 training points" under digits' pictures)."""
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{app_url}/compare?dataset=rings&d=3")  # in 3-D: digits' 2-D fit is another test's
    rings_note = page.get_by_text("a fit on all 700 training points")
    rings_note.wait_for(timeout=120_000)
    page.locator("[data-testid='stMain'] [data-testid='stSelectbox']").first.click()
    page.keyboard.type("8x8")
    page.keyboard.press("Enter")
    training = page.get_by_text("Training NCA")  # its progress bar, in the NCA panel's place
    saw_training = False
    for _ in range(1200):  # 60 s at most: digits' NCA trains in seconds
        if training.count():
            saw_training = True
            assert rings_note.count() == 0, "the rings' note stayed below digits' panels"
            screenshot(page, "compare-switching-dataset")
        elif saw_training:
            break
        page.wait_for_timeout(50)
    assert saw_training  # digits' notes and table themselves: the AppTests of the page
