"""A class at once: N browser sessions press Train within seconds of each other.

Starts `streamlit run app.py` on a free 127.0.0.1 port, opens N headless Chromium pages
(rings, wine and digits in turn, each with the app's own settings unless --epochs is
given; a class asking for the same three runs, which the server computes once each and
every page reads at its own pace, or with --own-seeds each page a run of its own), presses
Train in each, and polls the status line of every page until all runs
finish or the time limit passes. Reports completed runs, pages showing an error, how many
pages waited in line and whether each said its place and an estimate of the wait, the
p50/p95 seconds from Train to the first moving picture (the first epoch drawn, as each page
notes it itself: the script's rounds of all thirty pages take seconds), p50/p95
seconds per epoch as seen in the pages, where the machine's CPU went (the server, the
browser's pages on the same cores, the machine) over the first 30 s after Train and over the
wave, and the server's resident memory before, at its
peak, after the pages are closed and once a next visitor has come and gone (Streamlit lets
go of closed sessions past their two minutes only when another session leaves). Memory is
compared with the server before anything trained and once a first visitor has trained each
set once: the first run of a server loads code and the torch runtime, once. A second
wave of the same sessions shows whether memory keeps growing with every session or was a
one-time cost of the first runs.
Bounded: N pages per wave, one run each, a hard time limit; traffic only to 127.0.0.1.

    python benchmarks/load_test.py --sessions 30 --waves 2
    python benchmarks/load_test.py --sessions 30 --waves 1 --own-seeds   # thirty different runs
    python benchmarks/load_test.py --quick     # 2 sessions, one wave of 5 epochs; kept nowhere

The table is kept in results/load_test.json (``_results``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from _results import Table, key, machine
from _server import CHROMIUM_ARGS, CpuSplit, rss_mb, serve

DATASETS = ("rings", "wine", "digits")
# The status line's epoch has a decimal while a run shows frames within an epoch ("Epoch 2.5").
PROGRESS = re.compile(r"^Epoch (\d+(?:\.\d+)?) / (\d+) · ([a-z ]+)")
# The target for a class: every student's first moving picture within this many seconds of Train.
FIRST_PICTURE_SECONDS = 30.0
IN_LINE = re.compile(r"place (\d+) in line, (about \S+|estimating the wait)")
# Each page notes when it first shows an epoch past the start (ms since the epoch, the
# script's clock too): the script reads thirty pages in turn, seconds a round on 2 cores.
_NOTE_FIRST_MOVING = """setInterval(() => {
    if (window.__firstMoving) return;
    for (const node of document.querySelectorAll("[data-testid='stProgress'], p")) {
        const match = /^Epoch (\\d+(?:\\.\\d+)?) \\/ \\d+/.exec(node.innerText);
        if (match && parseFloat(match[1]) >= 1) { window.__firstMoving = Date.now(); return; }
    }
}, 100);"""
# Each page logs its connections to the server (opened, closed with which code), so that a
# page that stops updating says whether the server or its connection went quiet.
_NOTE_CONNECTION = """(() => {
    const Socket = window.WebSocket, log = window.__connections = [];
    const at = () => Math.round(performance.now() / 100) / 10;
    const Logged = function (...args) {
        const socket = new Socket(...args);
        log.push(["new", at()]);
        socket.addEventListener("open", () => log.push(["open", at()]));
        socket.addEventListener("close", (event) => log.push(["close", at(), event.code]));
        return socket;
    };
    Logged.prototype = Socket.prototype;
    Object.assign(Logged, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
    window.WebSocket = Logged;
})();"""
_MAIN_TEXT = """() => {
    const main = document.querySelector("[data-testid='stMainBlockContainer']");
    return main ? main.innerText : "(no main block) " + (document.body ? document.body.innerText : "(no body)");
}"""
_READ = """() => {
    const errors = document.querySelectorAll("[data-testid='stException'], [data-testid='stAlertContentError']").length;
    for (const node of document.querySelectorAll("[data-testid='stProgress'], p")) {
        if (/^(Epoch \\d+ \\/ \\d+|Preparing the run)/.test(node.innerText)) return [node.innerText, errors];
    }
    return [null, errors];
}"""


def run_wave(
    browser, url: str, sessions: int, epochs: int, time_limit: float, server_pid: int, own_seeds: bool = False
) -> dict:
    """Open ``sessions`` pages, press Train in all of them, follow them to the end, close them.
    With ``own_seeds`` each page asks for a run of its own (seed 1, 2, ...: none shared)."""
    pages, crashed, errors_logged = [], set(), [[] for _ in range(sessions)]
    for i in range(sessions):
        query = f"dataset={DATASETS[i % len(DATASETS)]}" + (f"&epochs={epochs}" if epochs else "")
        query += f"&seed={i + 1}" if own_seeds else ""
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.on("crash", lambda _page, i=i: crashed.add(i))  # the browser's renderer, not the app
        page.add_init_script(_NOTE_FIRST_MOVING)
        page.add_init_script(_NOTE_CONNECTION)
        page.on("console", lambda message, i=i: message.type == "error" and errors_logged[i].append(message.text[:200]))
        page.goto(f"{url}/?{query}")
        pages.append(page)
    for page in pages:
        _train_button(page).wait_for(timeout=120_000)
    pressed, pressed_at = [], []
    cpu = CpuSplit(server_pid)
    cpu.start()
    for page in pages:
        _train_button(page).click()
        pressed.append(time.monotonic())
        pressed_at.append(time.time())
    follow = _follow(pages, pressed, time_limit, server_pid, errors_logged, cpu)
    noted = [page.evaluate("() => window.__firstMoving || null") for page in pages]
    follow["first moving"] = [shown / 1000 - at for shown, at in zip(noted, pressed_at) if shown is not None]
    follow["crashed"] = len(crashed)
    for page in pages:
        page.context.close()
    return follow


def _visit(browser, url: str) -> None:
    """The next visitor after a class: opens the Train page and closes it."""
    page = browser.new_page()
    page.goto(url)
    _train_button(page).wait_for(timeout=120_000)
    page.close()


def _train_each_set_once(browser, url: str, time_limit: float = 120.0) -> None:
    """A first visitor (the lecturer trying the app) trains each set once, for 5 epochs: the
    server's one-time costs of training (code pages, the torch runtime) are paid then."""
    page = browser.new_page()
    for name in DATASETS:
        page.goto(f"{url}/?dataset={name}&epochs=5")
        _train_button(page).click()
        deadline = time.monotonic() + time_limit
        while time.monotonic() < deadline:
            match = PROGRESS.match(page.evaluate(_READ)[0] or "")
            if match and match[3].strip() == "finished":
                break
            time.sleep(0.2)
        else:
            raise SystemExit(f"the first visitor's {name} run did not finish in {time_limit:.0f} s")
    page.close()


def _train_button(page):
    return page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True)


def _follow(pages, pressed, time_limit: float, server_pid: int, errors_logged: list[list[str]], cpu: CpuSplit) -> dict:
    """Poll every page's status line until all runs end or ``time_limit`` passes; where the
    CPU went over the first ``FIRST_PICTURE_SECONDS`` after Train and over the whole wave."""
    n = len(pages)
    seen = [dict() for _ in pages]  # epoch -> seconds after Train when first shown
    total = [0] * n
    waited, told = set(), set()  # pages seen waiting in line; those that said place and wait
    finished, errors, peak = set(), set(), rss_mb(server_pid)
    started, first_window = pressed[0], None
    while len(finished) < n and time.monotonic() - started < time_limit:
        if first_window is None and time.monotonic() - started >= FIRST_PICTURE_SECONDS:
            first_window = cpu.so_far()
        for i, page in enumerate(pages):
            if i in finished:
                continue
            text, n_errors = page.evaluate(_READ)
            if n_errors:
                errors.add(i)
            if text and "in line" in text:
                waited.add(i)
                if IN_LINE.search(text):
                    told.add(i)
            match = PROGRESS.match(text or "")
            if match:
                epoch, total[i], state = float(match[1]), int(match[2]), match[3].strip()
                seen[i].setdefault(epoch, time.monotonic() - pressed[i])
                if state in ("finished", "stopped", "stopped with an error"):
                    finished.add(i)
        peak = max(peak, rss_mb(server_pid))
        time.sleep(0.1)
    for i, page in enumerate(pages):  # what a page that did not finish shows, to find why
        if i not in finished:
            print(f"page {i + 1} ({page.url}) did not finish; {_what_it_shows(page, i + 1)}")
            print(f"its connection: {_connection(page)}; its console's last errors: {errors_logged[i][-3:]}\n")
    gaps = []
    for times in seen:
        ordered = [times[e] for e in sorted(times)]
        steps = np.diff(sorted(times))
        gaps += [g / s for g, s in zip(np.diff(ordered), steps) if s > 0]
    return {
        "completed": sum(1 for i in finished if total[i] and max(seen[i], default=0) == total[i]),
        "errors": len(errors),
        "waited": len(waited),
        "told": len(told),
        "wall": time.monotonic() - started,
        "cpu first": first_window or cpu.so_far(),
        "cpu wave": cpu.so_far(),
        "gaps": gaps,
        "peak": peak,
    }


def _what_it_shows(page, number: int) -> str:
    """The text of a page's main block (the sidebar's settings left out), and where a
    screenshot of it went."""
    shot = Path(tempfile.gettempdir()) / f"load-test-page-{number}.png"
    try:
        text = page.evaluate(_MAIN_TEXT)[:3000]
        page.screenshot(path=shot, full_page=True)
    except Exception as exc:  # a crashed or hung tab
        return f"it could not be read: {str(exc).splitlines()[0]}"
    return f"a screenshot is in {shot}; its main block reads:\n{text}"


def _connection(page) -> str:
    """The page's own log of its connections to the server: each opened and closed, with
    the close code (seconds after the page loaded)."""
    try:
        return page.evaluate("() => JSON.stringify(window.__connections || [])")
    except Exception as exc:  # a crashed or hung tab
        return f"could not be read: {str(exc).splitlines()[0]}"


def _cpu_rows() -> dict:
    """Where the machine's CPU went (CPU seconds a second): the server, the test's Chromium
    (every page's renderer, on the same cores) and the machine, over the first picture's
    target and over the whole wave."""
    rows = {}
    for window, name in (("cpu first", f"the first {FIRST_PICTURE_SECONDS:.0f} s after Train (the wave, if shorter)"), ("cpu wave", "the wave")):
        for part, said in (("machine", "machine CPU busy"), ("server", "of which the server"), ("chromium", "of which Chromium")):
            rows[f"{said} over {name} (CPU s / s of {os.cpu_count()} cores)"] = (
                lambda w, window=window, part=part: f"{w[window][part]:.2f}"
            )
    return rows


def _percentile(values, q: float) -> str:
    return f"{np.percentile(values, q):.1f}" if values else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--epochs", type=int, default=0, help="epochs per run (0: the app's own for each dataset)")
    parser.add_argument("--waves", type=int, default=2, help="rounds of sessions, one after the other")
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument(
        "--settle", type=float, default=150.0,
        help="seconds to wait after closing the pages: Streamlit keeps a closed tab's session for reconnects (about 2 min)",
    )  # fmt: skip
    parser.add_argument(
        "--own-seeds", action="store_true", help="each page a run of its own (its own seed), none shared"
    )
    parser.add_argument("--quick", action="store_true", help="2 sessions, one wave of 5 epochs; kept nowhere")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.waves, args.epochs, args.settle = 2, 1, 5, 10.0
    from playwright.sync_api import sync_playwright

    print(f"machine: {machine()}\n")
    server, url = serve()
    waves = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=shutil.which("chromium"),
                headless=True,
                args=CHROMIUM_ARGS,
            )
            warm = browser.new_page()
            warm.goto(url)
            warm.get_by_role("button", name="Train", exact=True).first.wait_for(timeout=60_000)
            warm.close()
            time.sleep(2)
            memory_before = rss_mb(server.pid)
            _train_each_set_once(browser, url)
            time.sleep(2)
            memory_warm = rss_mb(server.pid)
            for _ in range(args.waves):
                wave = run_wave(browser, url, args.sessions, args.epochs, args.time_limit, server.pid, args.own_seeds)
                time.sleep(10)
                wave["after"] = rss_mb(server.pid)
                time.sleep(max(0.0, args.settle - 10))
                wave["settled"] = rss_mb(server.pid)
                _visit(browser, url)  # Streamlit reaps expired sessions when another one leaves
                time.sleep(10)
                wave["visited"] = rss_mb(server.pid)
                waves.append(wave)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    sessions = None if args.sessions == 30 else f"{args.sessions}-sessions"
    table = Table("load_test", key("waves", sessions, "own-seeds" if args.own_seeds else None),
                  ["measure", *(f"wave {i + 1}" for i in range(len(waves)))], keep=not args.quick)  # fmt: skip
    rows = {
        "sessions (rings, wine, digits in turn)": lambda w: args.sessions,
        "epochs per run": lambda w: args.epochs or "the app's",
        "runs completed": lambda w: f"{w['completed']} / {args.sessions}",
        "pages showing an error": lambda w: w["errors"],
        "pages whose browser tab crashed (the load test's browser)": lambda w: w["crashed"],
        "pages that waited in line": lambda w: w["waited"],
        "of those, saying their place and the wait": lambda w: w["told"],
        "Train to the first moving picture, p50 (s)": lambda w: _percentile(w["first moving"], 50),
        "Train to the first moving picture, p95 (s)": lambda w: _percentile(w["first moving"], 95),
        "wall time for all runs (s)": lambda w: f"{w['wall']:.1f}",
        **_cpu_rows(),
        "seconds per epoch seen in the pages, p50": lambda w: _percentile(w["gaps"], 50),
        "seconds per epoch seen in the pages, p95": lambda w: _percentile(w["gaps"], 95),
        "server RSS before the first wave, nothing trained yet (MB)": lambda w: f"{memory_before:.0f}",
        "server RSS once a first visitor trained each set once (MB)": lambda w: f"{memory_warm:.0f}",
        "server RSS peak (MB)": lambda w: f"{w['peak']:.0f}",
        "server RSS 10 s after the pages closed (MB)": lambda w: f"{w['after']:.0f}",
        f"server RSS {args.settle:.0f} s after the pages closed (MB)": lambda w: f"{w['settled']:.0f}",
        "server RSS once the next visitor has come and gone (MB)": lambda w: f"{w['visited']:.0f}",
        "that, relative to nothing trained yet": lambda w: f"{w['visited'] / memory_before - 1:+.0%}",
        "that, relative to each set trained once": lambda w: f"{w['visited'] / memory_warm - 1:+.0%}",
    }
    for name, value in rows.items():
        table.add(name, *(str(value(w)) for w in waves))
    table.save()


if __name__ == "__main__":
    main()
