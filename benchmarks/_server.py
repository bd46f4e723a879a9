"""Starting the app for the browser benchmarks (`streamlit run` on a free 127.0.0.1 port), and
reading what it and the browsers cost: memory, and CPU split between server, Chromium and machine."""

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


def cpu_seconds(pid: int) -> float:
    """The process's user and system CPU seconds so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _chromium_cpu_seconds() -> float:
    """CPU seconds so far of every Chromium process on the machine (the browser, its
    renderers, its GPU and utility processes), counted from /proc."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # a process that ended while we looked
            continue
        if text[text.index("(") + 1 : text.rindex(")")] in ("chromium", "chrome", "headless_shell"):
            fields = text.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _machine_busy_seconds() -> float:
    """The machine's busy CPU seconds so far, over all its cores (/proc/stat)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields) - idle) / os.sysconf("SC_CLK_TCK")


class CpuSplit:
    """Where the machine's CPU goes from ``start`` to each ``so_far``: the server, Chromium,
    and the machine as a whole, each in CPU seconds a second (so with N cores, at most N)."""

    def __init__(self, server_pid: int):
        self.server_pid = server_pid

    def _read(self) -> tuple[float, float, float, float]:
        return time.monotonic(), cpu_seconds(self.server_pid), _chromium_cpu_seconds(), _machine_busy_seconds()

    def start(self) -> None:
        self._start = self._read()

    def so_far(self) -> dict:
        end = self._read()
        seconds = end[0] - self._start[0]
        server, chromium, busy = ((b - a) / seconds for a, b in zip(self._start[1:], end[1:]))
        return {"seconds": seconds, "server": server, "chromium": chromium, "machine": busy, "cores": os.cpu_count()}
