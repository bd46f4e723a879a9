"""Compare: the same data projected by PCA, LDA and NCA, with what kNN makes of each."""

import pandas as pd
import streamlit as st

from app_pages.ui import compare, share
from app_pages.ui import data as app_data
from nca_core import figures, stratified_subsample
from nca_core.runs import recommended_config

st.title("NCA against PCA and LDA")
st.caption(
    "PCA keeps the directions of largest variance, LDA the ones that separate class means, "
    "NCA the ones under which nearest neighbours share a class. Same data, same points, same colours."
)

name = app_data.pick_dataset()
data = app_data.load_dataset(name)
if data is None:
    st.stop()
from_link = share.take("n_components", "k", "standardize")
cols = st.columns(4)
d = cols[0].radio(
    "Dimensions", [2, 3], index=int(from_link.get("n_components") == 3), horizontal=True, key="compare-d",
    help="2-D or 3-D pictures.",
)  # fmt: skip
k = cols[1].select_slider("k for kNN", [1, 3, 5, 7, 9], value=from_link.get("k", 5), key="compare-k")
standardize = cols[2].toggle(
    "Standardise inputs", value=from_link.get("standardize", recommended_config(data).standardize),
    key=f"compare-std-{name}",
    help="Zero mean, unit variance per feature before every method.",
)  # fmt: skip
deep = cols[3].toggle(
    "Add deep NCA", value=False, key="compare-deep",
    help="Also train nonlinear NCA: a neural network with the Student-t kernel (Min et al., 2010).",
)  # fmt: skip
share.show_notices()
st.query_params.from_dict({"dataset": name, "d": str(d), "k": str(k), "std": str(standardize).lower()})
d = min(d, data.n_features)
display_index = stratified_subsample(data.y_train, min(2000, len(data.y_train)), seed=0)

results = [
    compare.baseline("pca", name, data, d, k, standardize, display_index),
    compare.baseline("lda", name, data, d, k, standardize, display_index),
]
nca_result, source = compare.nca(name, data, d, k, standardize, display_index)
results.append(nca_result)
sources = [f"NCA here is {source}."]
if deep:
    deep_result, deep_source = compare.nca(name, data, d, k, standardize, display_index, deep=True)
    results.append(deep_result)
    sources.append(f"Deep NCA is {deep_source}.")
raw = compare.raw_inputs(name, data, k)

labels = data.y_train[display_index]
panels = st.columns(len(results))
for panel, result in zip(panels, results):
    with panel:
        st.subheader(result.name)
        dims = min(result.embedding.shape[1], 3)
        fig = figures.embedding_scatter(
            result.embedding[:, :dims], labels, data.classes, height=420, uirevision=f"compare-{result.name}"
        )
        if dims == 1:
            st.info("LDA found a single direction (two classes): nothing to draw in 2-D.")
        else:
            st.plotly_chart(fig, key=f"compare-{result.name}")
        line = f"{k}-NN leave-one-out: **{result.train_accuracy:.1%}**"
        if result.test_accuracy is not None:
            line += f" · test: **{result.test_accuracy:.1%}**"
        st.markdown(line + f" · fit {result.fit_seconds:.2f} s")
        if result.note:
            st.warning(result.note, icon=":material/info:")
st.caption(" ".join(sources))

table = pd.DataFrame(
    [
        {
            "method": r.name,
            "dimensions": r.dimensions,
            f"{k}-NN train (leave-one-out)": r.train_accuracy,
            f"{k}-NN test": r.test_accuracy,
            "fit time (s)": r.fit_seconds,
        }
        for r in [*results, raw]
    ]
)
st.dataframe(
    table,
    hide_index=True,
    column_config={
        f"{k}-NN train (leave-one-out)": st.column_config.NumberColumn(format="percent"),
        f"{k}-NN test": st.column_config.NumberColumn(format="percent"),
        "fit time (s)": st.column_config.NumberColumn(format="%.2f"),
    },
)
st.caption("The last row is kNN on the raw inputs: the reference every projection tries to keep up with.")
