"""What a paused run costs: CPU of the browser and the app server on the Train page while a
run trains and once it is paused, in one run, and their ratio.

A paused page's picture changes only after a click, so it should cost a fraction of a
training one; a lecturer pauses to talk while the laptop's cores are shared with the
browser. For each dataset the script starts `streamlit run app.py`, opens the Train page
in headless Chromium at 1440 x 900, presses Train, lets the run settle for 5 s, counts CPU
seconds (user + system, from /proc) of every Chromium process and of the server for
``--seconds``, presses Pause, notes when the page says "paused" (seconds from the click),
waits 2 s and counts again. Run it alone: it counts every Chromium process on the machine.

    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/paused_page.py
    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/paused_page.py --datasets rings
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from pathlib import Path

from _server import CHROMIUM_ARGS, served_for_chromium
from compare_sklearn import machine

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(match) -> float:
    """User + system CPU seconds of the processes whose command line ``match`` accepts."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
            if match(command):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except OSError:  # gone meanwhile
            pass
    return total / TICK


def browser(command: str) -> bool:
    return "chrom" in command


def server(command: str) -> bool:
    return "streamlit" in command and "app.py" in command


def measure(page, seconds: float) -> tuple[float, float]:
    """(browser, server) CPU seconds over ``seconds`` of the page as it is."""
    before = cpu_seconds(browser), cpu_seconds(server)
    page.wait_for_timeout(seconds * 1000)
    return cpu_seconds(browser) - before[0], cpu_seconds(server) - before[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["rings", "usps"])
    parser.add_argument("--seconds", type=float, default=10.0, help="how long each state is measured")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"Machine: {machine()}; headless Chromium 1440 x 900; CPU seconds per {args.seconds:g} s\n")
    print("| dataset | state | browser | server | both | paused / training | 'paused' shown after (s) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with served_for_chromium() as url, sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = chromium.new_page(viewport={"width": 1440, "height": 900})
        main_block = page.get_by_test_id("stMainBlockContainer")
        for dataset in args.datasets:
            page.goto(f"{url}/?dataset={dataset}&epochs=300")
            main_block.get_by_role("button", name="Train").click(timeout=180_000)
            page.wait_for_timeout(5000)
            training = measure(page, args.seconds)
            main_block.get_by_role("button", name="Pause").click()
            clicked = time.monotonic()
            page.get_by_text(" · paused · ").wait_for()
            shown = time.monotonic() - clicked
            page.wait_for_timeout(2000)
            paused = measure(page, args.seconds)
            main_block.get_by_role("button", name="Stop").click()
            main_block.get_by_role("button", name="Train").wait_for()
            for state, (b, s) in (("training", training), ("paused", paused)):
                ratio, after = (f"{sum(paused) / sum(training):.2f}", f"{shown:.2f}") if state == "paused" else ("", "")
                print(f"| {dataset} | {state} | {b:.1f} | {s:.1f} | {b + s:.1f} | {ratio} | {after} |", flush=True)
        chromium.close()


if __name__ == "__main__":
    main()
