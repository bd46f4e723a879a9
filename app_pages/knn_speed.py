"""kNN speed and storage: how much faster and smaller search gets after an NCA projection."""

import streamlit as st

from app_pages.ui import compare, page_style, speed
from app_pages.ui import data as app_data
from nca_core.plots import figures

page_style.compact()
st.title("What the projection saves in kNN")
st.caption(
    "Two questions, each space with its best index: how much faster is 5-NN search after NCA, "
    "and how much smaller is the index? Raw inputs and the NCA projection of the training set are "
    "searched exactly (FAISS flat) and through an HNSW graph (approximate); every test point is a "
    "query, timed on this machine."
)
name = app_data.pick_dataset(default=app_data.best_high_dimensional())
data = app_data.load_dataset(name)
if data is None:
    st.stop()
if data.n_features < 20:
    st.info(
        f"{data.n_features} input features leave little to save: the difference shows on images "
        "such as MNIST, USPS or digits.",
        icon=":material/info:",
    )
if len(data.y_test) == 0:
    st.warning("This dataset has no test rows, so there is nothing to search.")
    st.stop()
choices = [d for d in (2, 4, 8, 16, 32, 64) if d <= data.n_features]
d = st.select_slider("NCA dimension d", choices, value=32 if 32 in choices else choices[-1], key="speed-d")
st.caption(
    f"{len(data.y_test):,} queries against {len(data.y_train):,} references, float32. Query times are "
    f"medians of up to {speed.REPEATS} searches of all queries (no more once "
    f"{speed.BUDGET_SECONDS} s have been spent); graphs are built on all cores; ratios are against raw exact search."
)

summary, table = st.container(), st.empty()
spaces, costs = speed.space_names(data, d), []
speed.show_table(table, costs, spaces)
for index in speed.KINDS:
    with st.spinner(f"Searching the raw inputs ({index})…"):
        costs.append(speed.raw_cost(name, data, index))
    speed.show_table(table, costs, spaces)
transform, source = speed.nca_model(name, data, d, compare.recommended_standardize(data))
with st.spinner("Searching the NCA projection…"):
    for cost in speed.nca_costs(name, data, d, transform):
        costs.append(cost)
        speed.show_table(table, costs, spaces)
with summary:
    speed.show_summary(costs)
st.plotly_chart(figures.search_cost_chart(costs), key="speed-chart")
note = compare.train_page_note(name, d, compare.recommended_standardize(data))
st.caption(f"NCA here is {source}." + (f" {note}" if note else ""))
