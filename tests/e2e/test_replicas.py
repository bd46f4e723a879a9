"""Two app replicas behind nginx at the sub-path /nca/, with deploy/nginx/nca-explorer.conf:
every browser stays on one replica (its page, its websocket, its upload, its download),
and browsers land on both replicas though they all come from 127.0.0.1."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import pytest
from browser_helpers import without_slow_motion
from sklearn import datasets as sk

from tests.conftest import real_data_dir

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CONF = REPO / "deploy" / "nginx" / "nca-explorer.conf"
BASE = "nca"
# Fields of the access log the test's nginx writes: the visitor's key, the replica that
# answered, the request and its status.
LOG_FORMAT = "$nca_visitor $upstream_addr $request_method $uri $status"
BROWSERS, MOST_BROWSERS = 4, 16


def rendered(conf: str, ports: list[int], listen: int) -> str:
    """The repository's config with its replicas on ``ports`` and nginx on ``listen``."""
    servers = "".join(f"    server 127.0.0.1:{port};\n" for port in ports)
    conf, upstreams = re.subn(r"(?:    server 127\.0\.0\.1:\d+;\n)+", servers, conf)
    conf, listens = re.subn(r"listen 80;", f"listen 127.0.0.1:{listen};", conf)
    assert (upstreams, listens) == (1, 1), "the config's upstream block or listen line changed shape"
    return conf


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.read().decode().strip() == "ok":
                    return
        except OSError:
            time.sleep(0.3)
    process.kill()
    pytest.fail(f"{url} did not answer ok: {log.read_text()[-3000:]}")


def _start(command: list[str], log: Path, env: dict | None = None) -> subprocess.Popen:
    with log.open("w") as out:
        return subprocess.Popen(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


def _replica(folder: Path) -> tuple[subprocess.Popen, int, Path]:
    folder.mkdir()
    port, log = _free_port(), folder / "streamlit.log"
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "NCA_CACHE_DIR": str(folder / "cache")}
    if real_data_dir() is not None:
        env["NCA_DATA_DIR"] = str(real_data_dir())
    server = _start(
        [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true", "--server.baseUrlPath", BASE],
        log, env,
    )  # fmt: skip
    return server, port, log


def _nginx_main_conf(folder: Path, site: Path) -> str:
    """A whole nginx configuration around the site's, every path of its own in ``folder``."""
    temp = "\n".join(f"    {kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    # As root, nginx's workers would run as nobody, who cannot write the test's own folder.
    user = "user root;\n" if os.geteuid() == 0 else ""
    return (
        f"{user}pid {folder / 'nginx.pid'};\nworker_processes 1;\nevents {{ worker_connections 512; }}\n"
        f"http {{\n    log_format replicas '{LOG_FORMAT}';\n    access_log {folder / 'access.log'} replicas;\n"
        f"{temp}\n    include {site};\n}}\n"
    )


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    """nginx on a free port in front of two replicas; yields its URL and its access log."""
    nginx = shutil.which("nginx") or shutil.which("/usr/sbin/nginx")
    if nginx is None:
        pytest.skip("Debian's nginx is not installed (make test installs it when run as root)")
    folder = tmp_path_factory.mktemp("replicas")
    replicas = [_replica(folder / name) for name in ("a", "b")]
    processes = [server for server, _, _ in replicas]
    try:
        for server, port, log in replicas:
            _wait_healthy(f"http://127.0.0.1:{port}/{BASE}/_stcore/health", server, log)
        listen = _free_port()
        site = folder / "nca-explorer.conf"
        site.write_text(rendered(CONF.read_text(), [port for _, port, _ in replicas], listen))
        main = folder / "nginx.conf"
        main.write_text(_nginx_main_conf(folder, site))
        command = [nginx, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(main), "-g", "daemon off;"]
        processes.append(_start(command, folder / "nginx.out"))
        url = f"http://127.0.0.1:{listen}"
        _wait_healthy(f"{url}/{BASE}/_stcore/health", processes[-1], folder / "error.log")
        yield url, folder / "access.log", sorted(f"127.0.0.1:{port}" for _, port, _ in replicas)
    finally:
        for process in reversed(processes):
            _stop(process)


def requests_by_visitor(access_log: Path) -> dict[str, list[tuple[str, str, str, str]]]:
    """Each visitor's requests as (replica, method, path, status), from nginx's access log."""
    seen = defaultdict(list)
    for line in access_log.read_text().splitlines():
        visitor, replica, method, path, status = line.split(" ")
        if replica != "-":  # a request nginx answered itself
            seen[visitor].append((replica, method, path, status))
    return seen


def _open(browser, url: str):
    """A new browser (a context: cookies of its own) on the Train page through nginx."""
    context = browser.new_context(viewport={"width": 1440, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{url}/{BASE}/?dataset=rings&epochs=5")
    page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True).wait_for()
    (cookie,) = [c["value"] for c in context.cookies() if c["name"] == "nca_replica"]
    return context, page, cookie


def _replica_of(access_log: Path, visitor: str) -> str:
    return requests_by_visitor(access_log)[visitor][0][0]


def test_each_browser_stays_on_one_replica_and_trains_uploads_and_downloads_through_nginx(
    browser, proxy, tmp_path
):
    url, access_log, replicas = proxy
    iris = tmp_path / "iris.csv"
    sk.load_iris(as_frame=True).frame.rename(columns={"target": "species"}).to_csv(iris, index=False)
    opened = []  # (context, page, visitor)
    while len(opened) < BROWSERS or {_replica_of(access_log, v) for _, _, v in opened} != set(replicas):
        # The first request's key is random, so which replica a browser lands on is too:
        # open more until both have one (16 on one alone: one chance in 2^15).
        assert len(opened) < MOST_BROWSERS, f"{MOST_BROWSERS} browsers all landed on one replica"
        opened.append(_open(browser, url))
    assert len({visitor for _, _, visitor in opened}) == len(opened), "two browsers were given one key"
    for _, page, _ in opened:
        without_slow_motion(page)
        page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Train", exact=True).click()
    for _, page, _ in opened:
        page.get_by_text(re.compile(r"^Epoch 5 / 5 · finished")).wait_for(timeout=180_000)
        page.get_by_role("tab", name="Downloads").click()
        with page.expect_download() as download:
            page.get_by_role("button", name="Final embedding (CSV)").click()
        lines = Path(download.value.path()).read_text().splitlines()
        assert lines[0] == "row,split,label,z1,z2" and len(lines) == 1 + 700 + 300
    for _, page, _ in opened:
        page.goto(f"{url}/{BASE}/your_data")
        page.locator("input[type='file']").set_input_files(str(iris))
        page.get_by_text("105 training and 45 test rows, 4 features, 3 classes").wait_for()
        assert page.locator("[data-testid='stException']").count() == 0
    for context, _, _ in opened:
        context.close()  # nginx logs a websocket when it closes
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        seen = requests_by_visitor(access_log)
        if all(sum(path.endswith("/_stcore/stream") for _, _, path, _ in seen[v]) >= 2 for _, _, v in opened):
            break
        time.sleep(0.5)
    landed = set()
    for _, _, visitor in opened:
        requests = seen[visitor]
        on = {replica for replica, *_ in requests}
        assert len(on) == 1, f"one browser's requests reached {sorted(on)}: {requests}"
        landed |= on
        done = {(method, path.split("/")[3], status) for _, method, path, status in requests if path.count("/") >= 3}
        # the page's websocket (one per page load), its upload and its download
        assert {("GET", "stream", "101"), ("PUT", "upload_file", "204")} <= done, requests
        assert any(re.fullmatch(rf"/{BASE}/media/\w+\.csv", path) and status == "200" for *_, path, status in requests)
    assert landed == set(replicas)
