"""The About page's toy problem, fitted once per process and shared read-only."""

from __future__ import annotations

import streamlit as st

from nca_core.runs import toy


@st.cache_resource
def toy_problem() -> toy.ToyProblem:
    """The same toy set and learnt map for every session, so nobody may change its arrays."""
    problem = toy.toy_problem()
    for array in (problem.X, problem.y, problem.initial, problem.learned):
        array.flags.writeable = False
    return problem
