"""tests/run_suite.sh, which `make test` runs: every test in one of its three runs, and a
failure in any run fails the suite."""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SUITE = TESTS / "run_suite.sh"


def _marks(path: Path) -> set[str]:
    """The pytest marks a test file applies: ``pytestmark = ...`` or a decorator."""
    marks = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            if node.value.attr == "mark" and isinstance(node.value.value, ast.Name):
                marks.add(node.attr)
    return marks


def test_browser_tests_are_the_e2e_folder_exactly():
    """The browser run collects tests/e2e alone: an e2e test elsewhere would never run, and
    a test there without the mark would run twice."""
    for path in sorted(TESTS.rglob("test_*.py")):
        inside = TESTS / "e2e" in path.parents
        problem = "has no e2e mark" if inside else "is marked e2e outside tests/e2e"
        assert ("e2e" in _marks(path)) == inside, f"{path.relative_to(TESTS)} {problem}"


# Stand-ins for nice and the venv's python. The python logs the niceness its nice was asked
# for and its arguments; the unit run and the wall-clock run each wait for the other to have
# started (run one after the other, they fail); a run whose arguments contain $FAIL fails.
_FAKE_NICE = """#!/usr/bin/env bash
[ "$1" = -n ] || exit 64
NICED=$2 exec "${@:3}"
"""
_FAKE_PYTHON = """#!/usr/bin/env bash
echo "${NICED:-0} $*" >> "$LOG"
beside() {
    for _ in $(seq 100); do grep -q -- "$1" "$LOG" && return; sleep 0.1; done
    echo "fake failure: no run with '$1' beside this one"; exit 1
}
case "$*" in
    *"not e2e and not wall_clock"*) beside "wall_clock and not e2e" ;;
    *"wall_clock and not e2e"*) beside "not wall_clock" ;;
esac
case "$*" in *"$FAIL"*) echo "fake failure"; exit 1;; esac
echo "fake pass"
"""


def _run_suite(tmp_path: Path, fail: str) -> tuple[int, list[str], str]:
    """Run the script with the stand-ins; its exit code, the runs it made (sorted) and what
    it printed."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    for name, text in (("nice", _FAKE_NICE), ("python", _FAKE_PYTHON)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    env = {**os.environ, "LOG": str(log), "FAIL": fail, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        ["bash", str(SUITE), str(bin_dir / "python"), "2"], capture_output=True, text=True, env=env, timeout=60
    )
    return result.returncode, sorted(log.read_text().splitlines()), result.stdout


def test_three_runs_cover_every_test_and_only_the_unit_run_is_niced_and_beside_the_others(tmp_path):
    rc, calls, out = _run_suite(tmp_path, fail="no such argument")
    assert rc == 0, out
    assert calls == [
        "0 -m pytest -m e2e tests/e2e",
        "0 -m pytest -m wall_clock and not e2e",
        "19 -m pytest -n 2 -m not e2e and not wall_clock",
    ]
    assert "== unit tests (ran in the background)\nfake pass" in out


@pytest.mark.parametrize("fail", ["not wall_clock", "wall_clock and not e2e", "tests/e2e"])
def test_a_failure_in_any_run_fails_the_suite_and_the_others_still_run(tmp_path, fail):
    rc, calls, out = _run_suite(tmp_path, fail=fail)
    assert rc == 1
    assert len(calls) == 3, calls
    assert out.count("fake failure") == 1 and out.count("fake pass") == 2
