"""The server's memory once a class has gone: does it come back to its size after the first page?

Starts `streamlit run app.py` on a free 127.0.0.1 port and opens its first page in headless
Chromium; the server's resident memory once that page has loaded its data (Train enabled) is
the baseline. Then a class's mix, each in a tab of its own: pages training MNIST (each its
own seed, so each a run of its own), an upload of a generated CSV (``upload_memory.write_csv``: a label and 100
numeric columns, six decimals; 50,000 rows come to about 46 MB, under the app's 50 MB cap)
used on every page and trained on for a few epochs, and Compare on digits and on MNIST.
Every tab is closed, and the server is left alone for ``--idle-wait`` seconds: past
Streamlit's two minutes for a closed tab to reconnect and past the app's own wait before it
lets go of what the class left (``engine.quiet.QUIET_SECONDS``, five minutes). Reports the
server's RSS after the first page, at its peak, after the tabs closed and at the end, and
the end's ratio to the first page's (the target: at most 1.25).
Bounded: a few tabs, each run a few epochs, a time limit for each step; traffic only to
127.0.0.1.

    NCA_DATA_DIR=/path/to/data python benchmarks/server_memory.py
    python benchmarks/server_memory.py --quick   # digits for MNIST, 2,000 rows, a 30 s quiet; kept nowhere

The table is kept in results/server_memory.json (``_results``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from _results import Table, machine
from _server import CHROMIUM_ARGS, serve
from load_test import PROGRESS, rss_mb
from upload_memory import write_csv

TARGET_RATIO = 1.25
ENDED = ("finished", "stopped", "stopped with an error")
_STATUS = """() => {
    for (const node of document.querySelectorAll("[data-testid='stProgress'], p")) {
        if (/^Epoch \\d+(\\.\\d+)? \\/ \\d+/.test(node.innerText)) return node.innerText;
    }
    return "";
}"""


def rss_parts(pid: int) -> dict[str, float]:
    """The process's resident memory in MB: all of it, its anonymous part (what the process
    itself allocated: arrays, objects, heaps) and its file-backed part (the code of Python,
    torch and the other libraries it has run, mapped from their files, which the kernel can
    drop and read back, and which every process on the machine running them shares)."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile"):
            fields[name] = int(value.split()[0]) / 1024
    return {"total": fields["VmRSS"], "anon": fields["RssAnon"], "file": fields["RssFile"]}


class PeakRss:
    """The server's largest RSS seen, sampled every ``every`` seconds in a thread."""

    def __init__(self, pid: int, every: float = 0.25):
        self.pid, self.every, self.peak = pid, every, rss_mb(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.peak = max(self.peak, rss_mb(self.pid))
            except FileNotFoundError:  # the server has ended
                return

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak


def _train_button(page):
    return page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True)


def _press_train(page, time_limit: float) -> None:
    """Click Train once it is enabled: it waits, disabled, for the page's data to be ready."""
    from playwright.sync_api import expect

    expect(_train_button(page)).to_be_enabled(timeout=time_limit * 1000)
    _train_button(page).click()


def _status(page) -> tuple[float, str]:
    """The epoch a page's run shows and its state ("training", "finished", ...)."""
    match = PROGRESS.match(page.evaluate(_STATUS) or "")
    return (float(match[1]), match[3].strip()) if match else (0.0, "")


def _until(page, done, time_limit: float, what: str) -> None:
    deadline = time.monotonic() + time_limit
    while time.monotonic() < deadline:
        if done(*_status(page)):
            return
        time.sleep(0.5)
    shot = Path(tempfile.gettempdir()) / "server-memory-stuck.png"
    page.screenshot(path=shot, full_page=True)
    raise SystemExit(f"{what} did not get there in {time_limit:.0f} s (its status: {_status(page)}; see {shot})")


def _step(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {text}", flush=True)


def _new_tab(browser):
    return browser.new_context(viewport={"width": 1440, "height": 900}).new_page()


def train_pages(browser, url: str, dataset: str, pages: int, epochs: int, time_limit: float) -> list:
    """``pages`` tabs training ``dataset``, each its own seed, all pressed together, followed
    to the end."""
    tabs = [_new_tab(browser) for _ in range(pages)]
    for seed, tab in enumerate(tabs, 1):
        tab.goto(f"{url}/?dataset={dataset}&epochs={epochs}&seed={seed}")
        _train_button(tab).wait_for(timeout=180_000)
    for tab in tabs:
        _press_train(tab, time_limit)
    for seed, tab in enumerate(tabs, 1):
        _until(tab, lambda epoch, state: state in ENDED, time_limit, f"the {dataset} run of seed {seed}")
    return tabs


def upload_and_train(browser, url: str, csv: Path, epochs: int, time_limit: float):
    """A tab that uploads ``csv`` on Your data, uses it on every page and trains on it until
    the run shows ``epochs`` epochs."""
    tab = _new_tab(browser)
    tab.goto(f"{url}/your_data")
    tab.get_by_role("heading", name="Use your own data").wait_for(timeout=120_000)
    tab.locator("input[type='file']").set_input_files(str(csv))
    use = tab.get_by_role("button", name="Use this dataset on every page")
    use.wait_for(timeout=int(time_limit * 1000))
    use.click()
    _press_train(tab, time_limit)
    _until(tab, lambda epoch, state: epoch >= epochs or state in ENDED, time_limit, "the upload's run")
    return tab  # its run trains on until the tab closes, as a student's would


def compare(browser, url: str, datasets: list[str], time_limit: float):
    """A tab that opens Compare on each of ``datasets`` in turn, each until its three panels show."""
    tab = _new_tab(browser)
    for name in datasets:
        tab.goto(f"{url}/compare?dataset={name}")
        for method in ("PCA", "LDA", "NCA"):
            tab.get_by_role("heading", name=method, exact=True).wait_for(timeout=int(time_limit * 1000))
    return tab


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=3, help="tabs training MNIST, each its own seed")
    parser.add_argument("--epochs", type=int, default=3, help="epochs of each MNIST run")
    parser.add_argument("--upload-rows", type=int, default=50_000)
    parser.add_argument("--upload-epochs", type=int, default=2)
    parser.add_argument("--idle-wait", type=float, default=360.0,
                        help="seconds left alone after the tabs closed: past Streamlit's 2 min and the app's 5")  # fmt: skip
    parser.add_argument("--time-limit", type=float, default=900.0, help="seconds each step may take")
    parser.add_argument("--quick", action="store_true", help="digits for MNIST, 2,000 rows, a 30 s quiet; kept nowhere")
    args = parser.parse_args()
    dataset, compared = "mnist", ["digits", "mnist"]
    if args.quick:
        dataset, compared = "digits", ["digits"]
        args.pages, args.epochs, args.upload_rows, args.upload_epochs, args.idle_wait = 2, 2, 2000, 1, 200.0
        args.time_limit = min(args.time_limit, 300.0)
        os.environ["NCA_QUIET_SECONDS"] = "30"  # the server's wait, shortened; Streamlit's 2 min stay
    from playwright.sync_api import expect, sync_playwright

    print(f"machine: {machine()}\n")
    os.environ.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    after_close: dict[float, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        csv = Path(folder) / "upload.csv"
        write_csv(csv, args.upload_rows)
        upload_mb = csv.stat().st_size / 2**20
        server, url = serve()
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=shutil.which("chromium"), headless=True, args=CHROMIUM_ARGS)
                first = _new_tab(browser)
                first.goto(url)
                expect(_train_button(first)).to_be_enabled(timeout=args.time_limit * 1000)  # its data loaded
                time.sleep(3)
                first_page = rss_parts(server.pid)
                _step(f"after the first page: {first_page}")
                peak = PeakRss(server.pid)
                tabs = [first, *train_pages(browser, url, dataset, args.pages, args.epochs, args.time_limit)]
                _step(f"{args.pages} {dataset} runs finished: {rss_mb(server.pid):.0f} MB")
                tabs.append(upload_and_train(browser, url, csv, args.upload_epochs, args.time_limit))
                _step(f"the upload trained: {rss_mb(server.pid):.0f} MB")
                tabs.append(compare(browser, url, compared, args.time_limit))
                _step(f"Compare drawn: {rss_mb(server.pid):.0f} MB")
                for tab in tabs:
                    tab.context.close()
                closed = time.monotonic()
                _step(f"every tab closed; waiting {args.idle_wait:.0f} s")
                for at in sorted({10.0, 60.0, 150.0, 240.0, 330.0, args.idle_wait}):
                    if at <= args.idle_wait:
                        time.sleep(max(0.0, closed + at - time.monotonic()))
                        after_close[at] = rss_parts(server.pid)
                        _step(f"{at:.0f} s after: {after_close[at]}")
                highest = peak.stop()
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    table = Table("server_memory", "class", ["measure", "server RSS (MB)", "anonymous (MB)", "file-backed (MB)"],
                  keep=not args.quick, title="A class's mix, then every tab closed and the server left alone")  # fmt: skip

    def add(measure: str, parts: dict[str, float]) -> None:
        table.add(measure, *(f"{parts[part]:.0f}" for part in ("total", "anon", "file")))

    add("after the first page", first_page)
    table.add(f"peak ({args.pages} {dataset} runs of {args.epochs} epochs, a {upload_mb:.0f} MB upload "
              f"of {args.upload_rows:,} rows trained {args.upload_epochs} epochs, Compare on {' and '.join(compared)})",
              f"{highest:.0f}", "", "")  # fmt: skip
    for at, parts in after_close.items():
        add(f"{at:.0f} s after every tab closed", parts)
    end = after_close[args.idle_wait]
    ratio, anon_ratio = end["total"] / first_page["total"], end["anon"] / first_page["anon"]
    table.note(
        f"At the end: {ratio:.2f}x the size after the first page (target at most {TARGET_RATIO:.2f}x: "
        f"{'met' if ratio <= TARGET_RATIO else 'missed'}); its anonymous memory {anon_ratio:.2f}x the first "
        f"page's, its file-backed memory (library code the class ran) {end['file'] - first_page['file']:+.0f} MB."
    )
    table.save()


if __name__ == "__main__":
    main()
