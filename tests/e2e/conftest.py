"""Serve the app with `streamlit run` on a free 127.0.0.1 port and drive it in Chromium."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import real_data_dir

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
# The server's output goes to a file, read back when a test fails: a pipe nobody reads fills
# after 64 kB, and the server then stops at its next log line.
SERVER_LOG: Path | None = None
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def app_url(tmp_path_factory):
    port = _free_port()
    # One training slot, whatever the machine: a job that outlived its tab would make the
    # next one wait in line, which the tab-close test can see. A cache of its own: models
    # and measurements kept by an earlier session or by the user would skip what a test
    # watches (a quick NCA fit, a first measurement); its datasets are decoded anew in it.
    # The real data folder the other tests use, where there is one, is the server's too.
    env = {
        **os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "NCA_MAX_JOBS": "1",
        "NCA_CACHE_DIR": str(tmp_path_factory.mktemp("app-cache")),
    }  # fmt: skip
    if real_data_dir() is not None:
        env["NCA_DATA_DIR"] = str(real_data_dir())
    global SERVER_LOG
    SERVER_LOG = tmp_path_factory.mktemp("app-log") / "streamlit.log"
    log = SERVER_LOG.open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    log.close()  # the server has its own copy
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    break
        except OSError:
            time.sleep(0.3)
    else:
        server.kill()
        pytest.fail(f"streamlit did not become healthy: {SERVER_LOG.read_text()}")
    yield url
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()


@pytest.fixture(autouse=True)
def no_traceback_in_the_server_log(request):
    """Fail a browser test during which the server logged a traceback: an exception in the
    app (Streamlit's "Uncaught app execution"), in Streamlit or in a job, which the page may
    not show and the test's own assertions may not reach."""
    if "app_url" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("app_url")  # the server, and its log, first
    start = SERVER_LOG.stat().st_size
    yield
    with SERVER_LOG.open(errors="replace") as log:
        log.seek(start)
        logged = log.read()
    if "Traceback (most recent call last)" in logged:
        pytest.fail(f"the server logged a traceback during this test:\n{logged[-EVIDENCE_CHARS:]}")


@pytest.fixture(scope="session")
def browser():
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (make test installs it when run as root)")
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, app_url):
    context = browser.new_context(viewport={"width": 1440, "height": 1250})
    page = context.new_page()
    page.set_default_timeout(60_000)
    yield page
    context.close()


@pytest.fixture
def screenshot():
    """Save a full-page screenshot under test-artifacts/ (look at them)."""

    def save(page, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save


# What a failed browser test leaves to read: a test that fails one run in ten must show why
# from its one report. Every open page's screenshot (under test-artifacts/), the text of its
# main block and the tail of the server's log are added to the failure's report.
EVIDENCE_CHARS = 3000


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call" and report.failed and "browser" in item.fixturenames:
        for title, text in _evidence(item):
            report.sections.append((title, text))
    return report


def _evidence(item) -> list[tuple[str, str]]:
    browser = item.funcargs.get("browser")  # the page fixture's too
    found = []
    pages = [page for context in (browser.contexts if browser else []) for page in context.pages]
    for n, page in enumerate(pages):
        try:
            ARTIFACTS.mkdir(exist_ok=True)
            shot = ARTIFACTS / f"failed-{item.name}-{n}.png"
            page.screenshot(path=str(shot), full_page=True)
            text = page.get_by_test_id("stMainBlockContainer").inner_text(timeout=5_000)
            found.append((f"page {n} ({page.url}, {shot.name})", text[:EVIDENCE_CHARS]))
        except Exception as exc:  # a closed or hung page: say so, and go on
            found.append((f"page {n} ({page.url})", f"could not be read: {exc}"))
    if SERVER_LOG is not None and SERVER_LOG.exists():
        found.append(("server log, last lines", SERVER_LOG.read_text()[-EVIDENCE_CHARS:]))
    return found
