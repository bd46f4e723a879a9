"""Train: pick a dataset, press Train, watch the classes rearrange epoch by epoch."""

import streamlit as st

from app_pages.ui import data as app_data
from app_pages.ui import run_controls as controls
from app_pages.ui import share, state, views
from app_pages.ui.controls import run_settings
from nca_core.runs import Run, resolve_config

st.title("Train NCA and watch it learn")
st.caption(
    "Neighbourhood Components Analysis learns a linear map under which each point's nearest "
    "neighbours share its class. Press **Train** and watch the embedding move as it learns."
)


name = app_data.pick_dataset()
data = app_data.load_dataset(name)
if data is None:
    st.stop()
with st.expander(
    f"About this dataset: {len(data.y_train):,} training and {len(data.y_test):,} test points, {data.n_features} features, {data.n_classes} classes"
):
    st.write(data.description)
    if data.citation:
        st.caption(data.citation)

active = state.current()
if active is not None and active.dataset != name:
    state.reset()
    active = None

chosen = run_settings(data, key=name, overrides=share.take(*share.RUN_FIELDS))
share.show_notices()
st.query_params.from_dict(share.to_params(name, chosen))  # a link to this page opens these settings
config, notes = resolve_config(chosen, data)
for note in notes:
    st.info(note, icon=":material/info:")

pace = controls.pace_controls()
if controls.train_requested() and not (active is not None and active.job.alive):
    active = state.start(name, Run(config, data), pace)
running = active is not None and active.job.alive
controls.run_buttons(running, running and active.job.pause_requested)


def status_and_picture() -> None:
    """Progress, errors and the embedding: redrawn often while training (views.redraw_seconds)."""
    current = state.current()
    if current is not None:
        current.job.heartbeat()
        views.progress(current)
        if current.job.error:
            st.error(current.job.error, icon=":material/error:")
    shown = state.shown()
    if shown is None or not shown.snapshots:
        st.info(
            "Press **Train** to start. The picture appears with the first epoch.", icon=":material/touch_app:"
        )
    else:
        views.metrics(shown)
        st.session_state["selection"] = views.embedding(shown, data, select=not running)
        shown.job.drawn()
    if current is not None and not current.job.alive and st.session_state.get("was_running"):
        st.session_state["was_running"] = False
        st.rerun(scope="app")  # the run ended: draw the results below
    st.session_state["was_running"] = current is not None and current.job.alive


def curves() -> None:
    """The curves: they change slowly, so they are redrawn less often."""
    shown = state.shown()
    if shown is not None and shown.snapshots:
        views.curves(shown)


left, right = st.columns([3, 2])
if running:
    picture_every, curves_every = views.redraw_seconds(len(data.y_train), active.run.config.n_components)
    with left:
        st.fragment(status_and_picture, run_every=picture_every)()
    with right:
        st.fragment(curves, run_every=curves_every)()
else:
    with left:
        status_and_picture()
    with right:
        curves()
    done = state.current()
    if done is not None and done.snapshots:
        views.results(done, data, st.session_state.get("selection"))
