"""A class follows the lecturer's live run: students' browsers open its address and watch the
same run advance, read-only, until the lecturer stops it."""

import time

import pytest
from browser_helpers import without_slow_motion
from test_training_in_browser import epoch_shown

pytestmark = pytest.mark.e2e
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

FOLLOWER_VIEWPORTS = [(1440, 900), (1024, 768), (1440, 900)]


def _epoch_or_none(page) -> float | None:
    try:
        return epoch_shown(page)
    except Exception:
        return None


def _wait_for_epoch(page, above: float, seconds: float = 60) -> float:
    """The epoch the page shows once it is past ``above`` (fails after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        epoch = _epoch_or_none(page)
        if epoch is not None and epoch > above:
            return epoch
        page.wait_for_timeout(150)
    raise AssertionError(f"the page's epoch did not pass {above} within {seconds} s")


def _slow_pace(page, frames_per_second: int) -> None:
    """Set the sidebar's frame cap (10 by default) down to ``frames_per_second``, so the run
    lasts while the students' browsers open it: 300 epochs of rings at 2 a second, 150 s."""
    from playwright.sync_api import expect

    cap = page.get_by_test_id("stSidebar").get_by_role("slider", name="Frames per second cap")
    for _ in range(10 - frames_per_second):
        cap.press("ArrowLeft")
    expect(cap).to_have_attribute("aria-valuetext", str(frames_per_second))
    page.wait_for_timeout(1000)  # the page's rerun with the new cap, before Train is pressed


def test_students_follow_the_lecturers_live_run_read_only(page, app_url, browser, screenshot):
    page.goto(f"{app_url}/?dataset=rings&epochs=300")
    without_slow_motion(page)
    _slow_pace(page, 2)
    lecturer = page.get_by_test_id("stMainBlockContainer")  # the header has its own "Stop"
    lecturer.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function("() => new URLSearchParams(location.search).has('run')", timeout=60_000)
    address = page.url
    _wait_for_epoch(page, 2)
    students = [browser.new_context(viewport={"width": w, "height": h}) for w, h in FOLLOWER_VIEWPORTS]
    try:
        opened_at = epoch_shown(page)  # the lecturer's epoch as the students open the address
        pages = [context.new_page() for context in students]
        for follower in pages:
            follower.set_default_timeout(60_000)
            follower.goto(address)
        followers = []
        for follower in pages:
            main = follower.get_by_test_id("stMainBlockContainer")
            main.get_by_role("button", name="Train my own run").wait_for()
            first = _wait_for_epoch(follower, 0)
            assert first >= opened_at, "a follower replayed the run instead of showing its latest frame"
            followers.append((follower, first))
        for follower, first in followers:
            _wait_for_epoch(follower, first + 2)  # the picture advances as the lecturer's run does
            main = follower.get_by_test_id("stMainBlockContainer")
            for control in ("Pause", "Step", "Stop"):
                assert main.get_by_role("button", name=control).count() == 0, control
            assert follower.locator("[data-testid='stException']").count() == 0
        screenshot(followers[0][0], "following-1440x900")
        screenshot(followers[1][0], "following-1024x768")
        lecturer.get_by_role("button", name="Stop").click()
        for follower, _ in followers:  # the run ended: shown to each as a finished run
            main = follower.get_by_test_id("stMainBlockContainer")
            main.get_by_role("button", name="Train", exact=True).wait_for()
            assert main.get_by_role("button", name="Train", exact=True).is_enabled()
            assert main.get_by_role("button", name="Train my own run").count() == 0
        deadline = time.monotonic() + 30  # the lecturer's page draws the run's end too
        while time.monotonic() < deadline and epoch_shown(followers[0][0]) != epoch_shown(page):
            page.wait_for_timeout(200)
        assert epoch_shown(followers[0][0]) == epoch_shown(page)
    finally:
        for context in students:
            context.close()
