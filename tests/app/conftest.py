"""Helpers for Streamlit AppTests of the pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture
def app() -> AppTest:
    # a page run may train a quick model; the unit tests run at nice 19 beside the browser
    # tests (tests/run_suite.sh), where a starved 60 s ran out (Compare on a 6,000-point upload)
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    return at
