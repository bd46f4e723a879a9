"""kNN speed and storage: what an NCA projection saves against searching raw inputs."""

import pandas as pd
import streamlit as st

from app_pages.ui import compare
from app_pages.ui import data as app_data
from nca_core import figures
from nca_core.comparison import knn_search_cost

st.title("What the projection saves in kNN")
st.caption(
    "5-NN on the test set, searching the raw inputs or the NCA projection of the training set: "
    "test error, query time for all test points on this machine, and the size of the index."
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
standardize = compare.recommended_standardize(data)

run, source = compare.nca_run(name, data, d, standardize)
with st.spinner("Timing the searches…"):
    raw = knn_search_cost(f"raw {data.n_features}-D", data.X_train, data.y_train, data.X_test, data.y_test)
    projected = knn_search_cost(
        f"NCA {d}-D", run.transform(data.X_train), data.y_train, run.transform(data.X_test), data.y_test
    )
st.caption(f"NCA here is {source}.")

faster, smaller = raw.query_seconds / projected.query_seconds, raw.stored_bytes / projected.stored_bytes
cols = st.columns(3)
cols[0].metric("Query speed-up", f"{faster:.1f}x")
cols[1].metric("Index size reduction", f"{smaller:.1f}x")
cols[2].metric(
    "Test error (raw → NCA)",
    f"{projected.error:.2%}",
    f"{(projected.error - raw.error) * 100:+.2f} points",
    delta_color="inverse",
)
table = pd.DataFrame(
    [
        {
            "index": c.name,
            "test error": c.error,
            "query time (s)": c.query_seconds,
            "stored (MB)": c.stored_bytes / 1e6,
        }
        for c in (raw, projected)
    ]
)
st.dataframe(
    table,
    hide_index=True,
    column_config={
        "test error": st.column_config.NumberColumn(format="percent"),
        "query time (s)": st.column_config.NumberColumn(format="%.3f"),
        "stored (MB)": st.column_config.NumberColumn(format="%.2f"),
    },
)
st.plotly_chart(figures.search_cost_bars([raw, projected]), key="speed-bars")
st.caption(
    f"Times are medians of 3 searches of all {len(data.y_test):,} test points against "
    f"{len(data.y_train):,} training points, float32, on this machine's CPU."
)
