"""docs/security.md names, for every bound, the test that checks it: each named test exists."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def named_tests(text: str) -> list[tuple[str, str]]:
    """(file under tests/, test name) for each `file::test` and each `::test` that follows one
    in the same table cell (the file before it)."""
    named = []
    for cell in text.split("|"):
        file = None
        for path, test in re.findall(r"`([\w/]+\.py)?::(test_\w+)`", cell):
            file = path or file
            named.append((file, test))
    return named


def test_every_test_the_security_page_names_exists():
    named = named_tests((REPO / "docs" / "security.md").read_text())
    assert len(named) > 30
    missing = [
        f"{file}::{test}"
        for file, test in named
        if file is None or not re.search(rf"^def {test}\(", (REPO / "tests" / file).read_text(), re.M)
    ]
    assert not missing, missing
