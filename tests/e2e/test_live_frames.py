"""What an audience sees in a real browser: the start frame first, a visible journey on the
rings, frames within an epoch on MNIST, and Stop acting part-way through an epoch."""

import re
import time

import pytest

from tests.conftest import real_data_dir

pytestmark = pytest.mark.e2e

STATUS = re.compile(r"^Epoch ([\d.]+) / (\d+) · ([a-z ]+)")


def status(page) -> tuple[float, str] | None:
    """(epochs done, state) from the progress line, read in one round trip."""
    text = page.evaluate(
        """() => { for (const n of document.querySelectorAll("[data-testid='stProgress'] p, p")) {
                 if (/^Epoch [\\d.]+ \\/ \\d+/.test(n.innerText)) return n.innerText; } return null; }"""
    )
    match = STATUS.match(text or "")
    return (float(match.group(1)), match.group(3).strip()) if match else None


def watch(page, seconds: float, until=lambda seen: False) -> list[tuple[float, float]]:
    """(time, epochs done) each time the page shows a new frame, for ``seconds``."""
    start, seen = time.monotonic(), []
    while time.monotonic() - start < seconds:
        now = status(page)
        if now is not None and (not seen or now[0] != seen[-1][1]):
            seen.append((time.monotonic(), now[0]))
            if until(seen):
                break
        page.wait_for_timeout(50)
    return seen


def press(page, name: str) -> None:
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name=name, exact=True).click()


def test_rings_show_the_start_then_a_journey_of_seconds(page, app_url, screenshot):
    page.goto(f"{app_url}/?dataset=rings")
    press(page, "Train")
    seen = watch(page, 30, until=lambda s: s[-1][1] >= 6)
    assert seen and seen[0][1] == 0, f"first frame on screen: {seen[:3]}"
    assert any(0 < epochs < 1 for _, epochs in seen)  # frames within the first epochs
    journey = next(t for t, epochs in seen if epochs >= 6) - seen[0][0]
    assert journey >= 4.0, f"epoch 0 to 6 took only {journey:.1f} s on screen"
    screenshot(page, "train-journey")
    press(page, "Stop")


@pytest.mark.skipif(real_data_dir() is None, reason="needs the MNIST files (NCA_DATA_DIR or ../shared/data)")
def test_mnist_draws_frames_within_an_epoch_and_stops_part_way_through_one(page, app_url, screenshot):
    """What the page does on a large set; how fast it does it (a frame every 2 s, Stop within
    1 s) is measured by benchmarks/app_live.py, not asserted here."""
    page.goto(f"{app_url}/?dataset=mnist")
    page.get_by_text("About this dataset").wait_for(timeout=180_000)
    press(page, "Train")
    page.get_by_text(STATUS).wait_for(timeout=120_000)
    seen = watch(page, 60, until=lambda s: len(s) >= 4)
    assert len(seen) >= 4, f"frames seen: {seen}"
    assert any(epochs % 1 for _, epochs in seen)  # the frames come within an epoch
    screenshot(page, "train-mnist-live")
    press(page, "Stop")
    stopped = re.compile(r"^Epoch ([\d.]+) / \d+ · stopped")
    page.get_by_text(stopped).wait_for(timeout=60_000)
    epochs, state = status(page)
    assert state == "stopped" and epochs % 1, f"stopped at epoch {epochs}: Stop waited for the epoch to end"


def test_pause_and_step_take_effect_whatever_the_moment_of_the_click(page, app_url, screenshot):
    """Pause clicked at random moments after Train, from before the run has a job to the
    slow-motion start (a click once went unanswered while the page was still starting the
    run); then Step trains exactly one epoch, from a part-way frame too."""
    import random

    moments = random.Random(26).sample([x / 10 for x in range(1, 45)], 6)
    page.goto(f"{app_url}/?dataset=rings&epochs=300")
    for moment in moments:
        press(page, "Train")
        page.wait_for_timeout(moment * 1000)
        step = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Step")
        where = step.bounding_box()["x"]
        press(page, "Pause")
        resume = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Resume")
        resume.wait_for(timeout=8000)
        assert step.bounding_box()["x"] == where, "Step moved when Pause became Resume"
        page.wait_for_function(
            """() => [...document.querySelectorAll("[data-testid='stProgress'] p, p")]
                     .some(n => / · paused · /.test(n.innerText))""",
            timeout=8000,
        )
        held = status(page)
        page.wait_for_timeout(600)
        assert status(page) == held, f"Pause clicked {moment} s after Train did not hold the run"
        press(page, "Step")
        page.wait_for_function(
            """(start) => [...document.querySelectorAll("[data-testid='stProgress'] p, p")].some(n => {
                 const m = /^Epoch ([\\d.]+) \\/ \\d+ · paused/.exec(n.innerText);
                 return m && parseFloat(m[1]) > start; })""",
            arg=held[0],
            timeout=8000,
        )
        stepped = status(page)
        assert stepped[0] == pytest.approx(held[0] + 1), f"Step from {held[0]} ended at {stepped[0]}"
        press(page, "Stop")
        page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True).wait_for()
        page.wait_for_function(
            """() => ![...document.querySelectorAll("button")].some(b => b.innerText.includes("Train") && b.disabled)""",
            timeout=8000,
        )
    screenshot(page, "pause-at-random-moments")


def _dark_pixels_around(page, x: float, y: float, radius: int = 14) -> int:
    """``_dark_pixels`` in a square around (x, y) on screen."""
    return _dark_pixels(page.screenshot(clip={"x": x - radius, "y": y - radius, "width": 2 * radius, "height": 2 * radius}))


# The 2-D picture's chart. Its box, not its canvas's (the same on screen): Vega builds a new
# canvas when the axes refit, and a canvas looked up just before that is gone from the page
# by the time its box is asked for (bounding_box() gives None).
PICTURE = ".st-key-embedding [data-testid='stVegaLiteChart']"


def _a_point_under_the_pointer(page) -> tuple[float, float]:
    """Somewhere on the picture where the pointer shows a point (Vega's pointer cursor)."""
    box = page.locator(PICTURE).bounding_box()
    pointer = "() => [document.body, ...document.querySelectorAll('.vega-embed, canvas')].some(e => e.style.cursor === 'pointer')"
    for fy in [0.5 + i / 40 for i in range(-8, 9)]:
        for fx in [0.5 + i / 50 for i in range(-12, 13)]:
            x, y = box["x"] + fx * box["width"], box["y"] + fy * box["height"]
            page.mouse.move(x, y)
            page.wait_for_timeout(10)
            if page.evaluate(pointer):
                return x, y
    raise AssertionError("no point found under the pointer")


def test_a_point_clicked_while_training_keeps_its_ring_as_the_run_goes_on(page, app_url, screenshot):
    """Click a point mid-run: the ring (and its p_ij lines) are drawn on the live chart and
    follow the point through later frames; the chart survives the run's end."""
    page.goto(f"{app_url}/?dataset=rings&epochs=300")
    press(page, "Train")
    watch(page, 20, until=lambda s: s[-1][1] >= 2)
    press(page, "Pause")  # find a point on a still picture, then go on
    # Resume shows once the pause is asked for; the run stops at its next frame, which the
    # progress line then calls paused
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Resume").wait_for()
    page.get_by_text(re.compile(r"^Epoch [\d.]+ / \d+ · paused")).wait_for(timeout=8000)
    x, y = _a_point_under_the_pointer(page)
    before = _dark_pixels_around(page, x, y)
    page.mouse.click(x, y)
    page.wait_for_timeout(1500)
    assert _dark_pixels_around(page, x, y) > before + 20, "no ring around the clicked point"
    press(page, "Resume")
    start = status(page)[0]
    watch(page, 20, until=lambda s: s[-1][1] >= start + 3)
    page.mouse.move(0, 0)
    screenshot(page, "train-picked-point")
    box = page.locator(PICTURE).bounding_box()
    marked = _dark_pixels(page.screenshot(clip=box))
    page.mouse.click(box["x"] + 0.15 * box["width"], box["y"] + 0.5 * box["height"])  # the empty background
    page.wait_for_timeout(2000)
    page.mouse.move(0, 0)
    cleared = _dark_pixels(page.screenshot(clip=box))
    assert marked > cleared + 20, f"the ring did not follow the point ({marked} dark pixels, {cleared} without it)"
    press(page, "Stop")


def _dark_pixels(png: bytes) -> int:
    """Near-black grey pixels in a screenshot of the chart: the ring and the lines. The axes'
    greys are lighter, and a class colour, dark as some are (a deep red), is no grey."""
    import io

    import numpy as np
    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    grey = rgb.max(axis=2) - rgb.min(axis=2) < 24
    return int((grey & (rgb.mean(axis=2) < 60)).sum())
