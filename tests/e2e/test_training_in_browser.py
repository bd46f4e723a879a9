"""Press Train on rings in real Chromium, watch epochs arrive, stop, use the results."""

import io
import re
import time
from pathlib import Path

import pytest
from browser_helpers import without_slow_motion

from nca_core import datasets, load_model

pytestmark = pytest.mark.e2e
PlaywrightTimeout = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed"
).TimeoutError


def epoch_shown(page) -> float:
    """Epochs done as the Epoch metric shows them ("12", or "12.25" part-way into the next)."""
    metric = page.locator("[data-testid='stMetric']").filter(has_text="Epoch").first
    text = metric.locator("[data-testid='stMetricValue']").inner_text()
    return float(text)


def test_train_watch_stop_replay_download(page, app_url, screenshot):
    # 300 epochs at the page's 10 frames/s cap last 30 s or more, so the run is still going
    # when Stop is pressed even on a loaded machine (the default 60 epochs can end first).
    page.goto(f"{app_url}/?dataset=rings&epochs=300")
    main = page.get_by_test_id("stMainBlockContainer")  # the header has its own "Stop"
    main.get_by_role("button", name="Train", exact=True).click()
    deadline = time.monotonic() + 60
    seen = set()
    while time.monotonic() < deadline:
        try:
            seen.add(epoch_shown(page))
        except Exception:
            pass
        if len(seen) >= 3 and max(seen) >= 3:
            break
        page.wait_for_timeout(150)
    assert len(seen) >= 3, f"epochs drawn: {sorted(seen)}"
    # the live view is a canvas-rendered Vega-Lite chart, updated in place between frames
    page.locator("[data-testid='stVegaLiteChart'] canvas").first.wait_for(timeout=10_000)
    screenshot(page, "train-live")
    stop = main.get_by_role("button", name="Stop")
    assert stop.is_enabled(), f"the run ended before Stop could be pressed (epochs seen: {sorted(seen)})"
    stop.click()
    page.get_by_role("tab", name="Replay").wait_for()
    assert page.locator("[data-testid='stException']").count() == 0
    final_epoch = epoch_shown(page)
    assert 3 <= final_epoch < 300, f"Stop should halt the run early, stopped at epoch {final_epoch}"
    replay = page.locator(".js-plotly-plot").filter(has=page.locator(".slider-container"))
    replay.first.wait_for()
    assert page.get_by_text(re.compile(r"^▶ Play$")).count() >= 1
    screenshot(page, "train-finished")
    page.get_by_role("tab", name="Downloads").click()
    for label in ("Animation (HTML, plays offline)", "Final embedding (CSV)", "Fitted model (.npz)"):
        page.get_by_role("button", name=label).wait_for()

    def download(label: str) -> bytes:
        """Click a download button (its file is built on the click) and read what arrived."""
        try:
            with page.expect_download() as download_info:
                page.get_by_role("button", name=label).click()
        except PlaywrightTimeout as exc:
            raise AssertionError(f"no file arrived after clicking {label!r}") from exc
        return Path(download_info.value.path()).read_bytes()

    lines = download("Final embedding (CSV)").decode().splitlines()
    assert lines[0] == "row,split,label,z1,z2" and len(lines) == 1 + 700 + 300  # every training and test row
    assert sorted({line.split(",")[1] for line in lines[1:]}) == ["test", "train"]
    html = download("Animation (HTML, plays offline)").decode()
    assert "Plotly.newPlot" in html and 'src="http' not in html
    model = load_model(io.BytesIO(download("Fitted model (.npz)")))
    rings = datasets.load("rings")
    assert model.transform(rings.X_test).shape == (len(rings.y_test), 2)


def test_closing_a_tab_mid_run_frees_its_training_slot(browser, app_url):
    """The server has one training slot (conftest). A job that outlived its closed tab would
    hold it for the rest of its 300 epochs (30 s or more), and the next tab would wait in line."""
    first = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = first.new_page()
    page.goto(f"{app_url}/?dataset=rings&epochs=300")
    without_slow_motion(page)  # at 10 frames a second: epoch 3 at once, the run 30 s long
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True).click()
    page.get_by_text(re.compile(r"^Epoch ([3-9]|\d\d+) / 300 · training")).wait_for(timeout=60_000)
    first.close()

    second = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = second.new_page()
    page.goto(f"{app_url}/?dataset=rings&epochs=20")
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True).click()
    clicked = time.monotonic()
    page.get_by_text(re.compile(r"^Epoch \d+ / 20 · (training|finished)")).wait_for(timeout=60_000)
    waited = time.monotonic() - clicked
    second.close()
    assert waited < 10, f"the second tab waited {waited:.1f} s for the slot the closed tab held"


def test_a_reload_during_training_finds_the_run_again(page, app_url):
    """Reloading the page closes the tab that started the run: the reloaded page takes the
    run up again from the address, says so, and the run goes on training there."""
    page.goto(f"{app_url}/?dataset=rings&epochs=300")
    without_slow_motion(page)
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function("() => new URLSearchParams(location.search).has('run')", timeout=60_000)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _epoch_or_none(page) is None:
        page.wait_for_timeout(150)
    before = _epoch_or_none(page)
    assert before is not None
    page.reload()
    page.get_by_text("Found the run this page was showing again: it trains on").wait_for(timeout=60_000)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (_epoch_or_none(page) or 0) <= before + 1:
        page.wait_for_timeout(150)
    assert (_epoch_or_none(page) or 0) > before + 1, "the run did not go on training after the reload"
    main.get_by_role("button", name="Stop").click()
    assert page.locator("[data-testid='stException']").count() == 0


def _epoch_or_none(page) -> float | None:
    try:
        return epoch_shown(page)
    except Exception:
        return None
