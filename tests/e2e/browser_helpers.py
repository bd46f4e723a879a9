"""Small steps the browser tests share."""


def without_slow_motion(page) -> None:
    """Turn the Train page's slow-motion start off in its sidebar (hidden once presenting,
    so before that): a test that needs a run going or finished, not its first seconds,
    need not watch them."""
    from playwright.sync_api import expect  # here: without playwright the tests skip, not fail

    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Slow-motion start").click()  # the switch is drawn over its input
    expect(sidebar.get_by_role("switch", name="Slow-motion start")).not_to_be_checked()
