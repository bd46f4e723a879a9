"""axe-core's accessibility checks on every page, and on the Train page before and after a
run: no violation that axe rates moderate, serious or critical."""

import pytest
from browser_helpers import without_slow_motion

pytestmark = pytest.mark.e2e
Axe = pytest.importorskip("axe_playwright_python.sync_playwright", reason="axe-playwright-python is not installed").Axe

REPORTED = ("moderate", "serious", "critical")
# WCAG 2.1 (1.4.3) asks no contrast of an inactive control; axe cannot tell that a greyed
# label belongs to a disabled widget, so such nodes are left out here.
DISABLED = """(selector) => {
  const node = document.querySelector(selector);
  const widget = node && node.closest("[data-testid='stElementContainer'], .stElementContainer");
  return Boolean(widget && widget.querySelector("[disabled], [aria-disabled='true']"));
}"""


def serious_violations(page) -> list[str]:
    """Each moderate, serious or critical violation on the page, as "rule: the element's HTML"."""
    found = []
    for violation in Axe().run(page).response["violations"]:
        if violation["impact"] not in REPORTED:
            continue
        for node in violation["nodes"]:
            selector = node["target"][-1]
            if violation["id"] == "color-contrast" and page.evaluate(DISABLED, selector):
                continue
            found.append(f"{violation['id']}: {node['html'][:200]}")
    return found


def settled(page, heading: str) -> None:
    page.get_by_role("heading", name=heading).wait_for()
    page.get_by_test_id("stStatusWidget").wait_for(state="detached")
    page.wait_for_timeout(2000)  # charts draw after their elements arrive


def test_the_train_page_before_and_after_a_run(page, app_url):
    page.goto(f"{app_url}/?dataset=rings&epochs=10")
    settled(page, "Train NCA and watch it learn")
    assert serious_violations(page) == []
    without_slow_motion(page)
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True).click()
    page.get_by_role("tab", name="Replay").wait_for()
    settled(page, "Train NCA and watch it learn")
    assert serious_violations(page) == []


@pytest.mark.parametrize(
    ("path", "heading"),
    [
        ("compare", "NCA against PCA and LDA"),
        ("knn_speed", None),
        ("your_data", "Use your own data"),
        ("about", "How NCA works"),
    ],
)
def test_every_other_page(page, app_url, path, heading):
    page.goto(f"{app_url}/{path}")
    if heading is None:
        page.get_by_role("heading").first.wait_for()
        page.get_by_test_id("stStatusWidget").wait_for(state="detached")
        page.wait_for_timeout(2000)
    else:
        settled(page, heading)
    assert serious_violations(page) == []
