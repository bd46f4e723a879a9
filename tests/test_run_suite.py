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
        inside = path.parent == TESTS / "e2e"
        problem = "has no e2e mark" if inside else "is marked e2e outside tests/e2e"
        assert ("e2e" in _marks(path)) == inside, f"{path.relative_to(TESTS)} {problem}"


def _fake_python(tmp_path: Path) -> Path:
    """A stand-in for the venv's python: logs its niceness and arguments, and fails when
    they contain $FAIL."""
    fake = tmp_path / "python"
    fake.write_text(
        '#!/usr/bin/env bash\necho "$(nice) $*" >> "$LOG"\n'
        'case "$*" in *"$FAIL"*) echo "fake failure"; exit 1;; esac\necho "fake pass"\n'
    )
    fake.chmod(0o755)
    return fake


def _run_suite(tmp_path: Path, fail: str) -> tuple[int, list[str], str]:
    log = tmp_path / f"calls-{len(list(tmp_path.iterdir()))}.log"
    env = {**os.environ, "LOG": str(log), "FAIL": fail}
    result = subprocess.run(
        ["bash", str(SUITE), str(_fake_python(tmp_path)), "2"], capture_output=True, text=True, env=env, timeout=60
    )
    return result.returncode, sorted(log.read_text().splitlines()), result.stdout


def test_three_runs_cover_every_test_and_only_the_unit_tests_are_niced(tmp_path):
    rc, calls, out = _run_suite(tmp_path, fail="no such argument")
    assert rc == 0, out
    own = os.nice(0)
    assert calls == sorted([
        f"{min(own + 19, 19)} -m pytest -n 2 -m not e2e and not wall_clock",
        f"{own} -m pytest -m wall_clock and not e2e",
        f"{own} -m pytest -m e2e tests/e2e",
    ])  # fmt: skip
    assert "== unit tests (ran in the background)\nfake pass" in out


@pytest.mark.parametrize("fail", ["not wall_clock", "wall_clock and not e2e", "tests/e2e"])
def test_a_failure_in_any_run_fails_the_suite_and_the_others_still_run(tmp_path, fail):
    rc, calls, out = _run_suite(tmp_path, fail=fail)
    assert rc != 0
    assert len(calls) == 3, calls
    assert out.count("fake failure") == 1 and out.count("fake pass") == 2
