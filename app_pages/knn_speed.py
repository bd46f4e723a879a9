"""kNN speed and storage: how much faster and smaller search gets after an NCA projection."""

import streamlit as st

from app_pages.ui import app_data, lesson, links, navigation, page_style
from app_pages.ui.speed import results_table
from nca_core.config.settings import BY_NAME
from nca_core.search.costs import INDEX_LABELS

CONTROLS = ("speed-d-",)  # the page's settings' widgets, one per dataset

page_style.compact()
st.title("What the projection saves in kNN")
st.caption(
    "Two questions: how much faster is exact 5-NN search after NCA, and how much smaller is the "
    "index? Raw inputs and the NCA projection of the training set are searched exactly (FAISS "
    "flat), and through an HNSW graph (approximate) in the table; test points are the queries, "
    "timed on this machine."
)
# Back to an address of this page draws it with that address's settings
links.follow_address(navigation.KNN_SPEED.url_path, app_data.dataset_names(), CONTROLS)
name = app_data.pick_dataset(default=app_data.best_high_dimensional())
data = app_data.load_dataset(name)
if data is None:
    st.stop()
few_features = st.empty()  # a slot either way: what follows keeps its place when the dataset changes
if data.n_features < 20:
    few_features.info(
        f"{data.n_features} input features leave little to save: the difference shows on images "
        "such as MNIST, USPS or digits.",
        icon=":material/info:",
    )
if len(data.y_test) == 0:
    st.warning("This dataset has no test rows, so there is nothing to search.")
    st.stop()
# the run's d, as the Train page offers it and every page's address writes it, below the
# inputs' own dimension, as mapping to all of it saves nothing (rings' 3 features: 2 alone)
choices = [d for d in BY_NAME["n_components"].choices if d < data.n_features] or [2]
linked = links.take("n_components").get("n_components")
if linked is not None and linked not in choices:
    links.notice(f"d={linked} ignored: this dataset allows {', '.join(map(str, choices))}")
    linked = None
links.used("n_components")
if len(choices) == 1:  # a slider of one stop is a lone dot
    d = choices[0]
    st.caption(f"NCA dimension d = {d}: the one choice for {data.n_features} input features.")
else:
    d = st.select_slider(  # one per dataset: rings' only choice, 2, must not carry over to MNIST
        "NCA dimension d", choices, key=f"speed-d-{name}",
        value=links.first_default(f"speed-d-{name}", linked or (32 if 32 in choices else choices[-1])),
    )  # fmt: skip
links.show_notices()
links.write_address(navigation.KNN_SPEED.url_path, {"dataset": name, "d": str(d)})
st.caption(
    f"{results_table.queries_in_words(data)} against {len(data.y_train):,} references, float32; graphs are built "
    "on all cores; ratios are against raw exact search."
)

# Slots (st.empty) rather than containers: a container drawn again keeps another dataset's
# figures, greyed, until this run replaces them, while a slot clears them at once. Those
# drawn last (the chart, the note) are placed now for the same reason.
summary, table = st.empty(), st.empty()
when = st.container(horizontal=True, vertical_alignment="center")
chart, source_note = st.empty(), st.empty()
again = when.button(
    "Measure again",
    icon=":material/timer:",
    key="speed-again",
    help="Figures are measured once on this machine and kept with their date; this times every search anew.",
)
measured = when.empty()  # the note on when the figures were measured, right of the button
# The table shows sizes before any search; raw and NCA exact search come first, as the
# headline compares them, then the graphs, whose build takes longest.
sizes, kept = results_table.flat_sizes(data, d), []
results_table.show_pending_summary(summary)
results_table.show_table(table, [], sizes)

# The search engine and the NCA model load only now, imported here rather than at the top:
# the table above needs neither, and torch takes seconds to load on a fresh server.
with when, st.spinner("Loading the search engine and the NCA model…"):
    from app_pages.ui.compare import fits
    from app_pages.ui.speed import measurements
    from nca_core.plots import search_costs

    transform, source = measurements.nca_model(name, data, d, fits.recommended_standardize(data))
for kind in results_table.KINDS:
    with when, st.spinner(f"Searching the raw inputs ({INDEX_LABELS[kind]})…"):  # beside the table
        kept.append(measurements.raw_cost(name, data, kind, again=again))
    results_table.show_table(table, [k.cost for k in kept], sizes)
    with when, st.spinner(f"Searching the NCA projection ({INDEX_LABELS[kind]})…"):
        kept.append(measurements.nca_cost(name, data, d, transform, kind, again=again))
    results_table.show_table(table, [k.cost for k in kept], sizes)
    if kind == "exact":
        with summary.container():
            measurements.show_summary([k.cost for k in kept])
costs = [k.cost for k in kept]
measured.caption(measurements.measured_note(kept))
chart.plotly_chart(search_costs.search_cost_chart(costs, noise_seconds=results_table.TOO_QUICK_SECONDS), key="speed-chart")
note = fits.train_page_note(name, d, fits.recommended_standardize(data))
source_note.caption(f"NCA here is {source}." + (f" {note}" if note else ""))
lesson.show_next_step("knn_speed", name)
