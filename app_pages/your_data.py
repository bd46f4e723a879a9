"""Your data: upload a CSV and use it on every page for the rest of the session."""

from pathlib import Path

import streamlit as st

from app_pages.ui import data as app_data
from app_pages.ui import navigation
from nca_core.datasets import DatasetError, from_csv, guess_label_column, image_shape_for

SAMPLE = Path(__file__).resolve().parents[1] / "assets" / "sample-iris.csv"
LIMIT_MB = st.get_option("server.maxUploadSize")  # Streamlit's megabytes: 2**20 bytes


def refuse(exc: DatasetError | str):
    st.error(f"This file cannot be used: {exc}.", icon=":material/error:")
    st.stop()


st.title("Use your own data")
st.caption(
    "Upload a CSV file with a header row: one column of class labels (text or numbers) and "
    f"numeric feature columns. Files up to {LIMIT_MB} MB, 200,000 rows, 5,000 columns and 100 classes."
)
st.download_button(
    "Download a sample CSV (Fisher's iris, 150 rows)",
    SAMPLE.read_bytes(),
    file_name="sample-iris.csv",
    mime="text/csv",
    on_click="ignore",
)

# No ``type`` filter: the browser would refuse another kind of file itself, with a red chip
# and no reason, while the page kept judging the previous file. Every file reaches the
# checks below, which say what is wrong with this one (a PNG image, a binary file, ...).
upload = st.file_uploader("CSV file", key="upload")
if upload is None:
    st.stop()
raw = upload.getvalue()
if len(raw) > LIMIT_MB * 2**20:  # the server refuses a larger upload; a session handed one is refused here
    refuse(f"it is larger than {LIMIT_MB} MB, the limit for a file here")
try:
    columns, guess = guess_label_column(raw)
except DatasetError as exc:
    refuse(exc)  # before the selectbox: built with no options, it would keep None as the label
label = st.selectbox("Label column", columns, index=guess, key="upload-label")
is_image = st.toggle("The features are the pixels of an image", key="upload-image")
shape = None
if is_image:  # starts from the most nearly square shape of the feature columns; keyed by their count
    pixels = max(1, len(columns) - 1)
    guessed_height, guessed_width = image_shape_for(pixels)
    c1, c2 = st.columns(2)
    width = c1.number_input("Image width", 1, 4096, guessed_width, key=f"upload-width-{pixels}")
    height = c2.number_input("Image height", 1, 4096, guessed_height, key=f"upload-height-{pixels}")
    shape = (int(height), int(width))

try:
    dataset = from_csv(raw, label, image_shape=shape, name=app_data.UPLOAD_NAME)
except DatasetError as exc:
    refuse(exc)

st.success(
    f"**{upload.name}**: {len(dataset.y_train):,} training and {len(dataset.y_test):,} test rows, "
    f"{dataset.n_features} features, {dataset.n_classes} classes ({', '.join(dataset.classes[:10])}"
    f"{', …' if dataset.n_classes > 10 else ''}).",
    icon=":material/check_circle:",
)
for note in dataset.notes:
    st.info(note, icon=":material/info:")
if st.button("Use this dataset on every page", type="primary"):
    st.session_state[app_data.UPLOAD_KEY] = dataset
    st.session_state["dataset_choice"] = app_data.UPLOAD_NAME
    st.switch_page(navigation.TRAIN)
