"""What an audience waits for, in a real browser: first frame, frame rate, Stop, page visits.

Starts `streamlit run app.py` on a free 127.0.0.1 port and drives headless Chromium
(Playwright). Two tables:

* per dataset (default rings and MNIST), with the page's default pace or at full speed:
  seconds from pressing Train to the start frame (epoch 0) on screen, new frames drawn per
  second and the longest gap between frames over a watch window, and seconds from pressing
  Stop to the page saying "stopped";
* per page, on a fresh session: seconds to the first useful content (a chart or table) and
  to the end of the page's first run (Streamlit's running indicator gone), opening the
  page's link in a fresh browser; and seconds to first content when the page is clicked in
  the sidebar after opening the app at Train (the browser then has Streamlit's scripts).

    NCA_DATA_DIR=/path/to/data python benchmarks/app_live.py
    python benchmarks/app_live.py --datasets rings --watch 15 --full-speed
    NCA_DATA_DIR=/path/to/data python benchmarks/app_live.py --pages-only --page-dataset usps
    python benchmarks/app_live.py --quick     # rings watched 3 s, no page visits; kept nowhere

Both tables are kept in results/app_live.json (``_results``): "frames" (with the datasets
and pace where they are not the default) and "pages-<dataset>".
"""

from __future__ import annotations

import argparse
import itertools
import re
import shutil
import time

from _results import Table, key, machine
from _server import CHROMIUM_ARGS, served_for_chromium

_STATUS = """() => {
    for (const node of document.querySelectorAll("[data-testid='stProgress'] p, p")) {
        const match = /^Epoch ([\\d.]+) \\/ \\d+ · ([a-z ]+)/.exec(node.innerText);
        if (match) return [parseFloat(match[1]), match[2].trim()];
    }
    return null;
}"""
# The first thing worth looking at on each page (Train's is its Train button: nothing is
# drawn before a run).
PAGES = {
    "Train": ("", "[data-testid='stMainBlockContainer'] button:has-text('Train')"),
    "Compare": ("compare", "[data-testid='stVegaLiteChart'] canvas, .js-plotly-plot"),  # 2-D: Vega-Lite
    "kNN speed": ("knn_speed", ".js-plotly-plot, [data-testid='stDataFrame'], [data-testid='stMetric']"),
    "Your data": ("your_data", "[data-testid='stFileUploader']"),
    "How NCA works": ("about", ".js-plotly-plot"),
}


def _browser(p):
    return p.chromium.launch(executable_path=shutil.which("chromium"), headless=True, args=CHROMIUM_ARGS)


def live_run(url: str, dataset: str, watch: float, full_speed: bool) -> dict:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(300_000)
        query = "&pace=0" if full_speed else ""
        page.goto(f"{url}/?dataset={dataset}{query}")
        page.get_by_text("About this dataset").wait_for()
        if full_speed:
            page.get_by_text("Slow-motion start").click()
        main = page.get_by_test_id("stMainBlockContainer")
        page.wait_for_timeout(1000)
        clicked = time.monotonic()
        main.get_by_role("button", name="Train", exact=True).click()
        seen: list[tuple[float, float]] = []
        while time.monotonic() - clicked < 300 and (not seen or time.monotonic() - seen[0][0] < watch):
            status = page.evaluate(_STATUS)
            if status and (not seen or status[0] != seen[-1][1]):
                seen.append((time.monotonic(), status[0]))
            if status and status[1] in ("finished", "stopped", "stopped with an error"):
                break
            page.wait_for_timeout(40)
        stop_at = time.monotonic()
        stop = main.get_by_role("button", name="Stop")
        stopped = None
        try:  # the run may end between the last status read and the click: Stop is then disabled
            stop.click(timeout=2_000)
        except PlaywrightTimeout:
            pass
        else:
            page.get_by_text(re.compile(r"^Epoch [\d.]+ / \d+ · stopped")).wait_for(timeout=60_000)
            stopped = time.monotonic() - stop_at
        browser.close()
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(seen)]
    span = seen[-1][0] - seen[0][0] if len(seen) > 1 else float("nan")
    return {
        "dataset": dataset + (" (full speed)" if full_speed else ""),
        "first frame (s)": seen[0][0] - clicked if seen else float("nan"),
        "first frame epoch": seen[0][1] if seen else None,
        "frames drawn": len(seen),
        "frames per second": (len(seen) - 1) / span if len(seen) > 1 else float("nan"),
        "longest gap (s)": max(gaps) if gaps else float("nan"),
        # the start frame is held on purpose (pacing.HOLD_START_SECONDS); what follows is training's pace
        "longest gap after the start frame (s)": max(gaps[1:]) if len(gaps) > 1 else float("nan"),
        "epochs done when watched": seen[-1][1] if seen else None,
        "Stop to stopped (s)": stopped if stopped is not None else float("nan"),
    }


def page_visit(url: str, path: str, useful_selector: str, dataset: str) -> tuple[float, float]:
    """(seconds to the first chart or table, seconds to the end of the first run), opening
    the page's own address in a fresh browser: a shared link, the slowest way in."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(600_000)
        start = time.monotonic()
        page.goto(f"{url}/{path}?dataset={dataset}")
        page.locator(useful_selector).first.wait_for()
        useful = time.monotonic() - start
        page.wait_for_timeout(500)
        page.get_by_test_id("stStatusWidget").wait_for(state="detached")
        done = time.monotonic() - start
        browser.close()
    return useful, done


def page_from_sidebar(url: str, title: str, useful_selector: str, dataset: str) -> float:
    """Seconds to the first chart or table after clicking the page in the sidebar, in a
    fresh browser that opened the app at its landing page (Train) first: a user's way in."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = _browser(p)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(600_000)
        page.goto(f"{url}/?dataset={dataset}")
        page.get_by_test_id("stStatusWidget").wait_for(state="detached")
        page.wait_for_timeout(1000)
        start = time.monotonic()
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
        page.locator(useful_selector).first.wait_for()
        useful = time.monotonic() - start
        browser.close()
    return useful


def _kept(table_key: str, rows: list[dict], keep: bool) -> None:
    """Rows (dicts by column) as one table, printed and kept under ``table_key``."""
    columns = list(rows[0])
    floats = [column for column in columns if any(isinstance(row[column], float) for row in rows)]
    table = Table("app_live", table_key, columns, formats=dict.fromkeys(floats, "{:.2f}"), keep=keep)
    for row in rows:
        table.add(**row)
    table.save()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--datasets", nargs="+", default=["rings", "mnist"])
    parser.add_argument("--watch", type=float, default=20.0, help="seconds of frames to watch per run")
    parser.add_argument("--full-speed", action="store_true", help="slow-motion start off, no frame cap")
    parser.add_argument("--page-dataset", default="rings", help="dataset for the page visits")
    parser.add_argument("--pages-only", action="store_true")
    parser.add_argument("--quick", action="store_true", help="rings watched 3 s, no page visits; kept nowhere")
    args = parser.parse_args()
    if args.quick:
        args.datasets, args.watch = ["rings"], 3.0
    defaults = parser.parse_args([])
    print(f"machine: {machine()}; headless Chromium 1440 x 900\n")
    with served_for_chromium() as url:
        if not args.pages_only:
            runs = [live_run(url, name, args.watch, args.full_speed) for name in args.datasets]
            datasets = None if args.datasets == defaults.datasets else args.datasets
            _kept(key("frames", datasets, "full-speed" if args.full_speed else None), runs, not args.quick)
            print()
        if args.quick:
            return
        visits = []
        for title, (path, selector) in PAGES.items():
            useful, done = page_visit(url, path, selector, args.page_dataset)
            in_app = page_from_sidebar(url, title, selector, args.page_dataset) if path else float("nan")
            visits.append(
                {
                    "page": title,
                    "dataset": args.page_dataset,
                    "first content, link in a fresh browser (s)": useful,
                    "first run done (s)": done,
                    "first content, from Train's sidebar (s)": in_app,
                }
            )
        _kept(key("pages", args.page_dataset), visits, True)


if __name__ == "__main__":
    main()
