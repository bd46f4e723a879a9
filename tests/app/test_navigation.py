"""The pages the app navigates with."""

from streamlit.testing.v1 import AppTest


def _two_runs_pages():
    import streamlit as st

    from app_pages.ui import navigation

    first, second = navigation.pages(), navigation.pages()
    shared = (navigation.ABOUT, navigation.TRAIN, navigation.COMPARE, navigation.KNN_SPEED, navigation.YOUR_DATA)
    st.session_state["titles"] = [p.title for p in first]
    st.session_state["distinct"] = [a is not b for a, b in zip(first, second)]
    st.session_state["same paths"] = [p.url_path for p in first] == [p.url_path for p in second] == [
        p.url_path for p in shared
    ]
    st.session_state["defaults"] = [p._default for p in first]


def test_each_run_of_the_script_navigates_with_pages_of_its_own():
    """``st.navigation`` marks the page it returns as callable once, on the object: pages
    shared by every session let one session's run use up another's mark, and a browser
    opening the app beside another got "This page cannot be called directly"
    (tests/e2e/test_replicas.py, eight browsers at once)."""
    at = AppTest.from_function(_two_runs_pages).run()
    assert not at.exception
    state = at.session_state
    assert state["titles"] == ["How NCA works", "Train", "Compare", "kNN speed and storage", "Your data"]
    assert all(state["distinct"])
    assert state["same paths"]
    assert state["defaults"] == [False, True, False, False, False]
