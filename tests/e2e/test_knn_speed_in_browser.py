"""The kNN speed page in real Chromium."""

import pytest

pytestmark = pytest.mark.e2e


def test_another_dataset_clears_the_last_ones_figures_while_it_is_measured(page, app_url, screenshot):
    """Wine's headline, note and chart stayed, greyed, under digits' table while digits' NCA
    trained and its searches ran ("0.00%" test error beside a table of dashes): wine's
    notice on its few features moved every element after it by one, and a container drawn
    again keeps what it held until the run replaces it."""
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"{app_url}/knn_speed?dataset=wine")
    measured = page.get_by_text("Times measured")
    measured.wait_for(timeout=120_000)
    page.locator("[data-testid='stMain'] [data-testid='stSelectbox']").first.click()
    page.keyboard.type("8x8")
    page.keyboard.press("Enter")
    training = page.get_by_text("Training NCA")  # digits' quick model, under the spinner
    saw_training = False
    for _ in range(1200):  # 60 s at most: digits' NCA trains in seconds
        if training.count():
            saw_training = True
            assert measured.count() == 0, "wine's note stayed while digits is measured"
            headline = page.locator("[data-testid='stMetricValue']").all_inner_texts()
            assert headline == ["…"] * 3, f"wine's headline stayed: {headline}"  # digits' place
            assert not page.locator("[data-testid='stPlotlyChart']").filter(visible=True).count(), "wine's chart stayed"
            screenshot(page, "knn-switching-dataset")
        elif saw_training:
            break
        page.wait_for_timeout(50)
    assert saw_training  # digits' figures themselves: the AppTests of the page
