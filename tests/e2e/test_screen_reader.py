"""What a screen reader meets on the Train page, read from Chromium's own accessibility tree:
each chart by its description rather than point by point, and the run's state in a polite
live region that keeps its element and speaks every few seconds at most."""

import itertools
import time

import pytest
from browser_helpers import without_slow_motion

from app_pages.ui.train.live_status import ANNOUNCE_SECONDS

pytestmark = pytest.mark.e2e

REGION = "[data-testid='stMainBlockContainer'] [aria-live='polite']"
# Every 200 ms, into window.heard: the live region's text, and whether it is still the
# element first seen (a live region replaced by a new element is not heard).
LISTENER = """(region) => {
  window.heard = [];
  const first = document.querySelector(region);
  window.listener = setInterval(() => {
    const now = document.querySelector(region);
    window.heard.push([performance.now() / 1000, now ? now.textContent : null, now === first]);
  }, 200);
}"""


def accessible_names(page) -> list[tuple[str, str]]:
    """(role, name) of every node in Chromium's accessibility tree that a reader can reach."""
    tree = page.context.new_cdp_session(page).send("Accessibility.getFullAXTree")["nodes"]
    return [
        (node.get("role", {}).get("value", ""), node.get("name", {}).get("value", ""))
        for node in tree if not node.get("ignored")
    ]  # fmt: skip


def test_the_run_is_heard_every_few_seconds_and_each_chart_by_its_description(page, app_url):
    page.goto(f"{app_url}/?dataset=rings&epochs=300")
    without_slow_motion(page)
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("button", name="Train", exact=True).click()
    page.locator(REGION).wait_for(state="attached")
    page.evaluate(LISTENER, REGION)
    deadline = time.monotonic() + 16
    while time.monotonic() < deadline:
        page.wait_for_timeout(500)
    heard = page.evaluate("() => { clearInterval(window.listener); return window.heard; }")
    assert all(same for _, _, same in heard), "the live region was replaced by a new element"
    changes = [t for (t, text, _), (_, before, _) in zip(heard[1:], heard) if text != before]
    assert len(changes) >= 2, heard[-1]
    # The region changes every ANNOUNCE_SECONDS of the run, and each change reaches the page
    # with the redraw that carries it: a redraw late by a second on a busy machine shortens
    # one gap and lengthens the next by as much, so their mean keeps the run's pace (the sum
    # of the gaps is the time from the first change to the last) while each gap alone may
    # fall short of it by that delay, never to a burst.
    gaps = [b - a for a, b in itertools.pairwise(changes)]
    assert sum(gaps) / len(gaps) >= ANNOUNCE_SECONDS - 0.5, gaps
    assert min(gaps) >= ANNOUNCE_SECONDS / 2, gaps
    assert heard[-1][1].startswith("Training: epoch ") and " of 300, test 5-NN accuracy " in heard[-1][1]
    main.get_by_role("button", name="Stop").click()
    page.get_by_role("tab", name="Replay").wait_for()
    assert page.locator(REGION).inner_text(timeout=10_000).startswith("Training stopped at epoch ")
    names = accessible_names(page)
    documents = [name for role, name in names if role == "graphics-document"]
    assert documents[0].startswith("Scatter plot of NCA's embedding of Concentric rings"), documents
    assert "ring 1 as circles" in documents[0]
    assert any(name.startswith("Line chart of the objective against epoch: ") for name in documents), documents
    assert not [name for _, name in names if name.startswith("epoch: ")]  # no curve read point by point
