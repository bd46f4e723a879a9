"""Your data: upload a CSV and use it on every page for the rest of the session."""

import streamlit as st

from app_pages import ASSETS
from app_pages.ui import app_data, links, navigation
from nca_core.datasets import (
    MISSING_IN_WORDS,
    DatasetError,
    columns_to_leave_out,
    from_csv,
    guess_label_column,
    image_shape_for,
    read_csv_table,
)

SAMPLE = ASSETS / "sample-iris.csv"
LIMIT_MB = st.get_option("server.maxUploadSize")  # Streamlit's megabytes: 2**20 bytes
PREVIEW_ROWS = 5


def refuse(exc: DatasetError | str):
    st.error(f"This file cannot be used: {exc}.", icon=":material/error:")
    st.stop()


def forget_choices(made_for: str, now: str, *keys: str) -> None:
    """Let go of the widget values under ``keys`` when what they were chosen for (kept under
    ``made_for``) is no longer ``now``: a new file starts from its own guesses, and a new
    label column from the columns to leave out that go with it."""
    if st.session_state.get(made_for) != now:
        st.session_state[made_for] = now
        for key in keys:
            st.session_state.pop(key, None)


st.title("Use your own data")
st.caption(
    "Upload a CSV file with a header row: one column of class labels (text or numbers) and "
    "columns of numbers, the features. Columns you leave out may hold anything. A row with a "
    f"missing cell ({MISSING_IN_WORDS}) is left out and counted. Files up to {LIMIT_MB} MB, "
    "200,000 rows, 5,000 columns and 100 classes."
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
    table = read_csv_table(raw)
except DatasetError as exc:
    refuse(exc)  # before the selectbox: built with no options, it would keep None as the label
forget_choices("upload-for-file", upload.file_id, "upload-label", "upload-leave-out")

st.markdown(
    f"**{upload.name}**: {len(table):,} rows, {table.shape[1]:,} columns. Its first {PREVIEW_ROWS} rows:"
)
preview = st.empty()  # drawn once the label and the columns left out are chosen, marking them
columns = list(table.columns)
guess = guess_label_column(table)
label = st.selectbox("Label column", columns, index=columns.index(guess.column), key="upload-label")
st.caption(f"Guessed **{guess.column}**: {guess.reason}.")
forget_choices("upload-for-label", label, "upload-leave-out")
suggested = columns_to_leave_out(table, label)
left_out = st.multiselect(
    "Columns to leave out",
    [c for c in columns if c != label],
    default=list(suggested),
    key="upload-leave-out",
    placeholder="None: every column but the label is a feature",
    help="These columns are no features: NCA never sees them.",
)
if suggested:
    reasons = "; ".join(f"**{name}**: {why}" for name, why in suggested.items())
    st.info(
        f"Left out by default ({reasons}). Identifiers and text are no measurements: in a file sorted "
        "by class, a row number follows the classes, and NCA would separate them by the number alone. "
        "Remove a column from the list above to keep it as a feature.",
        icon=":material/visibility_off:",
    )
marks = {c: st.column_config.Column(f"{c} (left out)") for c in left_out}
marks[label] = st.column_config.Column(f"{label} (label)", pinned=True)
preview.dataframe(table.head(PREVIEW_ROWS), hide_index=True, column_config=marks)
is_image = st.toggle("The features are the pixels of an image", key="upload-image")
shape = None
if is_image:  # starts from the most nearly square shape of the feature columns; keyed by their count
    pixels = max(1, len(columns) - 1 - len(left_out))
    guessed_height, guessed_width = image_shape_for(pixels)
    c1, c2 = st.columns(2)
    width = c1.number_input("Image width", 1, 4096, guessed_width, key=f"upload-width-{pixels}")
    height = c2.number_input("Image height", 1, 4096, guessed_height, key=f"upload-height-{pixels}")
    shape = (int(height), int(width))

try:
    dataset = from_csv(table, label, drop_columns=left_out, image_shape=shape, name=app_data.UPLOAD_NAME)
except DatasetError as exc:
    refuse(exc)

st.success(
    f"**{upload.name}**: {len(dataset.y_train):,} training and {len(dataset.y_test):,} test rows, "
    f"{dataset.n_features} features, {dataset.n_classes} classes ({', '.join(dataset.classes[:10])}"
    f"{', …' if dataset.n_classes > 10 else ''}).",
    icon=":material/check_circle:",
)
for note in dataset.notes:
    st.info(note[:1].upper() + note[1:], icon=":material/info:")
if st.button("Use this dataset on every page", type="primary"):
    st.session_state[app_data.UPLOAD_KEY] = dataset
    st.session_state["dataset_choice"] = app_data.UPLOAD_NAME
    links.upload_link()  # an upload's link this session opened with: its settings, for this file
    st.switch_page(navigation.TRAIN)
