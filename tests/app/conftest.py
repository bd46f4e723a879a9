"""Helpers for Streamlit AppTests of the pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def runs_of_other_tests_are_not_joined():
    """Each test's runs are its own: a finished run of an earlier test in the process would
    otherwise be replayed to a later test asking for the same settings (``shared_runs``)."""
    from app_pages.engine import shared_runs

    with shared_runs._lock:
        shared_runs._runs.clear()


@pytest.fixture
def app():
    """The app, run once. No page run of a test may end in a traceback: every run is checked
    (a click's run that raised after starting its job leaves a page that later runs draw
    well, and a test of the job alone would pass)."""
    # a page run may train a quick model; the unit tests run at nice 19 beside the browser
    # tests (tests/run_suite.sh), where a starved 60 s ran out (Compare on a 6,000-point upload)
    at = AppTest.from_file(APP, default_timeout=180)
    raised = []
    run = at._run  # every page run goes through it: AppTest.run and each widget's run

    def run_and_check(*args, **kwargs):
        result = run(*args, **kwargs)
        raised.extend(exc.value for exc in at.exception)
        return result

    at._run = run_and_check
    at.run()
    assert not raised, raised
    yield at
    assert not raised, raised
