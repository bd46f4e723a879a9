"""Starting the app for the browser benchmarks: `streamlit run` on a free 127.0.0.1 port."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]


def serve(env: dict[str, str] | None = None, log: Path | None = None) -> tuple[subprocess.Popen, str]:
    """Start the app and wait for its health endpoint; returns the process and its URL.
    ``env``: the server's environment (default this process's); ``log``: a file for its
    output, read back in the error if it does not start (default: discarded)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with open(log or os.devnull, "w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                if reply.read().strip() == b"ok":
                    return server, url
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise SystemExit("streamlit did not start" + (f": {log.read_text()[-2000:]}" if log else ""))


@contextmanager
def served_for_chromium() -> Iterator[str]:
    """The app's URL, served while the block runs; exits with a message without chromium."""
    if shutil.which("chromium") is None:
        raise SystemExit("needs Debian's chromium (make test installs it)")
    os.environ.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    server, url = serve()
    try:
        yield url
    finally:
        server.terminate()
        server.wait(timeout=20)
