"""The code stays readable in pieces: every function at most 60 lines, every class at most
300, every module at most 400, in the library and the app alike; no folder of the app's
ui holds more than 12 modules; and the app's training engine imports no Streamlit."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "nca_core").rglob("*.py"), *(ROOT / "app_pages").rglob("*.py"), ROOT / "app.py"])
LIMITS = {"function": 60, "class": 300, "module": 400}


def oversized(path: Path) -> list[str]:
    """What in ``path`` is longer than ``LIMITS`` allows, as "kind name: lines"."""
    text = path.read_text()
    found = []
    if len(text.splitlines()) > LIMITS["module"]:
        found.append(f"module {path.name}: {len(text.splitlines())}")
    for node in ast.walk(ast.parse(text)):
        kind = "class" if isinstance(node, ast.ClassDef) else "function"
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            lines = node.end_lineno - node.lineno + 1
            if lines > LIMITS[kind]:
                found.append(f"{kind} {node.name}: {lines}")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_functions_classes_and_modules_stay_within_their_lengths(path):
    assert oversized(path) == []


def test_the_length_check_sees_a_long_function(tmp_path):
    long = tmp_path / "long.py"
    long.write_text("def f():\n" + "    x = 1\n" * 60)
    assert oversized(long) == ["function f: 61"]


def test_no_folder_of_the_app_holds_more_than_twelve_modules():
    folders = {p.parent for p in (ROOT / "app_pages").rglob("*.py")}
    crowded = {
        str(f.relative_to(ROOT)): n
        for f in folders
        if (n := len([p for p in f.glob("*.py") if p.name != "__init__.py"])) > 12
    }
    assert crowded == {}


def test_the_engine_imports_no_streamlit():
    for path in (ROOT / "app_pages" / "engine").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names] if isinstance(node, ast.Import)
                else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            )  # fmt: skip
            assert not [n for n in names if n.split(".")[0] == "streamlit"], path.name
