"""The kNN speed page on MNIST in a real browser: a first visit to a machine that has measured
nothing, then first visits once the figures are kept on disk (a fresh server, another visitor).

Each visit starts `streamlit run app.py` on a free 127.0.0.1 port with NCA_CACHE_DIR set to
one temporary folder (the first visit also fits the quick NCA model and keeps it there),
opens the page in headless Chromium and prints, from the page load: seconds to the first
numbers (the table, drawn with the flat indexes' sizes before any search), to the headline
(the exact pair measured: the first metric) and to the whole table (the note on when the
times were measured, drawn last), and the headline itself.

    NCA_DATA_DIR=/path/to/data .venv/bin/python benchmarks/knn_page.py
    .venv/bin/python benchmarks/knn_page.py --quick     # digits: seconds; kept nowhere

The table is kept in results/knn_page.json (``_results``) under the dataset.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from _results import Table, machine
from _server import CHROMIUM_ARGS, served_for_chromium

TABLE = "[data-testid='stDataFrame']"  # drawn with the flat indexes' sizes before any search
HEADLINE = "[data-testid='stMetric']"
# The headline's place holds "…" until its figures are measured: a figure is anything else
MEASURED = """() => [...document.querySelectorAll("[data-testid='stMetricValue']")]
    .some(v => v.innerText.trim() !== "…")"""
DONE = "Times measured"  # the note under the table, drawn once every row is measured


def visit(url: str, dataset: str, limit: float) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        start = time.monotonic()
        page.goto(f"{url}/knn_speed?dataset={dataset}")
        first = headline = None
        while time.monotonic() - start < limit:
            done = page.get_by_text(DONE).count() > 0
            if headline is None and (page.evaluate(MEASURED) or done):
                headline = time.monotonic() - start
            if first is None and page.locator(TABLE).count():
                first = time.monotonic() - start
            if done:
                break
            page.wait_for_timeout(200)  # light polling: the first visit is measuring on these cores
        whole = time.monotonic() - start
        first = whole if first is None else first  # drawn with everything at once, between two polls
        words = page.locator(HEADLINE).first.inner_text().replace("\n", " ")
        kept = page.get_by_text(DONE).first.inner_text()
        browser.close()
    return {"first numbers": first, "headline": headline, "whole table": whole, "words": words, "figures": kept}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="mnist")
    parser.add_argument("--limit", type=float, default=300, help="seconds to wait for the table")
    parser.add_argument("--quick", action="store_true", help="digits instead; kept nowhere")
    args = parser.parse_args()
    if args.quick:
        args.dataset = "digits"
    print(f"machine: {machine()}; headless Chromium 1440 x 900; dataset {args.dataset}\n")
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["NCA_CACHE_DIR"] = cache
        with served_for_chromium() as url:
            rows.append(("nothing kept (first visit to this machine)", visit(url, args.dataset, args.limit)))
        with served_for_chromium() as url:  # a fresh server: nothing in memory, the figures on disk
            rows.append(("figures kept on disk, fresh server", visit(url, args.dataset, args.limit)))
            rows.append(("figures kept on disk, another visitor", visit(url, args.dataset, args.limit)))
    columns = ["visit", "first numbers (s)", "headline (s)", "whole table (s)", "headline", "figures"]
    table = Table("knn_page", args.dataset, columns, formats=dict.fromkeys(columns[1:4], "{:.1f}"), keep=not args.quick)
    for name, r in rows:
        table.add(name, r["first numbers"], r["headline"], r["whole table"], r["words"], r["figures"])
    table.save()


if __name__ == "__main__":
    main()
