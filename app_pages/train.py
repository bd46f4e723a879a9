"""Train: pick a dataset, press Train, watch the classes rearrange epoch by epoch."""

import streamlit as st

from app_pages.ui import app_data, lesson, links, navigation
from app_pages.ui.train import buttons, following, presentation, runs

LOADED = "train-loaded-dataset"  # session key: the dataset the page last loaded
# Back to an address of this page draws it with that address's settings (the run settings'
# widgets are keyed by dataset: sidebar.run_settings)
names = app_data.dataset_names()
links.follow_address(navigation.TRAIN.url_path, names, tuple(f"{dataset}-" for dataset in names))
links.read_once(names)  # a link's settings, ?present=1 among them, come first
runs.find_again(links.run_token())  # a reloaded page takes up its run (and says so below)
presenting = presentation.active()  # large type, no sidebar, one big chart
presentation.style(presenting)
# The title's container is drawn in both modes, so the row below keeps its place when the
# mode changes: Streamlit then redraws the run buttons where they were, rather than drawing
# them anew beside the old ones until the run ends (two Train buttons for a moment).
with st.container():
    if not presenting:
        presentation.title_with_toggle("Train NCA and watch it learn")
        st.caption(
            "Neighbourhood Components Analysis learns a map, linear or a neural network, under which "
            "each point's nearest neighbours share its class. Press **Train** and watch the embedding "
            "move as it learns."
        )
# The dataset and the run buttons share one row, so the picture starts on the first screen
# (at 1024 pixels beside the sidebar they fill it; presenting, the toggle follows them).
top = st.container(horizontal=True, vertical_alignment="bottom")
with top, st.container(width=320 if presenting else 280):  # large type needs the room
    name = app_data.pick_dataset()
# A dataset this session has not shown yet may take seconds to load: Train waits for it.
loading = st.session_state.get(LOADED) != name
# The picture and the curves (drawn last), then the dataset and notes on its settings: each
# in a slot. While a dataset loads, a placeholder, so that one line can take the place of all
# of it; otherwise a container, as the block it is filled with: a placeholder sent on every
# run reached the browser at times before the block that replaced it (the page had sent its
# messages in between), and the browser then dropped the live picture and the curves and
# built them anew (a tenth of a second with no picture at a Pause or Resume click).
stage_slot, about_slot = (st.empty(), st.empty()) if loading else (st.container(), st.container())
followed = following.followed(name)  # another page's run, followed read-only
active = runs.current()
if active is not None and (active.dataset != name or not app_data.still_loaded(name, active.run.data)):
    runs.reset()
    active = None
# The buttons come before the dataset and the settings, whose first load also imports torch
# and scikit-learn (seconds on a fresh server). A run asked for starts below, once its
# settings are read; its buttons are drawn for it already.
if active is not None and active.job.alive and buttons.train_requested():
    runs.drop_request()  # a second Train click (a double click) while its run trains
requested = buttons.train_requested() and not (active is not None and active.job.alive)
running = requested or (active is not None and active.job.alive)
paused = runs.pending_pause() or (active is not None and active.job.pause_requested)
with top:
    if followed is not None:
        following.own_run_button()  # no Pause or Stop: the run is another page's
    else:
        buttons.run_buttons(running, paused, ready=not loading)
    if presenting:
        presentation.toggle()
# While it loads, the picture's place says so ("Press Train" there would contradict a
# disabled Train) and the previous dataset's picture, results and description go.
if loading:
    stage_slot.info(
        f"Loading {app_data.dataset_title(name)}… Train is ready once it has loaded.",
        icon=":material/hourglass_top:",
    )
    about_slot.empty()

from app_pages.ui.train import embedding_view, epochs, live_status, notices, run_results, start_view  # noqa: E402  (see the buttons: these load torch)
from app_pages.ui.train.sidebar import demo_for, run_settings  # noqa: E402
from nca_core.runs.run import Run  # noqa: E402

data = app_data.load_dataset(name)
if data is None:
    stage_slot.empty()  # the error below says why: it is not loading any more
    runs.drop_request()  # nothing to train: a Train click waiting for this data is dropped
    st.stop()
if loading:
    st.session_state[LOADED] = name
    st.rerun()  # the buttons again, Train enabled
stage, about = stage_slot, about_slot  # containers: a run that loaded its dataset has rerun
demo = demo_for(name, data)  # a start that leaves the classes mixed, where the usual one does not
chosen = run_settings(
    data, key=name, overrides=links.take(*links.RUN_FIELDS), start=demo.init if demo else None
)
links.used(*links.RUN_FIELDS)  # every control is drawn with the link's values
# a link opens these settings, and a reload finds the run again
address = {**links.to_params(name, chosen, presenting), **runs.run_link()}
links.write_address(navigation.TRAIN.url_path, address)
run = Run(chosen, data)  # the settings made possible for the data, resolved once
config, notes = run.config, run.notes
# Until a run has a frame, its start (epoch 0 under these settings) is drawn, so that a
# class can guess what training will do before pressing Train.
before = runs.shown()
start = start_view.start_picture(name, data, chosen) if before is None or not before.snapshots else None
with about:
    if not presenting:
        with st.expander(
            f"About this dataset: {len(data.y_train):,} training and {len(data.y_test):,} test points, {data.n_features} features, {data.n_classes} classes"
        ):
            st.write(data.description)
            if data.citation:
                st.caption(data.citation)
    links.show_notices()
    found = st.session_state.pop(runs.FOUND, None)
    if found is not None:
        st.info(found, icon=":material/history:")
    if not presenting:
        for note in notes:
            st.info(note, icon=":material/info:")
        if demo is not None and config.init == demo.init:
            st.caption(notices.demo_start(demo, config, data))
        if len(run.data.y_train) < len(data.y_train):
            st.caption(
                f"This run learns from a stratified {len(run.data.y_train):,} of the {len(data.y_train):,} "
                "training points (**Training points** in the sidebar), so the class sees it learn; "
                "the test set stays whole."
            )

pace = buttons.pace_controls()
if requested:
    active = runs.start(name, run, pace)


def status_and_picture(page: dict, first_frame_due: bool = False, start=None) -> None:
    """Progress, errors and the embedding: redrawn often while training (live_status.redraw_seconds).
    ``page``: what this page run decided (``picture``'s); ``first_frame_due``: the page run
    that drew this had a run with no frame yet; ``start``: the start picture
    (``start_view``), drawn until a run has a frame."""
    current = runs.current()
    # the start frame went out on an earlier tick (an app rerun drops what is not yet sent)
    start_sent = current is not None and current.job.start_released
    if current is not None:
        current.job.heartbeat()
        live_status.progress(current)
        if current.job.error:
            st.error(current.job.error, icon=":material/error:")
    shown = runs.shown()
    if (shown is None or not shown.snapshots) and start is not None:
        start_view.draw(start, page["data"], page["demo"], page["presenting"], waiting=current is None)
    elif shown is None or not shown.snapshots:
        if current is not None and current.job.alive:
            st.info("Starting the run: the picture appears with its first frame.", icon=":material/hourglass_top:")
        else:
            st.info(
                "Press **Train** to start. The picture appears with the first epoch.", icon=":material/touch_app:"
            )
    else:
        picture(shown, **page)
        shown.job.drawn()
    if first_frame_due and start_sent:
        st.rerun(scope="app")  # the start frame is shown: poll at the run's own pace from now on
    if current is not None and not current.job.alive and st.session_state.get("was_running"):
        st.session_state["was_running"] = False
        st.rerun(scope="app")  # the run ended: draw the results below
    st.session_state["was_running"] = current is not None and current.job.alive


def picture(shown, data, demo, running: bool, presenting: bool) -> None:
    """Metrics, the embedding and what to notice in it; when presenting, the embedding
    fills most of the width with the accuracy and the notice beside it. Its arguments are
    this page run's: a fragment rerun is called with the ones it was drawn with."""
    three_d = shown.snapshots[-1].embedding.shape[1] == 3
    # presenting, the notice shares a narrow column in large type: its click hint is brief
    notice = notices.live(three_d, presenting) if running else notices.final(shown, three_d, presenting)
    if not presenting:
        live_status.metrics(shown, demo)
        embedding_view.embedding(shown, data, select=not running)
        st.caption(notice)
        return
    chart, side = st.columns([2, 1])  # the picture is as wide as its data needs (presentation.picture_width_style)
    with side:
        live_status.accuracy_metric(shown)
        view = presentation.view_picker()  # the curves, the replay, epochs side by side at hand
        if view == presentation.PICTURE and not three_d:
            presentation.class_names_toggle()
        st.caption(notice)
    with chart:
        if view == presentation.PICTURE:
            embedding_view.embedding(shown, data, select=not running, big=True)
        else:
            presentation.other_view(view, shown, data, run_results.replay_title(shown, data), running)


def curves() -> None:
    """The curves: they change slowly, so they are redrawn less often."""
    shown = runs.shown()
    if shown is not None and shown.snapshots:
        live_status.curves(shown)


running = running and active is not None
first_frame_due = running and not active.snapshots and not active.job.waits_for_slot
resting = running and active.job.at_rest  # set by a click (Pause, Step), which reruns the page
page = {"data": data, "demo": demo, "running": running, "presenting": presenting}
if running:
    # a page's redraws take their share of the server's when many runs are under way
    n_train, d, under_way = len(data.y_train), active.run.config.n_components, runs.job_slots().running
    picture_every, curves_every = live_status.redraw_seconds(
        n_train, d, first_frame=first_frame_due, resting=resting, runs_under_way=under_way
    )
    # Once the start frame is shown the page reruns, only to poll at the run's own pace: a
    # small set on a quiet server already polls at that pace, and its picture is not sent twice.
    steady = live_status.redraw_seconds(n_train, d, runs_under_way=under_way)
    first_frame_due = first_frame_due and (picture_every, curves_every) != steady
# A fragment draws into a container of its own, so after a run the picture and the curves
# are drawn into a container too: at the same place in the page, the browser keeps the
# chart through Stop, the run's end and the next Train, instead of dropping it and building
# a new one (a moment with no picture, or two pictures and two rows of numbers).
if followed is not None:
    following.show(stage, followed, page, picture)
elif presenting:  # the one big chart, full width
    with stage:
        if running:
            st.fragment(status_and_picture, run_every=picture_every)(page, first_frame_due, start)
        else:
            with st.container():
                status_and_picture(page, start=start)
else:
    left, right = stage.columns([3, 2])
    if running:
        with left:
            st.fragment(status_and_picture, run_every=picture_every)(page, first_frame_due, start)
            # epochs reached so far, side by side: at a slower pace than the picture
            grid_every = max(epochs.LIVE_SECONDS, curves_every)
            st.fragment(epochs.during_run, run_every=grid_every)(data, run_results.replay_title(active, data))
        with right:
            st.fragment(curves, run_every=curves_every)()
    else:
        with left, st.container():
            status_and_picture(page, start=start)
        with right, st.container():
            curves()
        done = runs.current()
        if done is not None and done.snapshots:
            run_results.results(done, data)
if not presenting:
    lesson.show_next_step("train", name)
buttons.keep_focus()  # after a run button's click, keyboard focus where the user acted
