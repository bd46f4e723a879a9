"""What a session remembers of its data: an upload's results go with the upload."""

import gc
import weakref

import numpy as np

from app_pages.ui import app_data
from nca_core.datasets import Dataset


def _upload(seed: int) -> Dataset:
    X = np.random.default_rng(seed).normal(size=(40, 3)).astype(np.float32)
    y = np.arange(40) % 2
    return Dataset(app_data.UPLOAD_NAME, X[:30], y[:30], X[30:], y[30:], ("a", "b"))


def test_a_new_upload_lets_go_of_the_previous_ones_results_and_the_file_with_them(monkeypatch):
    """A session that uploads file after file and looks at each on another page (another
    key each time) holds the latest upload's results alone, not every file it ever sent."""
    session = {}
    monkeypatch.setattr(app_data.st, "session_state", session)
    first = session[app_data.UPLOAD_KEY] = _upload(0)
    assert app_data.session_cached(("fit", 2), app_data.UPLOAD_NAME, lambda: "first") == "first"
    first_gone = weakref.ref(first)
    session[app_data.UPLOAD_KEY] = _upload(1)
    del first
    assert app_data.session_cached(("fit", 3), app_data.UPLOAD_NAME, lambda: "second") == "second"
    gc.collect()
    assert first_gone() is None
    assert app_data.session_cached(("fit", 2), app_data.UPLOAD_NAME, lambda: "anew") == "anew"
    assert app_data.session_cached(("fit", 2), app_data.UPLOAD_NAME, lambda: "again") == "anew"
    app_data.forget(("fit", 2), app_data.UPLOAD_NAME)
    assert app_data.session_cached(("fit", 2), app_data.UPLOAD_NAME, lambda: "again") == "again"


def test_a_registered_sets_results_are_remembered_apart_from_any_upload(monkeypatch):
    session = {app_data.UPLOAD_KEY: _upload(0)}
    monkeypatch.setattr(app_data.st, "session_state", session)
    assert app_data.session_cached(("fit", "wine"), "wine", lambda: 1) == 1
    session[app_data.UPLOAD_KEY] = _upload(1)
    assert app_data.session_cached(("fit", "wine"), "wine", lambda: 2) == 1


def test_compare_takes_no_run_of_a_previous_upload_for_the_new_one(monkeypatch):
    """Compare and the kNN page reuse the Train page's run when it matches: a finished run
    of the previous upload, under the same name, does not match the new file."""
    from types import SimpleNamespace

    from app_pages.engine.jobs import JobState
    from app_pages.ui.compare import fits

    old, new = _upload(0), _upload(1)
    config = SimpleNamespace(n_components=2, standardize=False, encoder="linear", max_iter=5)
    run = SimpleNamespace(data=old, config=config, transform=lambda X: X[:, :2], fit_seconds=1.0)
    job = SimpleNamespace(alive=False, state=JobState.FINISHED)
    active = SimpleNamespace(dataset=app_data.UPLOAD_NAME, run=run, job=job, snapshots=[SimpleNamespace(epoch=5, fraction=1.0)])
    session = {"train_run": active, app_data.UPLOAD_KEY: old}
    monkeypatch.setattr(app_data.st, "session_state", session)
    assert fits.train_page_fit(app_data.UPLOAD_NAME, 2, False) is not None
    session[app_data.UPLOAD_KEY] = new
    assert fits.train_page_fit(app_data.UPLOAD_NAME, 2, False) is None
