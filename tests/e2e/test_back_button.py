"""The browser's Back button: one press from another page brings a page back with the
settings it was left with, Compare's and the Train page's alike."""

import re

import pytest

pytestmark = pytest.mark.e2e

WINE = "UCI wine (13 features, 3 cultivars)"  # as the dataset selector names it


def settled(page) -> None:
    """The page run has ended (Streamlit's running indicator is gone)."""
    page.wait_for_timeout(500)
    page.get_by_test_id("stStatusWidget").wait_for(state="detached", timeout=120_000)


def go_to(page, title: str) -> None:
    page.get_by_test_id("stSidebar").get_by_role("link", name=title).click()
    settled(page)


def compare_settings(page) -> dict:
    main = page.get_by_test_id("stMainBlockContainer")
    return {
        "dataset": main.get_by_role("combobox", name="Dataset").input_value(),
        "k": main.get_by_test_id("stSlider").get_by_role("slider").first.get_attribute("aria-valuetext"),
        "standardised": main.get_by_role("switch", name="Standardise inputs").is_checked(),
        "one scale": main.get_by_role("switch", name="One scale for every panel").is_checked(),
    }


def test_back_to_compare_brings_back_its_dataset_k_and_toggles(page, app_url):
    page.goto(f"{app_url}/compare?dataset=wine")
    page.locator("[data-testid='stDataFrame']").wait_for(timeout=120_000)
    settled(page)
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_text("One scale for every panel").click()  # the switch is drawn over its input
    settled(page)
    main.get_by_text("Standardise inputs").click()
    settled(page)
    main.get_by_test_id("stSlider").get_by_role("slider").first.press("ArrowRight")  # k 5 -> 7
    settled(page)
    left = compare_settings(page)
    assert left == {"dataset": WINE, "k": "7", "standardised": False, "one scale": True}, left
    go_to(page, "Train")
    page.get_by_text("About this dataset").wait_for()
    page.go_back()
    page.get_by_role("heading", name="NCA against PCA and LDA").wait_for()
    page.locator("[data-testid='stDataFrame']").wait_for(timeout=120_000)
    settled(page)
    assert "/compare?" in page.url and re.search(r"[?&]k=7(&|$)", page.url), page.url
    assert compare_settings(page) == left


def test_back_to_the_train_page_brings_back_its_run_settings(page, app_url):
    page.goto(f"{app_url}/?dataset=wine")
    page.get_by_text("About this dataset").wait_for()
    settled(page)
    sidebar = page.get_by_test_id("stSidebar")
    seed = sidebar.get_by_role("spinbutton", name="Seed")
    seed.fill("7")
    seed.press("Enter")
    settled(page)
    sidebar.get_by_text("Standardise inputs").click()
    settled(page)
    standardised = sidebar.get_by_role("switch", name="Standardise inputs").is_checked()
    assert seed.input_value() == "7" and "seed=7" in page.url, page.url
    go_to(page, "Compare")
    page.get_by_role("heading", name="NCA against PCA and LDA").wait_for()
    page.go_back()
    page.get_by_text("About this dataset").wait_for()
    settled(page)
    assert re.search(r"[?&]seed=7(&|$)", page.url), page.url
    assert seed.input_value() == "7"
    assert sidebar.get_by_role("switch", name="Standardise inputs").is_checked() == standardised
    assert (
        page.get_by_test_id("stMainBlockContainer").get_by_role("combobox", name="Dataset").input_value()
        == WINE
    )
