"""The app as a user who installed the wheel serves it: `nca-explorer app` in a folder that
holds nothing of the project, drawn in Chromium with the packaged settings and icon."""

from __future__ import annotations

import io
import os
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from PIL import Image

from tests.installed import REPO, build_wheel, free_port, imported_from, install_fresh, stop, wait_healthy

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The fresh environment's bin folder, and an empty folder to serve from."""
    bin_folder = install_fresh(build_wheel(tmp_path_factory.mktemp("build")), tmp_path_factory.mktemp("venv"))
    return bin_folder, tmp_path_factory.mktemp("elsewhere")


def _serve(command: list[str], cwd, log_folder):
    """Start ``command`` in ``cwd``; the server, its URL and its log."""
    port = free_port()
    log = log_folder / f"server-{port}.log"
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
    env.pop("PYTHONPATH", None)
    with log.open("w") as out:
        server = subprocess.Popen([*command, "--port", str(port)], cwd=cwd, env=env, stdout=out,
                                  stderr=subprocess.STDOUT)  # fmt: skip
    return server, f"http://127.0.0.1:{port}", log


def test_the_installed_app_serves_its_pages_with_its_own_settings_from_any_folder(installed, browser, tmp_path):
    bin_folder, elsewhere = installed
    where = imported_from(bin_folder, elsewhere)
    venv = bin_folder.parent
    assert all(venv in Path(path).parents for path in where.values()), where  # not the clone's
    server, url, log = _serve([str(bin_folder / "nca-explorer"), "app"], elsewhere, tmp_path)
    try:
        assert wait_healthy(url, server, log) == "ok"
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{url}/about")
        title = page.get_by_role("heading", name="How NCA works", level=1)
        title.wait_for()
        # the packaged theme's near-black text, not Streamlit's default grey-blue
        assert title.evaluate("e => getComputedStyle(e).color") == "rgb(26, 26, 26)"
        # the packaged icon: Streamlit re-encodes it, so its pixels are compared
        icon = page.locator("link[rel='shortcut icon']").get_attribute("href")
        with urllib.request.urlopen(urllib.parse.urljoin(f"{url}/", icon), timeout=10) as response:
            served = Image.open(io.BytesIO(response.read()))
        packaged = Image.open(REPO / "app_pages" / "assets" / "icon.png")
        assert served.size == packaged.size
        assert served.convert("RGBA").tobytes() == packaged.convert("RGBA").tobytes()
        page.goto(f"{url}/your_data")
        page.get_by_text("Files up to 50 MB").wait_for()  # server.maxUploadSize from the packaged settings
        context.close()
    finally:
        stop(server)
    assert server.returncode is not None


def test_python_m_nca_core_app_passes_streamlits_options_on_and_stops_its_server(installed, browser, tmp_path):
    bin_folder, elsewhere = installed
    command = [str(bin_folder / "python"), "-m", "nca_core", "app", "--server.maxUploadSize", "7"]
    server, url, log = _serve(command, elsewhere, tmp_path)
    try:
        assert wait_healthy(url, server, log) == "ok"
        context = browser.new_context(viewport={"width": 1024, "height": 768})
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(f"{url}/your_data")
        page.get_by_text("Files up to 7 MB").wait_for()
        context.close()
    finally:
        stop(server)  # SIGTERM to the command: the Streamlit server it started stops with it
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/_stcore/health", timeout=5)
