"""Who may take up the run a Train page's address names: the browser that started it, after
a reload; anyone else follows it, read-only, while it trains, and sees it once it has ended."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest
import streamlit as st
from apptest_helpers import APP, button, wait_for
from engine_helpers import wait_until
from streamlit.testing.v1 import AppTest
from streamlit.web.server.starlette import starlette_app_utils

from app_pages.engine import collection
from app_pages.ui.train import following, runs
from nca_core.plots import replay


def _page(address: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    if address:
        at.query_params.update(address)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _start(owner: AppTest, epochs: int, pace: int) -> runs.ActiveRun:
    owner.sidebar.slider(key="rings-epochs-linear-2").set_value(epochs)
    owner.sidebar.slider(key="pace").set_value(pace)
    owner.sidebar.toggle(key="slow-start").set_value(False)
    button(owner, "Train").click().run()
    return owner.session_state["train_run"]


def _address(at: AppTest) -> dict[str, str]:
    return {key: str(value) for key, value in at.query_params.items()}


def _said(at: AppTest) -> list[str]:
    return [i.value for i in at.info] + [w.value for w in at.warning]


def _epoch(at: AppTest) -> float:
    """The epochs done that the page's Epoch metric shows (12.5 part-way through the 13th;
    rounded to two decimals), -1 before it shows one."""
    shown = [m.value for m in at.metric if m.label == "Epoch"]
    return float(shown[0]) if shown else -1.0


def _labels(at: AppTest) -> list[str]:
    return [b.label for b in at.button]


@pytest.mark.parametrize("owners_tab", ["open", "closed"])
def test_a_visitor_follows_a_run_that_trains_live_and_read_only(owners_tab):
    owner = _page()
    active = _start(owner, epochs=300, pace=5)
    try:
        if owners_tab == "closed":  # within the grace a reload has, the run still trains
            active.job.connected = lambda: False
        watched_by = active.job.connected
        wait_for(owner, lambda at: active.job.latest is not None and active.job.latest.epoch >= 2)
        visitor = _page(_address(owner))
        assert "train_run" not in visitor.session_state  # no run of its own
        assert "Train my own run" in _labels(visitor)
        assert not {"Train", "Pause", "Resume", "Step", "Stop"} & set(_labels(visitor))
        assert not [t for t in _said(visitor) if "another page" in t], _said(visitor)
        first = _epoch(visitor)
        assert first >= 2
        # the follower draws the owner's latest frame as the run advances: never a replay
        wait_for(visitor, lambda at: _epoch(at) >= first + 2)
        assert active.job.connected is watched_by and active.job.alive
        assert not (active.job.pause_requested or active.job.stop_requested)
        active.job.pause()  # the lecturer pauses: the follower shows the very frame it paused at
        wait_until(lambda: active.job.state == "paused")
        visitor.run()
        assert visitor.metric[0].value == replay.epoch_label(active.job.latest)
        view = visitor.session_state[following.VIEW]
        with pytest.raises(AttributeError, match="read-only"):
            view.job.stop()
        assert _address(visitor)["run"] == active.token  # a reload follows it on
    finally:
        active.job.stop()


def test_a_run_trains_once_however_many_follow_it():
    owner = _page()
    active = _start(owner, epochs=300, pace=5)
    try:
        followers = [_page(_address(owner)) for _ in range(3)]
        for follower in followers:
            wait_for(follower, lambda at: _epoch(at) >= 1)
        computing = [job for job in collection._every_job() if job.alive]
        assert computing == [active.job]
        assert runs.job_slots().running == 1
    finally:
        active.job.stop()


def test_a_follower_trains_a_run_of_its_own_with_the_same_settings():
    owner = _page()
    active = _start(owner, epochs=300, pace=5)
    try:
        visitor = _page(_address(owner))
        button(visitor, "Train my own run").click().run()
        own = visitor.session_state["train_run"]
        try:
            assert own.job is not active.job and own.token != active.token
            assert own.run.config == active.run.config
            assert {"Pause", "Stop"} <= set(_labels(visitor)) and "Train my own run" not in _labels(visitor)
            assert _address(visitor)["run"] == own.token
            button(visitor, "Stop").click().run()
            own.job.join(timeout=30)
            assert not own.job.alive and active.job.alive  # its Stop stops its run alone
        finally:
            own.job.stop()
    finally:
        active.job.stop()


def test_a_follower_sees_the_run_as_finished_once_it_ends():
    owner = _page()
    active = _start(owner, epochs=300, pace=5)
    visitor = _page(_address(owner))
    assert "Train my own run" in _labels(visitor)
    active.job.stop()
    active.job.join(timeout=30)
    visitor.run()
    shown = visitor.session_state["train_run"]
    assert shown.job is active.job and shown.token == active.token
    assert "Train my own run" not in _labels(visitor) and "Train" in _labels(visitor)
    assert visitor.metric[0].value == replay.epoch_label(active.job.latest)
    assert _address(visitor)["run"] == active.token


def test_the_browser_that_started_a_run_takes_it_up_again_after_a_reload(monkeypatch):
    monkeypatch.setattr(runs, "browser_id", lambda: "the lecturer's browser")
    owner = _page()
    active = _start(owner, epochs=300, pace=5)
    try:
        active.job.connected = lambda: False  # the tab that started it was reloaded
        reloaded = _page(_address(owner))
        assert reloaded.session_state["train_run"] is active
        assert any("Found the run this page was showing again: it trains on" in t for t in _said(reloaded))
    finally:
        active.job.stop()


def test_a_finished_runs_address_shows_it_to_a_visitor_without_a_word():
    owner = _page()
    _start(owner, epochs=6, pace=0)
    wait_for(owner, lambda at: not at.session_state["train_run"].job.alive)
    owner.run()
    address = _address(owner)
    visitor = _page(address)
    shown = visitor.session_state["train_run"]
    assert shown.trained is owner.session_state["train_run"].trained and shown.token == address["run"]
    assert visitor.metric[0].value == "6"
    assert not [t for t in _said(visitor) if "run" in t.lower() and "Press **Train** to start" not in t]
    assert _address(visitor) == address


def test_a_browser_is_named_by_its_xsrf_token_across_reloads_and_never_by_the_token_itself():
    first = starlette_app_utils.generate_xsrf_token_string(None, None)
    token, stamp = starlette_app_utils.decode_xsrf_token_string(first)
    reloaded = starlette_app_utils.generate_xsrf_token_string(token, stamp)  # masked anew
    another = starlette_app_utils.generate_xsrf_token_string(None, stamp)
    assert first != reloaded
    names = []
    for cookie in (first, reloaded, another, None, "1|garbage", "2|zz|zz|1"):
        cookies = {} if cookie is None else {runs.XSRF_COOKIE: cookie}
        with mock.patch.object(type(st.context), "cookies", new_callable=mock.PropertyMock, return_value=cookies):
            names.append(runs.browser_id())
    assert names[0] == names[1] and names[0] != names[2]
    assert names[3:] == [None, None, None]
    assert token.hex() not in names[0]


def test_a_run_of_an_upload_is_never_followed_from_another_browser():
    """The file is its uploader's: another browser opening the address of a run on it sees
    neither the run nor its picture, while it trains."""
    sample = Path(APP).parent / "app_pages" / "assets" / "sample-iris.csv"
    owner = _page()
    owner.switch_page("app_pages/your_data.py").run()
    owner.file_uploader(key="upload").set_value(("iris.csv", sample.read_bytes(), "text/csv")).run()
    button(owner, "Use this dataset on every page").click().run()
    owner.switch_page("app_pages/train.py")
    owner.sidebar.slider(key="uploaded-epochs-linear-2").set_value(300)
    owner.sidebar.slider(key="pace").set_value(5)
    button(owner, "Train").click().run()
    active = owner.session_state["train_run"]
    try:
        assert active.dataset == "uploaded" and active.job.alive
        visitor = _page(_address(owner))
        assert runs.FOLLOWED not in visitor.session_state and "train_run" not in visitor.session_state
        assert "Train my own run" not in _labels(visitor)
        assert visitor.selectbox(key="dataset").value == "rings"  # the link's word on uploads says why
    finally:
        active.job.stop()


def test_a_networks_run_is_followed_too():
    """A network's frames keep no weights but do keep the embedding: a follower draws them."""
    owner = _page()
    owner.sidebar.selectbox(key="rings-encoder").set_value("mlp").run()
    owner.sidebar.slider(key="rings-epochs-mlp-2").set_value(300)
    owner.sidebar.slider(key="pace").set_value(5)
    owner.sidebar.toggle(key="slow-start").set_value(False)
    button(owner, "Train").click().run()
    active = owner.session_state["train_run"]
    try:
        assert active.run.config.encoder == "mlp"
        visitor = _page(_address(owner))
        assert "Train my own run" in _labels(visitor)
        wait_for(visitor, lambda at: _epoch(at) >= 1)
        first = _epoch(visitor)
        wait_for(visitor, lambda at: _epoch(at) >= first + 1)
        assert [job for job in collection._every_job() if job.alive] == [active.job]
    finally:
        active.job.stop()
