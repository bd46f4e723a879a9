"""The app starts under `streamlit run` and renders in real headless Chromium."""

import urllib.request

import pytest

from tests.conftest import real_data_dir

pytestmark = pytest.mark.e2e


def test_health_endpoint(app_url):
    with urllib.request.urlopen(f"{app_url}/_stcore/health", timeout=5) as response:
        assert response.read().decode().strip() == "ok"


def test_train_page_renders_without_errors(page, app_url, screenshot):
    page.goto(app_url)
    page.get_by_role("heading", name="Train NCA and watch it learn").wait_for()
    page.get_by_role("button", name="Train", exact=True).wait_for()
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0
    assert "NCA Explorer" in page.title()
    screenshot(page, "train-page")


def test_the_run_buttons_share_the_datasets_row_on_a_1024_pixel_screen(page, app_url, screenshot):
    """Beside the sidebar at 1024 x 768 the dataset and Train, Pause, Step and Stop take one
    row (Stop used to wrap below), and the presentation toggle sits on the title's line."""
    page.set_viewport_size({"width": 1024, "height": 768})
    page.goto(app_url)
    title = page.get_by_role("heading", name="Train NCA and watch it learn")
    title.wait_for()
    page.get_by_role("button", name="Train", exact=True).wait_for()
    main = page.locator("[data-testid='stMainBlockContainer']")  # not the header's Stop while the script runs
    dataset = main.locator("[data-testid='stSelectbox']").first.bounding_box()
    buttons = [main.get_by_role("button", name=name, exact=True).bounding_box() for name in ("Train", "Pause", "Step", "Stop")]
    middle = dataset["y"] + dataset["height"]  # the select box's bottom edge, where the buttons align
    for box in buttons:
        assert abs(box["y"] + box["height"] - middle) < 12, (box, dataset)
        assert box["x"] > dataset["x"] + dataset["width"]  # beside it, not below
    assert buttons[-1]["x"] + buttons[-1]["width"] <= 1024
    toggle = page.get_by_text("Presentation mode").bounding_box()
    heading = title.bounding_box()
    assert heading["y"] <= toggle["y"] + toggle["height"] / 2 <= heading["y"] + heading["height"]
    screenshot(page, "train-page-1024")


@pytest.mark.skipif(real_data_dir() is None, reason="needs the Fashion-MNIST files (NCA_DATA_DIR or ../shared/data)")
def test_while_a_dataset_loads_or_a_run_starts_the_page_says_so_instead_of_asking_for_train(
    page, app_url, screenshot
):
    """Picking a dataset this session has not shown disables Train while it loads; the
    picture's place says it is loading, not the start picture's "Press Train" (it did, over
    a disabled button), and after Train, that the run is preparing, over the start picture
    (it said "Press Train" for a second or two)."""
    page.goto(app_url)
    page.get_by_role("heading", name="Train NCA and watch it learn").wait_for()
    page.get_by_text("What will training do to it?").wait_for()
    page.locator("[data-testid='stMain'] [data-testid='stSelectbox']").first.click()
    page.keyboard.type("Fashion")
    page.keyboard.press("Enter")
    # both texts read in one look: two lookups apart could straddle the page's next run
    # (it said "Loading" at the first and "Press Train" at the second, never both at once)
    look = """() => [document.body.innerText.includes("Loading Fashion-MNIST"),
                     document.body.innerText.includes("Press Train to see")]"""
    saw_loading = False
    for _ in range(400):  # 20 s at most: the files decode in a second or two
        showing_loading, asking_for_train = page.evaluate(look)
        if showing_loading:
            saw_loading = True
            assert not asking_for_train
            screenshot(page, "train-loading")
        elif saw_loading:
            break
        page.wait_for_timeout(50)
    assert saw_loading
    train = page.get_by_role("button", name="Train", exact=True)
    train.and_(page.locator(":enabled")).wait_for()
    train.click()  # while the run prepares, the progress line says so, not "Press Train"
    page.get_by_text("Preparing the run").wait_for()
    for _ in range(40):
        assert page.get_by_text("Press Train to see").count() == 0
        page.wait_for_timeout(50)
    # scoped to the page: Streamlit's header shows a Stop of its own while a rerun is slow
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop", exact=True).click()
