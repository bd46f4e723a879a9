"""The Train page by keyboard alone in real Chromium: the run buttons keep the focus where the
user acted, and a point is inspected by its number or with Next."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

# The run button (by its Streamlit key) that holds the keyboard focus, if any
FOCUSED = """() => {
  const now = document.activeElement;
  const owner = now && now.closest("[class*='st-key-']");
  const key = owner && [...owner.classList].find((c) => c.startsWith("st-key-"));
  return {key: key || null, tag: now ? now.tagName : null, text: now ? now.innerText.trim() : null};
}"""


def focus_lands_on(page, key: str, label: str) -> None:
    """Wait (a few seconds at most) for the focus to be on the button ``key`` labelled ``label``."""
    seen = None
    for _ in range(100):
        seen = page.evaluate(FOCUSED)
        if seen["key"] == f"st-key-{key}" and seen["tag"] == "BUTTON" and label in seen["text"]:
            return
        page.wait_for_timeout(50)
    raise AssertionError(f"focus is not on {label} ({key}): it is on {seen}")


def tab_to(page, label: str) -> None:
    """Press Tab until the button labelled ``label`` has the focus (as a keyboard user would).
    Tab passes a disabled button by, so first wait for it to be enabled: Train is, once the
    page's first run has ended (the run that loads the data draws it disabled)."""
    button = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name=label, exact=True)
    expect(button).to_be_enabled()
    for _ in range(60):
        page.keyboard.press("Tab")
        seen = page.evaluate(FOCUSED)
        if seen["tag"] == "BUTTON" and seen["text"].endswith(label):
            return
    raise AssertionError(f"Tab never reached {label}")


def test_train_pause_resume_step_and_stop_keep_the_keyboard_focus_where_the_user_acted(page, app_url):
    page.goto(f"{app_url}/?dataset=rings&epochs=300")
    page.get_by_text("What will training do to it?").wait_for()  # the page has settled
    tab_to(page, "Train")
    page.keyboard.press("Enter")
    focus_lands_on(page, "pause-resume", "Pause")  # Train is disabled while its run trains
    page.get_by_text(re.compile(r"^Epoch [1-9][\d.]* / 300 · training")).wait_for()
    page.keyboard.press("Enter")
    page.get_by_text(re.compile(r"· paused")).wait_for()
    focus_lands_on(page, "pause-resume", "Resume")
    page.keyboard.press("Tab")  # to Step
    focus_lands_on(page, "step", "Step")
    page.keyboard.press("Enter")
    page.wait_for_timeout(500)
    focus_lands_on(page, "step", "Step")
    page.keyboard.press("Tab")  # to Stop
    focus_lands_on(page, "stop", "Stop")
    page.keyboard.press("Enter")
    page.get_by_text(re.compile(r"· stopped")).wait_for()
    focus_lands_on(page, "train", "Train")  # Stop is disabled once the run stops
    page.keyboard.press("Enter")  # and Train again at once
    focus_lands_on(page, "pause-resume", "Pause")
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop", exact=True).click()


def test_a_point_is_inspected_by_its_number_and_with_next_and_focus_stays_on_next(page, app_url, screenshot):
    from browser_helpers import without_slow_motion

    page.goto(f"{app_url}/?dataset=rings&epochs=3")
    page.get_by_text("What will training do to it?").wait_for()
    without_slow_motion(page)
    tab_to(page, "Train")
    page.keyboard.press("Enter")
    page.get_by_text(re.compile(r"^Epoch 3 / 3 · finished")).wait_for()
    page.get_by_role("tab", name="Inspect a point").click()
    number = page.get_by_label("Point number", exact=True).and_(page.locator("input"))
    number.fill("12")
    number.press("Enter")
    page.get_by_text("Training point #12,").wait_for()
    page.get_by_text("Lines from training point #12 to").wait_for()  # its lines in the picture
    tab_to(page, "Next")
    page.keyboard.press("Enter")
    page.get_by_text("Training point #13,").wait_for()
    focus_lands_on(page, "inspect-next", "Next")
    assert number.input_value() == "13"
    screenshot(page, "inspect-by-keyboard")
