"""Every screenshot the README and the docs show is one ``make docs-images`` takes again."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
IMAGES = REPO / "docs" / "images"


def shots() -> set[Path]:
    """Where docs/images/take.py writes its shots."""
    spec = importlib.util.spec_from_file_location("take", IMAGES / "take.py")
    take = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(IMAGES))  # take.py imports shrink.py beside it, as when it runs
    try:
        spec.loader.exec_module(take)
    finally:
        sys.path.remove(str(IMAGES))
    return {target for _, target in take.SHOTS.values()}


def shown() -> set[Path]:
    """The PNGs that README.md and docs/*.md show, other than the gallery's (make gallery)."""
    found = set()
    for page in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        for link in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", page.read_text()):
            if not link.startswith("gallery/"):
                found.add((page.parent / link).resolve())
    return found


def test_every_screenshot_shown_is_taken_again_by_make_docs_images():
    taken, pictures = shots(), shown()
    assert pictures, "no screenshots found in README.md or docs/*.md"
    assert not pictures - taken, f"shown but never taken again: {sorted(map(str, pictures - taken))}"
    assert not taken - pictures, f"taken but shown nowhere: {sorted(map(str, taken - pictures))}"
    assert all(path.exists() for path in pictures)
