"""MNIST's default run on the Train page, in a real browser: when the picture comes, where it
sits on screen, how far it has got after 30 s, when the accuracy first shows 90% and when
the run ends; ``--encoder mlp`` for the page's network run.

Starts `streamlit run app.py` on a free 127.0.0.1 port, opens the Train page on MNIST in
headless Chromium at the given size, presses Train with the page's defaults and prints a
table: seconds from the click to the first chart, the chart's top and the share of its
height on the first screen, the status line at 3, 10 and 30 s, and seconds to "finished".
Screenshots go to --shots; the table is kept in results/train_page_mnist.json
(``_results``) under the window's size.

    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/train_page_mnist.py
    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/train_page_mnist.py --size 1440x900
    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/train_page_mnist.py --encoder mlp
    .venv/bin/python benchmarks/train_page_mnist.py --quick    # the rings demo instead; kept nowhere
"""

from __future__ import annotations

import argparse
import re
import shutil
import time
from pathlib import Path

from _results import Table, machine
from _server import CHROMIUM_ARGS, served_for_chromium

CHART = "[data-testid='stVegaLiteChart'], [data-testid='stPlotlyChart']"
STATUS = re.compile(r"^Epoch [\d.]+ / \d+ · .*")
MOMENTS = (3, 10, 30)
_ACCURACY = r"""() => { for (const m of document.querySelectorAll("[data-testid='stMetric']")) {
        if (/\d-NN/.test(m.innerText)) {
            const v = m.querySelector("[data-testid='stMetricValue']");
            return v ? v.innerText : null; } } return null; }"""


def _status(page) -> str:
    text = page.evaluate(
        """() => { for (const n of document.querySelectorAll("[data-testid='stProgress'] p, p")) {
                 if (/^Epoch [\\d.]+ \\/ \\d+/.test(n.innerText)) return n.innerText; } return ""; }"""
    )
    return " ".join(text.split())


def _on_screen(page, height: int) -> tuple[float, float]:
    box = page.locator(CHART).first.bounding_box()
    return box["y"], (min(height, box["y"] + box["height"]) - box["y"]) / box["height"]


def measure(url: str, width: int, height: int, shots: Path, limit: float, dataset: str = "mnist", encoder: str = "linear") -> list[tuple[str, str]]:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{url}/?dataset={dataset}&encoder={encoder}")
        train = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True)
        train.wait_for(timeout=60000)
        page.wait_for_timeout(3000)  # the page's first run settles
        train.click()
        clicked = time.monotonic()
        page.locator(CHART).first.wait_for(timeout=60000)
        rows.append(("first chart after Train", f"{time.monotonic() - clicked:.1f} s"))
        rows += _follow(page, clicked, height, shots, f"{dataset}-{encoder}-{width}", limit)
        page.wait_for_timeout(2000)
        page.screenshot(path=str(shots / f"{dataset}-{encoder}-{width}-end.png"))
        browser.close()
    return rows


def _follow(page, clicked: float, height: int, shots: Path, name: str, limit: float) -> list[tuple[str, str]]:
    """Poll the page until the run ends: the status and a screenshot at each of ``MOMENTS``,
    and when the accuracy first reads 90% or more."""
    rows, moments, ninety = [], list(MOMENTS), None
    while time.monotonic() - clicked < limit:
        now = time.monotonic() - clicked
        value = page.evaluate(_ACCURACY)
        if ninety is None and value and value.rstrip("%").replace(".", "", 1).isdigit() and float(value.rstrip("%")) >= 90:
            ninety = now
            rows.append(("accuracy first at 90% or more", f"{now:.1f} s ({value})"))
        if moments and now >= moments[0]:
            top, share = _on_screen(page, height)
            rows.append((f"at {moments[0]} s", f"chart top y = {top:.0f}, {share:.0%} on screen; {_status(page)}"))
            page.screenshot(path=str(shots / f"{name}-{moments.pop(0)}s.png"))
        if "· finished ·" in _status(page):
            rows.append(("run finished after Train", f"{now:.1f} s; {_status(page)}"))
            break
        page.wait_for_timeout(250)
    if ninety is None:
        rows.append(("accuracy first at 90% or more", "never"))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1024x768", help="viewport, WIDTHxHEIGHT (default 1024x768)")
    parser.add_argument("--shots", type=Path, default=Path("test-artifacts"))
    parser.add_argument("--limit", type=float, default=600, help="seconds to wait for the run to end")
    parser.add_argument("--encoder", default="linear", help="the map: linear (the page's default) or mlp")
    parser.add_argument("--quick", action="store_true", help="the rings demo instead of MNIST; kept nowhere")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    args.shots.mkdir(parents=True, exist_ok=True)
    print(f"machine: {machine()}; headless Chromium {width} x {height}\n")
    with served_for_chromium() as url:
        rows = measure(url, width, height, args.shots, args.limit, "rings" if args.quick else "mnist", args.encoder)
    name = args.size if args.encoder == "linear" else f"{args.size}-{args.encoder}"
    table = Table("train_page_mnist", name, ["measure", "value"], keep=not args.quick)
    for name, value in rows:
        table.add(name, value)
    table.save()


if __name__ == "__main__":
    main()
