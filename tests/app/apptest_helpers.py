"""Helpers shared by the AppTests (imported by name; conftest modules are not importable
reliably when several test folders have one)."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest


def wait_for(at: AppTest, condition, timeout: float = 60.0) -> None:
    """Rerun the app until ``condition(at)`` holds, as the page's own polling would."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        if condition(at):
            return
        time.sleep(0.2)
    raise AssertionError("condition not reached within the timeout")


def button(at: AppTest, label: str):
    matches = [b for b in at.button if b.label == label]
    assert matches, f"no button {label!r}; have {[b.label for b in at.button]}"
    return matches[0]
