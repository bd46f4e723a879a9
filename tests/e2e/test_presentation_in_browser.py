"""Presentation mode in real Chromium at projector size: the CSS takes the sidebar and
header away and enlarges the type, the chart and its notice fit on a 1024 x 768 screen,
and switching it off brings everything back (AppTest cannot see CSS)."""

import pytest
from browser_helpers import without_slow_motion

pytestmark = pytest.mark.e2e


def test_a_bookmarked_presentation_fits_a_1024_by_768_projector(browser, app_url):
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{app_url}/?dataset=wine&present=1&epochs=300")
        train = page.get_by_role("button", name="Train", exact=True)
        train.wait_for()
        # the buttons come before the heavy imports, in the same moment as the mode's CSS
        page.get_by_test_id("stSidebar").wait_for(state="hidden", timeout=5_000)
        page.get_by_test_id("stHeader").wait_for(state="hidden", timeout=5_000)
        assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "20px"
        train.click()
        chart = page.get_by_test_id("stVegaLiteChart")
        chart.wait_for()
        page.get_by_text("What to notice").wait_for()
        # every run button, Step included, on the toggle's line: a wrapped row would take 60 px
        # of the picture; the toggle shows its switch alone at this width
        buttons = [page.get_by_role("button", name=name, exact=True) for name in ("Pause", "Step", "Stop")]
        assert page.get_by_role("switch", name="Presentation mode").is_checked()  # named, unworded
        assert not page.get_by_text("Presentation mode", exact=True).is_visible()
        switch = page.locator(".st-key-present").get_by_test_id("stCheckbox")
        rows = {round(b.bounding_box()["y"] + b.bounding_box()["height"] / 2) for b in buttons}
        assert len(rows) == 1 and abs(rows.pop() - _middle(switch)) <= 12
        for element in (chart, page.get_by_text("What to notice"), *buttons):
            box = element.bounding_box()
            assert box["y"] + box["height"] <= 768, "not on the first screen"
        page.get_by_role("button", name="Stop").click()
        switch.click()
        page.get_by_test_id("stSidebar").wait_for(state="visible")
        assert page.evaluate("getComputedStyle(document.documentElement).fontSize") == "16px"
    finally:
        context.close()


def test_turning_presentation_off_leaves_no_projector_sized_chart(page, app_url):
    """The charts drawn on the rerun that turns the mode off are sized from the page's type
    at that moment (Plotly's theme converts rem to pixels once), so the mode's CSS must be
    gone before they are drawn, not at the end of that rerun."""
    page.goto(f"{app_url}/?dataset=wine&epochs=5")
    without_slow_motion(page)
    page.get_by_text("Presentation mode").click()
    page.get_by_test_id("stSidebar").wait_for(state="hidden")
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text(" · finished").wait_for()
    page.get_by_text("Presentation mode").click()
    page.get_by_role("tab", name="Replay").wait_for()
    plots = "[...document.querySelectorAll('.js-plotly-plot')]"
    page.wait_for_function(f"{plots}.filter(p => p._fullLayout).length >= 2")  # the embedding, the replay
    sizes = page.evaluate(f"{plots}.map(p => p._fullLayout.font.size)")
    # 12 px is Streamlit's chart type on a 16 px page; presenting, the page is 20 px (15 px)
    assert sizes and set(sizes) == {12}, sizes


def test_the_presented_picture_fills_the_height_the_window_leaves(browser, app_url):
    """The 2-D picture is as tall as the window leaves below the controls and above the
    regions toggle, on a 1024 x 768 projector and on a 1440 x 900 screen alike (it had one
    height for both; measured in commit a0f5855), and it follows a window that changes size."""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{app_url}/?dataset=wine&epochs=5")
        without_slow_motion(page)
        page.get_by_text("Presentation mode").click()
        page.get_by_test_id("stSidebar").wait_for(state="hidden")
        page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True).click()
        page.get_by_text(" · finished").wait_for()
        chart = page.get_by_test_id("stVegaLiteChart")
        heights = []
        for width, height in ((1024, 768), (1440, 900), (1024, 768)):
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(500)
            box = chart.bounding_box()
            assert height - 100 <= box["y"] + box["height"] <= height, f"{box} in a window {height} tall"
            heights.append(box["height"])
            assert page.get_by_role("button", name="Step", exact=True).is_visible(), width
            shade = page.get_by_text("Shade k-NN decision regions").bounding_box()  # under the chart
            assert shade["y"] + shade["height"] <= height, f"the regions toggle at {shade}"
        assert heights[1] >= heights[0] + 100 and heights[2] == heights[0], heights
    finally:
        context.close()


def _middle(element) -> float:
    box = element.bounding_box()
    return box["y"] + box["height"] / 2


# Every text on the page that the browser draws smaller than ``least`` pixels: HTML whose
# own text is in sight, and SVG text (Plotly's ticks, legend, slider and titles).
_SMALL_TEXT = """least => {
  const small = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const box = el.getBoundingClientRect();
    if (!own || box.width === 0 || box.height === 0 || getComputedStyle(el).visibility === 'hidden') continue;
    const size = parseFloat(el instanceof SVGElement ? (el.getAttribute('font-size') || getComputedStyle(el).fontSize)
                                                    : getComputedStyle(el).fontSize);
    if (size < least) small.push(`${size}px ${el.tagName} "${el.textContent.trim().slice(0, 30)}"`);
  }
  return small;
}"""


def test_every_view_of_a_presented_run_reads_from_the_back_of_a_room(browser, app_url):
    """At 1024 x 768 every text of the page is 18 pixels or more, with the picture, the
    curves, the replay or epochs side by side in the picture's place (each a click away);
    the grid downloads as one PNG."""
    context = browser.new_context(viewport={"width": 1024, "height": 768})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{app_url}/?dataset=wine&epochs=12")
        without_slow_motion(page)
        page.get_by_text("Presentation mode").click()
        page.get_by_test_id("stSidebar").wait_for(state="hidden")
        page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True).click()
        page.get_by_text(" · finished").wait_for()
        page.get_by_test_id("stVegaLiteChart").wait_for()
        assert page.evaluate(_SMALL_TEXT, 18) == []
        page.get_by_text("Class names on the picture").click()
        page.wait_for_timeout(500)
        assert page.evaluate(_SMALL_TEXT, 18) == []
        page.get_by_text("Curves", exact=True).click()
        page.wait_for_function("document.querySelectorAll('[data-testid=stVegaLiteChart]').length === 2")
        assert page.evaluate(_SMALL_TEXT, 18) == []
        plots = "[...document.querySelectorAll('.js-plotly-plot')].filter(p => p._fullLayout)"
        page.get_by_text("Replay", exact=True).click()
        page.wait_for_function(f"{plots}.length === 1 && {plots}[0]._fullLayout.sliders.length === 1")
        page.wait_for_timeout(500)
        assert page.evaluate(_SMALL_TEXT, 18) == []
        page.get_by_text("Epochs side by side", exact=True).click()
        page.wait_for_function(f"{plots}.length === 1 && {plots}[0]._fullLayout.annotations.length === 6")
        page.wait_for_timeout(500)
        assert page.evaluate(_SMALL_TEXT, 18) == []
        fonts = page.evaluate(f"{plots}.map(p => [p._fullLayout.legend.font.size, ...p._fullLayout.annotations.map(a => a.font.size)])")
        assert min(fonts[0]) >= 18, fonts
        with page.expect_download() as download:
            page.get_by_role("button", name="Epochs side by side (PNG, for slides)").click()
        with open(download.value.path(), "rb") as png:
            assert png.read(8) == b"\x89PNG\r\n\x1a\n"
    finally:
        context.close()
