"""The package as a user gets it: a wheel built from a copy of the sources, installed into a
fresh virtual environment, and its app served from a folder that holds nothing of the project.

The fresh environment takes the wheel alone (pip --no-deps). Its dependencies (torch,
Streamlit, ...) are read from this interpreter's site-packages through a .pth file, rather
than downloaded again: a plain folder line in a .pth adds that folder after the
environment's own site-packages and reads no .pth files inside it, so the development
install's editable finder never loads there, and nca_core and app_pages come from the wheel.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# What the wheel is built from: the build reads nothing else.
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "nca_core", "app_pages")


def build_wheel(folder: Path) -> Path:
    """The wheel pip builds from a copy of the sources (setuptools writes its build folders
    beside the sources, so never in the working tree); with this interpreter's setuptools."""
    source = folder / "source"
    source.mkdir(parents=True)
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(REPO / name, source / name)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-cache-dir",
         "--disable-pip-version-check", "-q", "-w", str(folder / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (wheel,) = (folder / "dist").glob("nca_explorer-*.whl")
    return wheel


def install_fresh(wheel: Path, folder: Path) -> Path:
    """A new virtual environment in ``folder`` holding ``wheel`` (not editable); its bin folder."""
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    paths = _run_json(python, "import json, sysconfig; print(json.dumps(sysconfig.get_paths()))")
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (Path(paths["purelib"]) / "_dependencies.pth").write_text("".join(f"{path}\n" for path in ours))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
         "--disable-pip-version-check", "-q", str(wheel)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return folder / "bin"


def imported_from(bin_folder: Path, cwd: Path) -> dict[str, str]:
    """Where the environment's interpreter, started in ``cwd``, finds the two packages."""
    return _run_json(
        bin_folder / "python",
        "import json, nca_core, app_pages; "
        "print(json.dumps({'nca_core': nca_core.__file__, 'app_pages': app_pages.__file__}))",
        cwd=cwd,
    )


def _run_json(python: Path, code: str, cwd: Path | None = None):
    result = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=300, cwd=cwd)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(url: str, server: subprocess.Popen, log: Path, seconds: float = 90) -> str:
    """The health endpoint's answer once the server gives one; fails with the server's log
    if it exits or stays silent for ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                return response.read().decode().strip()
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"the installed app did not answer at {url}: {log.read_text()[-3000:]}")


def stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
