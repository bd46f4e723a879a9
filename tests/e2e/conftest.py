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
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
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
        pytest.fail(f"streamlit did not become healthy: {server.stdout.read()}")
    yield url
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()


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
