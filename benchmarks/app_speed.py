"""How fast the Train page trains and draws, measured in a real browser.

Starts `streamlit run app.py` on a free 127.0.0.1 port, opens the page in headless Chromium
(Playwright), picks a dataset, presses Train and polls the epoch counter on the page every
few milliseconds. Reports the time from the click to the first frame, how many distinct
epochs were drawn per second, and the time between drawn frames early and late in the run
(growth would show up as a larger late figure).

    python benchmarks/app_speed.py                    # rings with the page's defaults
    python benchmarks/app_speed.py --dataset mnist    # needs the MNIST files (NCA_DATA_DIR)
    python benchmarks/app_speed.py --dataset mnist --epochs 50   # a longer run than the default
"""

from __future__ import annotations

import argparse
import itertools
import re
import shutil
import statistics
import time

from _server import CHROMIUM_ARGS, served_for_chromium

DATASETS = ("rings", "wine", "digits", "usps", "mnist")


# The progress line ("Epoch 12 / 60 · training · ...") is drawn in the same fragment
# run as the embedding, so the epoch it names is the epoch on screen.
_READ_EPOCH = """() => {
    for (const node of document.querySelectorAll("[data-testid='stProgress'], [data-testid='stText'], p")) {
        const match = /^Epoch ([\\d.]+) \\/ \\d+/.exec(node.innerText);
        if (match) return parseFloat(match[1]);
    }
    return null;
}"""


def epoch_on_page(page) -> int | None:
    """The epoch counter as drawn, read in one round trip to the browser."""
    return page.evaluate(_READ_EPOCH)


def measure(
    url: str, dataset: str, timeout: float, watch: int | None = None, epochs: int | None = None
) -> dict:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=shutil.which("chromium"),
            headless=True,
            args=CHROMIUM_ARGS,
        )
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.goto(f"{url}/?dataset={dataset}" + (f"&epochs={epochs}" if epochs else ""))
        main = page.get_by_test_id("stMainBlockContainer")
        main.get_by_role("button", name="Train").wait_for(timeout=120_000)
        page.get_by_text("About this dataset").wait_for(timeout=120_000)
        page.wait_for_timeout(1500)
        clicked = time.monotonic()
        main.get_by_role("button", name="Train").click()
        status = page.get_by_text(re.compile(r"^Epoch [\d.]+ / \d+"))
        status.wait_for(timeout=timeout * 1000)
        total = int(re.match(r"^Epoch [\d.]+ / (\d+)", status.inner_text()).group(1))
        first_seen: dict[int, float] = {}
        while time.monotonic() - clicked < timeout:
            epoch = epoch_on_page(page)
            if epoch is not None and epoch not in first_seen:
                first_seen[epoch] = time.monotonic() - clicked
            if epoch == total or (watch is not None and epoch is not None and epoch >= watch):
                break
            page.wait_for_timeout(60)
        browser.close()
    times = [first_seen[e] for e in sorted(first_seen)]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    half = len(gaps) // 2
    return {
        "dataset": dataset,
        "epochs in run": total,
        "first frame (s)": times[0] if times else float("nan"),
        "distinct epochs drawn": len(first_seen),
        "epochs drawn per second": (len(times) - 1) / (times[-1] - times[0])
        if len(times) > 1
        else float("nan"),
        "median gap, first half (s)": statistics.median(gaps[:half]) if half else float("nan"),
        "median gap, second half (s)": statistics.median(gaps[half:]) if gaps[half:] else float("nan"),
        "last epoch seen": max(first_seen) if first_seen else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", default="rings", choices=DATASETS)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for the run to end")
    parser.add_argument("--watch", type=int, default=None, help="stop after this epoch has been drawn")
    parser.add_argument("--epochs", type=int, default=None, help="epochs to train (default: the page's)")
    args = parser.parse_args()
    with served_for_chromium() as url:
        result = measure(url, args.dataset, args.timeout, args.watch, args.epochs)
    print("| measure | value |\n| --- | --- |")
    for key, value in result.items():
        print(f"| {key} | {value:.2f} |" if isinstance(value, float) else f"| {key} | {value} |")


if __name__ == "__main__":
    main()
