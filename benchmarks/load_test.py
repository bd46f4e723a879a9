"""Many students at once: N browser sessions train at the same time against one server.

Starts `streamlit run app.py` on a free 127.0.0.1 port, opens N headless Chromium pages
(alternating rings and wine, settings from the URL), presses Train in each, and polls the
progress line of every page until all runs finish or the time limit passes. Reports
completed runs, pages showing an error, p50/p95 seconds per epoch as seen in the pages, and
the server's resident memory before, at its peak and after the pages are closed. Bounded:
N pages, one run each, a hard time limit; traffic only to 127.0.0.1.

    python benchmarks/load_test.py --sessions 8
"""

from __future__ import annotations

import argparse
import re
import shutil
import time
from pathlib import Path

import numpy as np
from _server import CHROMIUM_ARGS, serve

PROGRESS = re.compile(r"^Epoch (\d+) / (\d+) · ([a-z ]+)")
_READ = """() => {
    const errors = document.querySelectorAll("[data-testid='stException'], [data-testid='stAlertContentError']").length;
    for (const node of document.querySelectorAll("[data-testid='stProgress'], p")) {
        if (/^Epoch \\d+ \\/ \\d+/.test(node.innerText)) return [node.innerText, errors];
    }
    return [null, errors];
}"""


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument(
        "--settle", type=float, default=150.0,
        help="seconds to wait after closing the pages: Streamlit keeps a closed tab's session for reconnects (about 2 min)",
    )  # fmt: skip
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    server, url = serve()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium"),
                headless=True,
                args=CHROMIUM_ARGS,
            )
            warm = browser.new_page()
            warm.goto(url)
            warm.get_by_role("button", name="Train").first.wait_for(timeout=60_000)
            warm.close()
            time.sleep(2)
            memory_before = rss_mb(server.pid)
            pages = []
            for i in range(args.sessions):
                dataset = ("rings", "wine")[i % 2]
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                page.goto(f"{url}/?dataset={dataset}&epochs={args.epochs}")
                pages.append(page)
            for page in pages:
                page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train").wait_for(
                    timeout=120_000
                )
            started = time.monotonic()
            for page in pages:
                page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train").click()
            seen = [dict() for _ in pages]
            finished, errors, peak = set(), set(), memory_before
            while len(finished) < len(pages) and time.monotonic() - started < args.time_limit:
                for i, page in enumerate(pages):
                    if i in finished:
                        continue
                    text, n_errors = page.evaluate(_READ)
                    if n_errors:
                        errors.add(i)
                    match = PROGRESS.match(text or "")
                    if match:
                        epoch, state = int(match[1]), match[3].strip()
                        seen[i].setdefault(epoch, time.monotonic() - started)
                        if state in ("finished", "stopped", "stopped with an error"):
                            finished.add(i)
                peak = max(peak, rss_mb(server.pid))
                time.sleep(0.1)
            wall = time.monotonic() - started
            completed = sum(1 for i in finished if max(seen[i], default=0) == args.epochs)
            gaps = []
            for times in seen:
                ordered = [times[e] for e in sorted(times)]
                steps = np.diff(sorted(times))
                gaps += [g / s for g, s in zip(np.diff(ordered), steps) if s > 0]
            for page in pages:
                page.context.close()
            browser.close()
        time.sleep(10)
        memory_after = rss_mb(server.pid)
        time.sleep(max(0.0, args.settle - 10))
        memory_settled = rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("| measure | value |\n| --- | --- |")
    rows = {
        "sessions": args.sessions,
        "epochs per run": args.epochs,
        "runs completed": f"{completed} / {args.sessions}",
        "pages showing an error": len(errors),
        "wall time for all runs (s)": f"{wall:.1f}",
        "seconds per epoch seen in the pages, p50": f"{np.percentile(gaps, 50):.2f}" if gaps else "n/a",
        "seconds per epoch seen in the pages, p95": f"{np.percentile(gaps, 95):.2f}" if gaps else "n/a",
        "server RSS before (MB)": f"{memory_before:.0f}",
        "server RSS peak (MB)": f"{peak:.0f}",
        "server RSS 10 s after the pages closed (MB)": f"{memory_after:.0f}",
        f"server RSS {args.settle:.0f} s after the pages closed (MB)": f"{memory_settled:.0f}",
        "settled RSS relative to before": f"{memory_settled / memory_before - 1:+.0%}",
    }
    for key, value in rows.items():
        print(f"| {key} | {value} |")


if __name__ == "__main__":
    main()
