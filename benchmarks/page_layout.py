"""Where the pictures sit on the first screen: the Train page's presentation mode and Compare.

Starts `streamlit run app.py` on a free 127.0.0.1 port and, in headless Chromium at each
size, opens the Train page in presentation mode, presses Train and reads the picture's box
after --seconds; then opens Compare and reads each panel's box once all are drawn. Prints
one table: the element's top, height and bottom in pixels and the share of its height on
the first screen. Screenshots go to --shots.

    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/page_layout.py
    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/page_layout.py --dataset wine
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from _server import CHROMIUM_ARGS, served_for_chromium
from compare_sklearn import machine

CHART = "[data-testid='stVegaLiteChart']"
SIZES = ((1024, 768), (1440, 900))


def _row(place: str, size: tuple[int, int], box: dict) -> tuple:
    width, height = size
    top, bottom = box["y"], box["y"] + box["height"]
    on_screen = max(0.0, min(height, bottom) - top) / box["height"]
    return place, f"{width} x {height}", round(top), round(box["height"]), round(bottom), f"{on_screen:.0%}"


def presented_picture(browser, url: str, dataset: str, size, seconds: float, shots: Path) -> tuple:
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(f"{url}/?dataset={dataset}&present=1")
        main = page.get_by_test_id("stMainBlockContainer")
        train = main.get_by_role("button", name="Train", exact=True)
        train.wait_for(timeout=60_000)
        page.wait_for_timeout(3000)  # the page's first run settles
        train.click()
        page.locator(CHART).first.wait_for(timeout=60_000)
        page.wait_for_timeout(seconds * 1000)
        page.screenshot(path=str(shots / f"present-{dataset}-{size[0]}.png"))
        row = _row("Train, presenting: picture", size, page.locator(CHART).first.bounding_box())
        stop = main.get_by_role("button", name="Stop", exact=True)
        if stop.is_enabled():
            stop.click()
        return row
    finally:
        page.close()


def compare_panels(browser, url: str, dataset: str, size, shots: Path) -> list[tuple]:
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        page.goto(f"{url}/compare?dataset={dataset}")
        page.get_by_test_id("stDataFrame").wait_for(timeout=180_000)  # every panel scored
        page.wait_for_timeout(2000)
        page.screenshot(path=str(shots / f"compare-{dataset}-{size[0]}.png"))
        titles = [t.strip() for t in page.locator("[data-testid='stMain'] h3").all_inner_texts()]
        charts = page.locator(CHART)
        if charts.count() != len(titles):  # titles and charts are paired by their order
            raise SystemExit(f"{dataset}: a panel has no 2-D chart (LDA of two classes draws none)")
        return [_row(f"Compare: {title}", size, charts.nth(i).bounding_box()) for i, title in enumerate(titles)]
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist")
    parser.add_argument("--seconds", type=float, default=10.0, help="training before the picture is read")
    parser.add_argument("--shots", type=Path, default=Path("test-artifacts"))
    args = parser.parse_args()
    args.shots.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    rows = []
    with served_for_chromium() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        for size in SIZES:
            rows.append(presented_picture(browser, url, args.dataset, size, args.seconds, args.shots))
            rows.extend(compare_panels(browser, url, args.dataset, size, args.shots))
        browser.close()
    print(f"Machine: {machine()}; headless Chromium; dataset {args.dataset}\n")
    print("| element | window | top (px) | height (px) | bottom (px) | on the first screen |")
    print("| --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(str(v) for v in row) + " |")


if __name__ == "__main__":
    main()
