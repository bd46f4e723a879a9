"""Compare: the same data projected by PCA, LDA and NCA, with what kNN makes of each."""

from functools import partial

import streamlit as st

from app_pages.ui import app_data, lesson, links, navigation, page_style
from nca_core import stratified_subsample

CONTROLS = ("compare-d", "compare-k", "compare-std-", "compare-same-scale", "compare-hide")  # the settings' widgets

page_style.compact()
st.title("NCA against PCA and LDA")
st.caption(
    "PCA keeps the directions of largest variance, LDA the ones that separate class means, "
    "NCA the ones under which nearest neighbours share a class. Same data, same points, each class the same colour and shape in every panel."
    # Screen readers move by headings: the panels' titles (h3) sit under this h2, out of sight.
    f'<h2 style="{page_style.VISUALLY_HIDDEN}">The maps side by side</h2>',
    unsafe_allow_html=True,
)

# The dataset and the two settings share a row, so the first panel starts on the first screen.
controls = st.container(horizontal=True, vertical_alignment="bottom")
# Back to an address of this page draws it with that address's settings
links.follow_address(navigation.COMPARE.url_path, app_data.dataset_names(), CONTROLS)
with controls, st.container(width=280):
    name = app_data.pick_dataset()
data = app_data.load_dataset(name)
if data is None:
    st.stop()
from app_pages.ui.compare import fits, notice, panels, reveal  # noqa: E402  (loads torch and scikit-learn: after the page's top)

from_link = links.take("n_components", "k", "standardize", "same_scale", "hide_scores")
# each drawn with the default it was first drawn with (links.first_default says why)
d = controls.radio(
    "Dimensions", [2, 3], index=links.first_default("compare-d", int(from_link.get("n_components") == 3)),
    horizontal=True, key="compare-d", help="2-D or 3-D pictures.", width="content",
)  # fmt: skip
k = controls.select_slider(
    "k for kNN", [1, 3, 5, 7, 9], value=links.first_default("compare-k", from_link.get("k", 5)), key="compare-k"
)
toggles = st.container(horizontal=True)
standardize = toggles.toggle(
    "Standardise inputs", key=f"compare-std-{name}",
    value=links.first_default(f"compare-std-{name}", from_link.get("standardize", fits.recommended_standardize(data))),
    help="Zero mean, unit variance per feature before every method.",
)  # fmt: skip
deep = toggles.toggle(
    "Add deep NCA", value=False, key="compare-deep",
    help="Also train nonlinear NCA: a neural network with the Student-t kernel (Min et al., 2010).",
)  # fmt: skip
links.show_notices()
d = min(d, data.n_features)
scored = fits.scored_data(data)  # a stratified subset of a large set, said below
display_index = stratified_subsample(scored.y_train, min(2000, len(scored.y_train)), seed=0)
labels = scored.y_train[display_index]
pictures = panels.display_pictures(name, data, display_index)  # hover pictures of image data
same_scale = toggles.toggle(
    "One scale for every panel", value=links.first_default("compare-same-scale", from_link.get("same_scale", False)),
    key="compare-same-scale",
    help="Each panel always draws a unit across as long as a unit up. The methods' scales differ "
    "(PCA keeps the inputs' units, LDA whitens the spread within classes, NCA learns its scale, "
    "which sets how many neighbours count): on one scale, compare sizes too.",
)  # fmt: skip
hide = reveal.hide_toggle(toggles, from_link)
links.used("n_components", "k", "standardize", "same_scale", "hide_scores")  # drawn with the link's values
# the link opens this page as it is now
view = {"dataset": name, "d": d, "k": k, "std": str(standardize).lower(), "scale": str(same_scale).lower()}
if hide:
    view["hide"] = "1"
# a reveal holds for these settings; one scale or not changes no score
hidden = reveal.hidden(hide, {"dataset": name, "d": d, "k": k, "std": standardize, "deep": deep})
if hidden:
    reveal.reveal_button(toggles, {"dataset": name, "d": d, "k": k, "std": standardize, "deep": deep})
links.write_address(navigation.COMPARE.url_path, {key: str(value) for key, value in view.items()})
panels.brush_summary(name, labels, data.classes, three_d=d == 3)


def show(cell, label: str, fitted: fits.Fitted, score) -> fits.MethodResult:
    """A panel's picture now and its k-NN scores once ``score()`` has them; on one shared
    scale, nothing until every method is scored (drawn below)."""
    if same_scale:
        return score()
    points = fits.display_points(fitted, scored, display_index)
    return panels.panel(
        cell, label, points, labels, data.classes, k, score, dataset=name, pictures=pictures, hidden=hidden
    )


# NCA's panel comes first (on a 1024-pixel screen the second row is below the fold), then
# PCA and LDA; each is drawn as soon as its projection is fitted (PCA takes moments), so
# the page has pictures while NCA is fitted, trained or loaded.
grid = panels.panel_grid(3 + deep)
nca_cells, baseline_cells = grid[: 1 + deep], grid[1 + deep :]
# Slots for what is written once every method is scored: drawn now, they clear another
# dataset's notes and table, which stayed (greyed) below the new panels while NCA trained.
notes_slot, table_slot = st.empty(), st.empty()
baselines = []
for cell, method in zip(baseline_cells, ("pca", "lda")):
    fitted = fits.baseline_fit(method, name, scored, d, standardize)
    score = partial(fits.baseline, method, name, scored, d, k, standardize, display_index)
    baselines.append(show(cell, method.upper(), fitted, score))
ncas, sources = [], []
for cell, deep_one in zip(nca_cells, (False, True)):
    label = "deep NCA" if deep_one else "NCA"
    with cell.container():  # the progress bar of a fresh fit shows in the panel's place
        fitted, source = fits.nca_run(name, data, d, standardize, deep=deep_one)
    ncas.append(show(cell, label, fitted, partial(fits.score, label, fitted, scored, k, display_index)))
    sources.append(f"{'Deep NCA' if deep_one else 'NCA here'} is {source}.")
    if (note := fits.train_page_note(name, d, standardize, deep=deep_one)) is not None:
        sources.append(note)
results = ncas + baselines  # in the panels' order
if same_scale:
    ranges = panels.shared_ranges(results)
    for cell, result in zip(grid, results):
        panels.panel(
            cell, result.name, result.embedding, labels, data.classes, k, result, ranges, dataset=name,
            pictures=pictures, hidden=hidden,
        )
raw = fits.raw_inputs(name, scored, k, standardize)
# What was fitted on what, below the panels: above them it kept NCA's picture off a
# 1024 x 768 screen.
if (note := panels.subset_note(data, scored)) is not None:
    sources.insert(0, note)
notes_slot.caption(" ".join(sources))

with table_slot.container():
    if hidden:  # the table and what to notice would give the ranking away
        st.markdown(notice.guess_first([result.name for result in results], k))
    else:
        panels.results_table([*results, raw], k)
        st.caption(
            "The last row is kNN on the inputs themselves"
            + (", standardised" if standardize else "")
            + ": the reference every projection tries to keep up with."
        )
        st.markdown(notice.what_to_notice(results, raw, k))
lesson.show_next_step("compare", name)
