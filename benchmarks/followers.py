"""A class follows the lecturer's live run: N browser pages open the address of one run
that trains, and watch it.

Starts `streamlit run app.py` on a free 127.0.0.1 port. A lecturer's page (its own browser
context) opens the Train page on --dataset with --epochs, turns the slow-motion start off,
sets the frame cap to --fps (so the run lasts: digits' 100 epochs at one a second take 100 s)
and presses Train; once the run has shown a few epochs, N follower pages, each in a browser
context of its own (cookies of its own: another browser to the server), open the run's
address. Every page notes in the page itself, each time its status line shows another epoch,
when (the script reads forty pages in turn, seconds a round). Reports:

- for each follower, seconds from opening the address to first seeing the epoch advance:
  p50, p95, max (target: every one within 30 s);
- the followers' lag in epochs behind the lecturer's page, sampled every second from the last
  follower's first advance to the run's end, each page's epoch as it showed it then:
  median, p95, max (target: median within 3 epochs);
- the server's cost per follower, from /proc: CPU seconds a second while they follow beyond
  the lecturer's page alone, and resident memory added, each divided by N.

Bounded: one run, N pages, a hard time limit; traffic only to 127.0.0.1.

    python benchmarks/followers.py                     # 40 followers
    python benchmarks/followers.py --followers 100
    python benchmarks/followers.py --quick             # 3 followers of 30 epochs; kept nowhere

The table is kept in results/followers.json (``_results``), one per number of followers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np
from _results import Table, key, machine
from _server import CHROMIUM_ARGS, CpuSplit, cpu_seconds, rss_mb, serve

# Each page notes, each time its status line shows another epoch, [ms since 1970, epoch].
_NOTE_EPOCHS = """window.__epochs = [];
setInterval(() => {
    for (const node of document.querySelectorAll("[data-testid='stProgress'], p")) {
        const match = /^Epoch (\\d+(?:\\.\\d+)?) \\/ \\d+ · ([a-z ]+)/.exec(node.innerText);
        if (!match) continue;
        const epoch = parseFloat(match[1]), seen = window.__epochs;
        if (!seen.length || seen[seen.length - 1][1] !== epoch) seen.push([Date.now(), epoch]);
        window.__state = match[2].trim();
        return;
    }
}, 100);"""
ENDED = ("finished", "stopped", "stopped with an error")
# Every page is a background tab but the last opened: without these Chromium throttles their
# timers and rendering, and a page would show its epochs late by the browser's doing.
UNTHROTTLED = [
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
]


def cpu_rate(pid: int, seconds: float) -> float:
    """The process's CPU seconds a second over the next ``seconds``."""
    before, start = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return (cpu_seconds(pid) - before) / (time.monotonic() - start)


def _main_button(page, name: str):
    return page.get_by_test_id("stMainBlockContainer").get_by_role("button", name=name)


def start_lecturers_run(browser, url: str, dataset: str, epochs: int, fps: int):
    """The lecturer's page with its run training (slow-motion start off, frame cap ``fps``),
    and the run's address."""
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    page.set_default_timeout(180_000)
    page.add_init_script(_NOTE_EPOCHS)
    page.goto(f"{url}/?dataset={dataset}&epochs={epochs}")
    _main_button(page, "Train").wait_for()
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Slow-motion start").click()
    expect(sidebar.get_by_role("switch", name="Slow-motion start")).not_to_be_checked()
    cap = sidebar.get_by_role("slider", name="Frames per second cap")
    for _ in range(abs(10 - fps)):
        cap.press("ArrowLeft" if fps < 10 else "ArrowRight")
    expect(cap).to_have_attribute("aria-valuetext", str(fps))
    page.wait_for_timeout(2000)  # the page's rerun with the new settings
    _main_button(page, "Train").click()
    page.wait_for_function("() => new URLSearchParams(location.search).has('run')")
    return page, page.url


def _epochs(page) -> list[tuple[float, float]]:
    return [(t / 1000, e) for t, e in page.evaluate("() => window.__epochs || []")]


def _shown_at(timeline: list[tuple[float, float]], at: float) -> float | None:
    """The epoch a page showed at ``at`` (None before its first)."""
    shown = None
    for when, epoch in timeline:
        if when > at:
            break
        shown = epoch
    return shown


def _first_advance(timeline: list[tuple[float, float]]) -> float | None:
    """When a page first showed an epoch past the first it showed."""
    return next((when for when, epoch in timeline[1:] if epoch > timeline[0][1]), None)


def follow(browser, args) -> dict:
    """The lecturer's run, N followers opening its address, the server's cost and each page's epochs."""
    server, url = serve()
    try:
        lecturer, address = start_lecturers_run(browser, url, args.dataset, args.epochs, args.fps)
        deadline = time.monotonic() + args.time_limit
        while time.monotonic() < deadline and max((e for _, e in _epochs(lecturer)), default=0) < 3:
            time.sleep(0.5)
        print(
            f"the lecturer's run is at epoch {max((e for _, e in _epochs(lecturer)), default=0):g}",
            flush=True,
        )
        alone_cpu = cpu_rate(server.pid, args.window)
        rss_before = rss_mb(server.pid)
        followers, opened = [], []
        split = CpuSplit(server.pid)
        split.start()
        for _ in range(args.followers):
            page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
            page.set_default_timeout(180_000)
            page.add_init_script(_NOTE_EPOCHS)
            opened.append(time.time())
            page.goto(address, wait_until="commit")
            followers.append(page)
        while time.monotonic() < deadline and not all(_first_advance(_epochs(p)) for p in followers):
            time.sleep(1.0)
        all_following = time.time()
        print(f"{sum(_first_advance(_epochs(p)) is not None for p in followers)} of {args.followers} followers "
              "saw the epoch advance", flush=True)  # fmt: skip
        following_cpu = cpu_rate(server.pid, args.window)
        rss_following = rss_mb(server.pid)
        while time.monotonic() < deadline and lecturer.evaluate("() => window.__state || ''") not in ENDED:
            time.sleep(1.0)
        ended = time.time()
        cpu_split = split.so_far()
        end_state = lecturer.evaluate("() => window.__state || 'not shown'")
        timelines = [_epochs(p) for p in followers]
        lecturer_timeline = _epochs(lecturer)
        if args.timelines:
            Path(args.timelines).write_text(json.dumps({"lecturer": lecturer_timeline, "followers": timelines,
                                                        "opened": opened, "all following": all_following}))  # fmt: skip
        for page in [lecturer, *followers]:
            page.context.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    advanced = [_first_advance(t) for t in timelines]
    to_advance = [a - o for a, o in zip(advanced, opened) if a is not None]
    lags = []
    for at in np.arange(all_following, ended, 1.0):
        ahead = _shown_at(lecturer_timeline, at)
        lags += [
            ahead - shown for t in timelines if ahead is not None and (shown := _shown_at(t, at)) is not None
        ]
    return {
        "advanced": to_advance,
        "never": sum(a is None for a in advanced),
        "lags": lags,
        "cpu": (following_cpu - alone_cpu) / args.followers,
        "alone cpu": alone_cpu,
        "following cpu": following_cpu,
        "rss": (rss_following - rss_before) / args.followers,
        "rss before": rss_before,
        "rss following": rss_following,
        "end": f"{end_state} at epoch {lecturer_timeline[-1][1]:g}" if lecturer_timeline else end_state,
        "cpu split": cpu_split,
        "run seconds": (lecturer_timeline[-1][0] - lecturer_timeline[0][0]) if lecturer_timeline else 0.0,
    }


def _stat(values, q: float | str, fmt: str = "{:.1f}") -> str:
    if not values:
        return "n/a"
    value = np.max(values) if q == "max" else np.percentile(values, q)
    return fmt.format(value)


def _split_rows(split: dict) -> dict[str, str]:
    """The CPU split's rows: from the first follower opening to the run's end."""
    window = f"from the first follower opening to the run's end ({split['seconds']:.0f} s)"
    return {
        f"machine CPU busy, {window} (CPU s / s of {split['cores']} cores)": f"{split['machine']:.2f}",
        f"of which the server (CPU s / s), {window}": f"{split['server']:.2f}",
        f"of which Chromium, all its processes (CPU s / s), {window}": f"{split['chromium']:.2f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--followers", type=int, default=40)
    parser.add_argument("--dataset", default="digits")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument(
        "--fps", type=int, default=1, help="the lecturer's frame cap (the sidebar's, 0 to 30)"
    )
    parser.add_argument(
        "--window", type=float, default=10.0, help="seconds over which the server's CPU is read"
    )
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--timelines", help="a JSON file to write every page's [time, epoch shown] to")
    parser.add_argument("--quick", action="store_true", help="3 followers of a 30-epoch run; kept nowhere")
    args = parser.parse_args()
    if args.quick:
        args.followers, args.epochs = 3, 30
    from playwright.sync_api import sync_playwright

    print(f"machine: {machine()}\n")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=shutil.which("chromium"), headless=True, args=[*CHROMIUM_ARGS, *UNTHROTTLED]
        )
        found = follow(browser, args)
        browser.close()
    table = Table(
        "followers", key(args.dataset, f"{args.followers}-followers"), ["measure", "value"], keep=not args.quick
    )
    n = args.followers
    rows = {
        "followers (each a browser context of its own)": n,
        f"the lecturer's run ({args.dataset}, {args.epochs} epochs, frame cap {args.fps}/s), seconds": (
            f"{found['run seconds']:.0f}"
        ),
        "the lecturer's run ended": found["end"],
        "followers that never saw the epoch advance": found["never"],
        "opening the address to the epoch advancing, p50 (s)": _stat(found["advanced"], 50),
        "opening the address to the epoch advancing, p95 (s)": _stat(found["advanced"], 95),
        "opening the address to the epoch advancing, max (s; target 30)": _stat(found["advanced"], "max"),
        "epochs behind the lecturer's page, median (target 3)": _stat(found["lags"], 50),
        "epochs behind the lecturer's page, p95": _stat(found["lags"], 95),
        "epochs behind the lecturer's page, max": _stat(found["lags"], "max"),
        "server CPU, lecturer's page alone (CPU s / s)": f"{found['alone cpu']:.2f}",
        f"server CPU, with {n} following (CPU s / s)": f"{found['following cpu']:.2f}",
        "server CPU per follower (CPU s / s)": f"{found['cpu']:.3f}",
        **_split_rows(found["cpu split"]),
        "server RSS before the followers (MB)": f"{found['rss before']:.0f}",
        f"server RSS with {n} following (MB)": f"{found['rss following']:.0f}",
        "server RSS per follower (MB)": f"{found['rss']:.1f}",
    }
    for name, value in rows.items():
        table.add(name, str(value))
    table.save()


if __name__ == "__main__":
    main()
