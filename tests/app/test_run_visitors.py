"""Who may take up the run a Train page's address names: the browser that started it, after
a reload; anyone else sees it once it has ended, and never takes over one that trains."""

from __future__ import annotations

from unittest import mock

import pytest
import streamlit as st
from apptest_helpers import APP, button, wait_for
from streamlit.testing.v1 import AppTest
from streamlit.web.server.starlette import starlette_app_utils

from app_pages.ui.train import runs


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


@pytest.mark.parametrize("owners_tab", ["open", "closed"])
def test_a_visitor_never_takes_over_a_run_that_trains(owners_tab):
    owner = _page()
    active = _start(owner, epochs=300, pace=5)
    try:
        if owners_tab == "closed":  # within the grace a reload has, the run still trains
            active.job.connected = lambda: False
        watched_by = active.job.connected
        visitor = _page(_address(owner))
        assert "train_run" not in visitor.session_state
        assert any("training on another page" in text for text in _said(visitor)), _said(visitor)
        assert active.job.connected is watched_by and active.job.alive
        assert [b.label for b in visitor.button][:1] == ["Train"]
    finally:
        active.job.stop()


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
