"""Take the documentation's screenshots of the app and make them small enough to commit.

Serves the app with ``streamlit run app.py`` on a free 127.0.0.1 port (the real datasets
from ``NCA_DATA_DIR``, or ../shared/data beside the clone), drives it in headless Chromium
at 1440 x 900 with Playwright, and writes each shot through ``shrink.shrink``: the
README's ``assets/screenshot-train.png`` and every ``docs/images/<name>.png`` that
docs/app.md shows. ``make docs-images`` runs it; a run takes a few minutes.

    python docs/images/take.py                  # every shot
    python docs/images/take.py about present    # only these
    python docs/images/take.py --url http://127.0.0.1:8501 about   # against a running app
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from shrink import shrink

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _server import serve

REPO = Path(__file__).resolve().parents[2]
IMAGES = Path(__file__).resolve().parent
VIEWPORT = {"width": 1440, "height": 900}
MAIN = "[data-testid='stMainBlockContainer']"  # the header has a "Stop" of its own
BAD_CSV = "a,label\n1,x\nfoo,x\n3,y\n4,y\n"


def _press(page, name: str) -> None:
    page.locator(MAIN).get_by_role("button", name=name, exact=True).click()


def _epochs_done(page) -> float:
    """Epochs done, from the progress line ("Epoch 12.5 / 300 · training · ...")."""
    line = page.get_by_text("Epoch ", exact=False).filter(has_text=" / ").first.inner_text()
    return float(line.split()[1])


def _wait_for_epochs(page, epochs: float, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if _epochs_done(page) >= epochs:
                return
        except Exception:  # the line is redrawn between two reads
            pass
        page.wait_for_timeout(200)
    raise TimeoutError(f"the run did not reach epoch {epochs} in {timeout_s:.0f} s")


def _settle(page, ms: int = 1500) -> None:
    """Let Vega-Lite finish its transitions and Streamlit its last redraw."""
    page.wait_for_timeout(ms)


def _scroll(page, locator, top: int = 72) -> None:
    """Scroll the page so ``locator``'s top edge is ``top`` pixels down the window, just
    under Streamlit's header (as far as the page can scroll)."""
    box = locator.bounding_box()
    page.locator("[data-testid='stMain']").evaluate(f"main => main.scrollBy(0, {box['y'] - top})")
    page.wait_for_timeout(500)


def _bring_up(page, locator, margin: int = 4) -> None:
    """Scroll just far enough for ``locator``'s bottom edge to be ``margin`` pixels inside
    the window."""
    box = locator.bounding_box()
    below = box["y"] + box["height"] + margin - VIEWPORT["height"]
    if below > 0:
        page.locator("[data-testid='stMain']").evaluate(f"main => main.scrollBy(0, {below})")
        page.wait_for_timeout(500)


def _whole_picture(page) -> None:
    """The Train page from its title to the picture's axis title (z1) needs 16 pixels more
    than a 900-pixel window leaves under Streamlit's header bar (a blank band with the app's
    menu), so the bar is left out of the shot and the page scrolled by those pixels."""
    page.add_style_tag(content="[data-testid='stHeader'] {display: none}")
    _bring_up(page, page.locator("[data-testid='stVegaLiteChart']").first)


def train_rings(page, url: str) -> None:
    """The README's picture: the rings part-way through a run, classes already apart."""
    page.goto(f"{url}/?dataset=rings&epochs=60")
    page.get_by_text("What will training do to it?").wait_for()
    _press(page, "Train")
    _wait_for_epochs(page, 12)
    _whole_picture(page)


def train_finished(page, url: str) -> None:
    """After a run on the rings: its epochs side by side, one scale, under the run's tabs."""
    page.goto(f"{url}/?dataset=rings&epochs=30")
    page.get_by_text("What will training do to it?").wait_for()
    _press(page, "Train")
    tab = page.get_by_role("tab", name="Epochs side by side")
    tab.wait_for(timeout=180_000)
    tab.click()
    page.get_by_role("tabpanel").filter(visible=True).locator("[data-testid='stVegaLiteChart'], .js-plotly-plot").first.wait_for()
    _settle(page, 3000)
    _scroll(page, page.get_by_role("tablist"))
    _bring_up(page, page.get_by_role("button", name="Epochs side by side (PNG", exact=False), margin=16)


def train_mnist_live(page, url: str) -> None:
    page.goto(f"{url}/?dataset=mnist")
    page.get_by_text("About this dataset").wait_for(timeout=180_000)
    _press(page, "Train")
    _wait_for_epochs(page, 2.5, timeout_s=240)
    _whole_picture(page)


def present(page, url: str) -> None:
    page.goto(f"{url}/?dataset=rings&epochs=30&present=1")
    page.locator(MAIN).get_by_role("button", name="Train", exact=True).wait_for()
    _press(page, "Train")
    page.get_by_text(" · finished", exact=False).first.wait_for(timeout=180_000)
    _settle(page)


def compare_brushed(page, url: str) -> None:
    page.goto(f"{url}/compare")
    charts = page.locator("[data-testid='stVegaLiteChart']")
    charts.nth(2).locator("canvas").wait_for(timeout=180_000)
    _settle(page, 3000)
    area = charts.first.locator("canvas").bounding_box()
    page.mouse.move(area["x"] + area["width"] * 0.5, area["y"] + area["height"] * 0.3)
    page.mouse.down()  # a plain drag draws a box
    page.mouse.move(area["x"] + area["width"] * 0.9, area["y"] + area["height"] * 0.7, steps=8)
    page.mouse.up()
    page.mouse.move(1200, 140)  # off the panels (no hover mark, no chart toolbar) and the sidebar
    page.get_by_text(" selected in NCA: ").wait_for()
    _settle(page)


def knn_speed(page, url: str) -> None:
    page.goto(f"{url}/knn_speed?dataset=mnist")
    page.get_by_text("Times measured").wait_for(timeout=480_000)
    page.locator(".js-plotly-plot").first.wait_for()
    _settle(page)
    _scroll(page, page.get_by_text("references, float32", exact=False))


def about(page, url: str) -> None:
    page.goto(f"{url}/about")
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=120_000)  # before and after
    _settle(page, 3000)
    _scroll(page, page.get_by_role("heading", name="Who does a point listen to?"))


def upload_error(page, url: str) -> None:
    page.goto(f"{url}/your_data")
    page.get_by_role("heading", name="Use your own data").wait_for()
    page.locator("input[type='file']").set_input_files(
        files=[{"name": "bad.csv", "mimeType": "text/csv", "buffer": BAD_CSV.encode()}]
    )
    error = page.get_by_text("This file cannot be used", exact=False)
    error.wait_for()
    _settle(page)
    _bring_up(page, error, margin=32)  # and the box around it


# name -> (how to reach the moment, where the shot goes)
SHOTS: dict[str, tuple[Callable, Path]] = {
    "train-rings": (train_rings, REPO / "assets" / "screenshot-train.png"),
    "train-finished": (train_finished, IMAGES / "train-finished.png"),
    "train-mnist-live": (train_mnist_live, IMAGES / "train-mnist-live.png"),
    "present": (present, IMAGES / "present.png"),
    "compare-brushed": (compare_brushed, IMAGES / "compare-brushed.png"),
    "knn-speed": (knn_speed, IMAGES / "knn-speed.png"),
    "about": (about, IMAGES / "about.png"),
    "upload-error": (upload_error, IMAGES / "upload-error.png"),
}


def _serve(cache: Path, log: Path) -> tuple[subprocess.Popen, str]:
    """``streamlit run app.py`` on a free port, with a cache of its own (a model or a timing
    kept from an earlier visit would skip what a shot shows); returns once it is healthy."""
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "NCA_CACHE_DIR": str(cache)}
    shared = REPO.parent / "shared" / "data"
    if "NCA_DATA_DIR" not in env and shared.is_dir():
        env["NCA_DATA_DIR"] = str(shared)
    return serve(env, log)


def take(url: str, names: list[str], raw: Path) -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("chromium is not installed (make chromium installs Debian's)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
        for name in names:
            moment, target = SHOTS[name]
            context = browser.new_context(viewport=VIEWPORT)
            page = context.new_page()
            page.set_default_timeout(60_000)
            source = raw / f"{name}.png"
            try:
                moment(page, url)
            except Exception:
                page.screenshot(path=str(raw / f"failed-{name}.png"))  # what the page showed instead
                raise
            page.screenshot(path=str(source))  # the window, as a visitor sees it
            context.close()
            shrink(source, target)
            print(f"{target.relative_to(REPO)}: {target.stat().st_size // 1024} KiB")
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"only these shots, among {', '.join(SHOTS)}")
    parser.add_argument("--url", help="an app already running (its cache may skip what a shot shows)")
    parser.add_argument("--keep", type=Path, help="also keep the full-size shots in this folder")
    args = parser.parse_args()
    names = args.names or list(SHOTS)
    if unknown := [name for name in names if name not in SHOTS]:
        parser.error(f"no shot named {', '.join(unknown)}; the shots are {', '.join(SHOTS)}")
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        raw = args.keep or folder
        raw.mkdir(parents=True, exist_ok=True)
        if args.url:
            take(args.url, names, raw)
            return 0
        server, url = _serve(folder / "cache", folder / "streamlit.log")
        try:
            take(url, names, raw)
        finally:
            server.terminate()
            server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
