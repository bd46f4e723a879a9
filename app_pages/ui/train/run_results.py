"""What the Train page shows once a run has ended: the replay, the inspected point and its
neighbours, the learned map, and the downloads."""

from __future__ import annotations

import numpy as np
import streamlit as st

from app_pages.ui.app_data import dataset_title
from app_pages.ui.train import epochs, notices
from app_pages.ui.train.embedding_view import inspected_row, keyboard_picker
from app_pages.ui.train.runs import ActiveRun
from nca_core.datasets import Dataset
from nca_core.plots import colours, figures, replay
from nca_core.plots.gif import replay_gif
from nca_core.runs.picks import point_picks


def replay_title(active: ActiveRun, data: Dataset) -> str:
    """Names the run in the replay and its HTML export: what, on which data, in how many d."""
    config = active.run.config
    kind = "deep NCA" if config.encoder == "mlp" else "NCA"
    return f"{kind} on {dataset_title(active.dataset)}, d = {config.n_components}"


def results(active: ActiveRun, data: Dataset) -> None:
    """After a run: replay, epochs side by side, point inspection, the learned map and
    downloads."""
    run, snaps = active.run, active.snapshots
    tabs = st.tabs(["Replay", "Epochs side by side", "Inspect a point", "Learned map", "Downloads"])
    with tabs[0]:
        st.caption(
            "Every epoch of the run (at most 100 frames). Press play, drag the slider, or pick a speed."
        )
        notice = notices.replay(snaps)
        if notice:
            st.caption(notice)
        st.plotly_chart(
            replay.animation(snaps, run.display_labels, data.classes, title=replay_title(active, data)),
            key="replay",
        )
    with tabs[1]:
        epochs_side_by_side(active, data)
    with tabs[2]:
        inspect(active, data, inspected_row(active))
    with tabs[3]:
        learned_map(active, data)
    with tabs[4]:
        downloads(active, data)


def epochs_side_by_side(active: ActiveRun, data: Dataset) -> None:
    """Chosen epochs as small multiples on one scale (a 2-D picture of them for a 3-D run),
    the epochs to show chosen here, and a PNG of them for slides."""
    st.caption(
        "The same points on one scale in every panel: what moved is what the map learnt, and the "
        "picture grows as the map does. The button below the chart saves it as one PNG for slides."
    )
    epochs.side_by_side(active, data, replay_title(active, data))


def inspect(active: ActiveRun, data: Dataset, row: int | None) -> None:
    """The chosen point's p_ij: p_i and its likeliest picks, then their inputs (pictures or
    feature values) beside its own. A point is chosen by a click on the picture or by
    keyboard (``keyboard_picker``)."""
    run, snap = active.run, active.snapshots[-1]
    keyboard_picker(active)
    if row is None:
        st.info(
            "Click a point in the embedding above to see it and its nearest neighbours here, or "
            "choose one by its number, or with Previous, Next and Next unsure.",
            icon=":material/ads_click:",
        )
        return
    picks = point_picks(snap, run.display_labels, row)
    index, labels = run.display_index, run.display_labels
    if not len(picks.rows):
        st.warning(
            f"Training point #{index[row]} is at no finite distance from any other point drawn: "
            "it picks no neighbour.",
            icon=":material/warning:",
        )
        return
    st.markdown(
        f"Training point **#{index[row]}**, class **{data.classes[labels[row]]}**, in the embedding "
        f"(epoch {replay.epoch_label(snap)}): its {len(picks.rows)} likeliest picks among the "
        f"{len(index)} points drawn. The picture draws a line to each with p_ij of "
        f"{figures.LINK_MIN_PROBABILITY:g} or more."
    )
    st.metric(
        "p_i (same class)",
        f"{picks.p_i:.3f}",
        help="The sum of its p_ij over its own class: the chance that it picks a neighbour of its "
        "class, the term NCA's objective f adds up over all points.",
    )
    _picks_table(picks, index, labels, data.classes)
    _inputs(data, np.concatenate([[row], picks.rows]), index, labels)


def _picks_table(picks, index, labels, classes) -> None:
    """One row per pick, likeliest first: its training point, class, p_ij as a bar, and
    whether it shares the chosen point's class (in words, not colour alone)."""
    import pandas as pd

    table = pd.DataFrame({
        "training point": index[picks.rows],
        "class": [classes[c] for c in labels[picks.rows]],
        "p_ij": picks.strongest,
        "same class": ["yes" if same else "no" for same in picks.same],
    })  # fmt: skip
    p_ij = st.column_config.ProgressColumn(
        "p_ij",
        help="The chance that it picks this point as its neighbour.",
        format="%.3g",
        min_value=0.0,
        max_value=1.0,
    )
    st.dataframe(table, hide_index=True, column_config={"p_ij": p_ij})


def _inputs(data: Dataset, rows, index, labels) -> None:
    """The inputs of ``rows`` (display rows, the chosen point first): images in a grid, or a
    table of feature values."""
    st.markdown("Their inputs, the chosen point's first:")
    titles = [f"#{index[r]}: {data.classes[labels[r]]}" for r in rows]
    if data.image_shape is not None:
        titles[0] = "chosen<br>" + titles[0]  # a Plotly title; on one line it overflowed a ninth of the width
        grid = figures.image_grid(
            data.X_train[index[rows]], data.image_shape, titles, columns=9, title="the chosen point and its likeliest picks"
        )
        st.plotly_chart(
            grid,
            key="neighbour-images",
            config={"displayModeBar": False},
        )
    else:
        import pandas as pd

        titles[0] = "chosen " + titles[0]
        table = pd.DataFrame(data.X_train[index[rows]], index=titles, columns=list(data.feature_labels))
        st.dataframe(table, width="stretch")


def learned_map(active: ActiveRun, data: Dataset) -> None:
    run = active.run
    if not run.is_linear:
        widths = " and ".join(str(h) for h in run.model.hidden_sizes)
        st.info(
            f"This map is a neural network ({data.n_features} inputs, hidden layers of {widths} units, "
            f"{run.model.n_components_} outputs): there is no single matrix to draw. Train a linear map to see A.",
            icon=":material/hub:",
        )
        return
    A = run.model.components_
    where = "standardised inputs" if run.scaler is not None else "the inputs as given"
    st.caption(f"Rows are output coordinates, columns input features; the map acts on {where}.")
    names = None if data.image_shape is not None else list(data.feature_labels)
    st.plotly_chart(figures.map_heatmap(A, names), key="map-heatmap")
    st.caption(notices.learned_map(active, data))
    if data.image_shape is not None:
        words = colours.DIVERGING_WORDS
        st.caption(
            f"Each row of A as an image: {words['positive']} pixels push a coordinate up, "
            f"{words['negative']} pull it down."
        )
        st.plotly_chart(
            figures.component_images(A, data.image_shape), key="map-images", config={"displayModeBar": False}
        )


def downloads(active: ActiveRun, data: Dataset) -> None:
    run, snaps = active.run, list(active.snapshots)  # files are built on click, from this list
    stem = f"nca-{data.name}-d{run.config.n_components}"
    classes = list(data.classes)

    def animation_html() -> bytes:
        fig = replay.animation(snaps, run.display_labels, classes, title=replay_title(active, data))
        return fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False).encode()

    row = st.container(horizontal=True)  # wraps onto a second line on a narrow screen
    row.download_button(
        "Replay (GIF, for slides)",
        lambda: gif_file(active, data, snaps),
        file_name=f"{stem}-replay.gif",
        mime="image/gif",
        icon=":material/animated_images:",
        key="download-gif",
        help="An animated GIF (at most 60 frames, 800 x 600) that plays in any slide deck.",
        on_click="ignore",  # downloading changes nothing on the page
    )
    row.download_button(
        "Animation (HTML, plays offline)",
        animation_html,
        file_name=f"{stem}-replay.html",
        mime="text/html",
        icon=":material/movie:",
        key="download-html",
        on_click="ignore",  # downloading changes nothing on the page
    )
    row.download_button(
        "Final embedding (CSV)",
        lambda: run.embedding_csv(snaps[-1]),
        file_name=f"{stem}-embedding.csv",
        mime="text/csv",
        icon=":material/table:",
        key="download-csv",
        on_click="ignore",  # downloading changes nothing on the page
    )
    row.download_button(
        "Fitted model (.npz)",
        run.model_file,
        file_name=f"{stem}-model.npz",
        mime="application/octet-stream",
        icon=":material/download:",
        key="download-model",
        on_click="ignore",  # downloading changes nothing on the page
    )
    st.caption(
        "The CSV has a line for every training and test row: `row` (its place in your file, the "
        "header not counted, or in the set's own split), `split`, `label` and its coordinates. "
        "The model file holds plain arrays and JSON (no pickle); load it with "
        "`nca_core.load_model(path)`. Its `transform` takes raw inputs to the embedding drawn here "
        "(the CSV's coordinates): the run's centring and standardisation, if used, are part of it."
    )


def gif_file(active: ActiveRun, data: Dataset, snapshots=None) -> bytes:
    """The replay as an animated GIF for slides (``nca_core.plots.gif``); ``snapshots`` defaults
    to the run's."""
    run = active.run
    return replay_gif(
        list(active.snapshots if snapshots is None else snapshots),
        run.display_labels,
        data.classes,
        title=replay_title(active, data),
        total_epochs=run.config.max_iter,
        k=run.config.k,
    )
