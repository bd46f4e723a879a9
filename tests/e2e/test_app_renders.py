"""The app starts under `streamlit run` and renders in real headless Chromium."""

import urllib.request

import pytest

pytestmark = pytest.mark.e2e


def test_health_endpoint(app_url):
    with urllib.request.urlopen(f"{app_url}/_stcore/health", timeout=5) as response:
        assert response.read().decode().strip() == "ok"


def test_train_page_renders_without_errors(page, app_url, screenshot):
    page.goto(app_url)
    page.get_by_role("heading", name="Train NCA and watch it learn").wait_for()
    page.get_by_role("button", name="Train").wait_for()
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert "NCA Explorer" in page.title()
    screenshot(page, "train-page")
