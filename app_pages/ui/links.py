"""Settings in the URL query string, so a link opens the same configuration.

Only the keys declared in ``nca_core.config.settings.SETTINGS`` are read, each checked against its
declared type, choices and range; anything else is ignored and the page says so. Values are
written back as plain strings (JSON-safe scalars).

A session reads its address on its first run (``read_once``), and a page that writes its
settings into its address (``write_address``) reads it again whenever the browser brings
back another one of its addresses (``follow_address``): Back and Forward step through the
pages and settings the address bar has shown, each page drawn with its settings.
"""

from __future__ import annotations

import streamlit as st

from app_pages.ui.train import presentation
from nca_core.config.settings import SETTINGS, RunConfig, parse_boolean

APPLIED = "_query_applied"
RUN_PARAM = "run"  # the address's name for the run the page shows (``state.find_again``)
RUN_TOKEN = "_query_run"  # session key: the run named in the address the session opened with
NOTICES = "_query_notices"
VALUES = "_query_values"
PAGE = "_query_page"  # session key: the page the last run of the app drew
ENTERED = "_query_entered"  # session key: {page: True} from its arrival until it writes its address
HELD = "_query_held"  # session key: {page: the address it would have written on arrival}
WRITTEN = "_query_written"  # session key: {page: the address it last wrote or took}
DEFAULTS = "_query_defaults"  # session key: {control's key: the default it was first drawn with}
DATASET_CONTROL = "dataset"  # the key of every page's dataset selector (``data.pick_dataset``)
UPLOAD_NAME = "uploaded"  # an uploaded set's name, in the selector and in links (``data``)
UPLOAD_LINK = "_query_upload_link"  # session key: an upload's link's settings, for this session's upload
UPLOAD_LINK_SAID = "_query_upload_link_said"  # session key: whether a page has said why they wait

# query key -> the setting it carries (type, choices, range: see nca_core.config.settings)
FIELDS = {s.url_key: s for s in SETTINGS if s.url_key}
RUN_FIELDS = tuple(s.name for s in FIELDS.values())


def _toy_scale(text: str) -> float:
    """How NCA works' scale of A: a number from 0.1 to 5 in steps of 0.1, as its slider."""
    try:
        value = round(float(text), 1)
    except ValueError:
        value = float("nan")
    if not 0.1 <= value <= 5.0:  # NaN and infinities fail too
        raise ValueError("must be a number from 0.1 to 5")
    return value


def _point(text: str) -> int:
    """A point's number: a whole number from 0 (the page checks it against its data)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise ValueError("must be a whole number from 0")
    return int(text)


# query key -> (the name a page takes it under, its parser): a page's view settings, not a
# run's, but what a link of the page shows (Compare's one scale and hidden scores, How NCA
# works' toy)
VIEW_FIELDS = {
    "scale": ("same_scale", parse_boolean),
    "hide": ("hide_scores", parse_boolean),
    "a_scale": ("toy_scale", _toy_scale),
    "point": ("toy_point", _point),
}
# A link's notices listed at most: an address of thousands of unknown keys gets a line that
# counts the rest, not one notice each.
NOTICES_LISTED = 10


def parse(params: dict[str, str], dataset_names: list[str]) -> tuple[str | None, dict, list[str]]:
    """(dataset, {RunConfig field: value}, notices) from raw query parameters."""
    notices, values, dataset = [], {}, None
    for key, text in params.items():
        if key == "dataset":
            if text in dataset_names:
                dataset = text
            else:
                notices.append(f"unknown dataset {text[:40]!r} ignored")
        elif key in FIELDS:
            try:
                values[FIELDS[key].name] = FIELDS[key].parse(text)
            except ValueError as exc:
                notices.append(f"{key}={text[:40]!r} ignored: {exc}")
        elif key in VIEW_FIELDS:
            name, parser = VIEW_FIELDS[key]
            try:
                values[name] = parser(text)
            except ValueError as exc:
                notices.append(f"{key}={text[:40]!r} ignored: {exc}")
        else:
            notices.append(f"unknown setting {key[:40]!r} ignored")
    if len(notices) > NOTICES_LISTED:
        notices[NOTICES_LISTED:] = [f"{len(notices) - NOTICES_LISTED:,} more ignored"]
    return dataset, values, notices


def to_params(dataset: str, config: RunConfig, present: bool = False) -> dict[str, str]:
    """The query string that opens ``config`` on ``dataset`` (in presentation mode if
    ``present``)."""
    out = {"dataset": dataset, **({presentation.KEY: "1"} if present else {})}
    values = config.as_dict()
    for key, setting in FIELDS.items():
        value = values[setting.name]
        out[key] = str(value).lower() if isinstance(value, bool) else setting.text_of(value)
    return out


def read_once(dataset_names: list[str]) -> None:
    """On a session's first run, take the settings in the URL (whichever page it opens)."""
    if st.session_state.get(APPLIED):
        return
    st.session_state[APPLIED] = True
    params = st.query_params.to_dict()
    st.session_state[RUN_TOKEN] = params.pop(RUN_PARAM, None)
    _take_link(params, dataset_names)


def _take_link(params: dict[str, str], dataset_names: list[str]) -> None:
    """Keep a link's settings for the page's controls (``take``), its dataset as the
    session's choice, and what it asked that cannot be used (``show_notices``).

    A link made on an upload names a file that stays in its uploader's session: its
    settings wait for this session's own upload (``upload_link``) rather than fall on
    another dataset."""
    params = dict(params)
    present = params.pop(presentation.KEY, None)
    for_an_upload = params.get("dataset") == UPLOAD_NAME and UPLOAD_NAME not in dataset_names
    if for_an_upload:
        del params["dataset"]
    dataset, values, notices = parse(params, dataset_names)
    _read_present(present, notices)
    if for_an_upload:
        st.session_state[UPLOAD_LINK] = values
        st.session_state[UPLOAD_LINK_SAID] = False
        values = {}
    if dataset is not None:
        st.session_state["dataset_choice"] = dataset
    st.session_state[VALUES] = values
    st.session_state[NOTICES] = notices


def upload_link() -> None:
    """Once this session's own upload is in use, the settings of an upload's link it was
    opened with apply to it."""
    values = st.session_state.pop(UPLOAD_LINK, None)
    if values:
        st.session_state[VALUES] = {**st.session_state.get(VALUES, {}), **values}


def _read_present(text: str | None, notices: list[str]) -> None:
    """``present=1`` (or 0) in a link opens the Train page in presentation mode (or not)."""
    if text is None:
        return
    try:
        st.session_state[presentation.KEY] = parse_boolean(text)
    except ValueError:
        notices.append(f"{presentation.KEY}={text[:40]!r} ignored: must be 1 or 0")


def run_token() -> str | None:
    """The run named in the address this session opened with, once (None: none)."""
    return st.session_state.pop(RUN_TOKEN, None)


def take(*fields: str) -> dict:
    """Settings from the link not used yet, for the named fields. They stay until ``used``
    says the page has drawn its controls with them: a page run cut short by a click (a
    rerun stops it at its next element) would otherwise drop them, and the page would open
    with its own defaults instead of the link's (300 epochs read as 60)."""
    pending = st.session_state.get(VALUES, {})
    return {name: pending[name] for name in fields if name in pending}


def used(*fields: str) -> None:
    """The named link settings have been drawn: later runs take the controls' own values."""
    pending = st.session_state.get(VALUES, {})
    for name in fields:
        pending.pop(name, None)


def first_default(key: str, value):
    """The default the control keyed ``key`` was first drawn with on this page (``value``,
    the first time), to draw it with again.

    A control's default must not change while the page shows it. The browser shows a
    control it meets for the first time at the default the page sends with it. A click
    sent before the link's first drawing of the page had reached the browser carries no
    value for the control, the server keeps the link's value, and the next drawing would
    send the page's own default: the browser would show that, and send it back with the
    next click (a link's 300 epochs trained as 60)."""
    return st.session_state.setdefault(DEFAULTS, {}).setdefault(key, value)


def _forget_defaults(prefixes: tuple[str, ...]) -> None:
    defaults = st.session_state.get(DEFAULTS, {})
    for key in [key for key in defaults if key.startswith(prefixes)]:
        del defaults[key]


def notice(text: str) -> None:
    """Say, with the link's other notices, that a setting of the link was not used."""
    st.session_state.setdefault(NOTICES, []).append(text)


def show_notices() -> None:
    """What the link asked that this page cannot show, once."""
    notices = st.session_state.pop(NOTICES, [])
    if notices:
        st.info(
            "Some settings in the link were not used: " + "; ".join(notices) + ".", icon=":material/link_off:"
        )
    if UPLOAD_LINK in st.session_state and not st.session_state.get(UPLOAD_LINK_SAID):
        st.session_state[UPLOAD_LINK_SAID] = True
        st.warning(
            "This link was made with a CSV file uploaded in another session. An upload stays with "
            "whoever uploaded it, so the data is not here, and nothing of the link was applied to "
            "another dataset. Upload the same file and the link's settings apply to it.",
            icon=":material/upload_file:",
        )
        from app_pages.ui import (
            navigation,  # its pages are made in the app's run: not when a test imports this
        )

        st.page_link(navigation.YOUR_DATA, label="Upload the file on Your data", icon=":material/upload_file:")


# --- the address while a session moves between pages and back --------------------------------
def arrive(page: str) -> None:
    """Each run of the app, before its page: note when it draws ``page`` after another page
    (the session's first run reads its address in ``read_once`` instead)."""
    previous = st.session_state.get(PAGE)
    st.session_state[PAGE] = page
    if previous is not None and previous != page:
        st.session_state.pop(DEFAULTS, None)  # the last page's controls are gone
        st.session_state.setdefault(ENTERED, {})[page] = True
        st.session_state.setdefault(WRITTEN, {}).pop(page, None)
        st.session_state.setdefault(HELD, {}).pop(page, None)


def _address() -> dict[str, str]:
    """The address's settings; the run it names is no setting (``state.find_again``)."""
    return {key: value for key, value in st.query_params.to_dict().items() if key != RUN_PARAM}


def follow_address(page: str, dataset_names: list[str], controls: tuple[str, ...]) -> None:
    """At the top of a page that writes its address: when the browser has brought back one
    of the page's addresses (Back or Forward from another page or from other settings of
    this one), take its settings as a link's (``read_once``) and drop the page's controls
    (session keys starting with one of ``controls``, and the dataset's), so that they are
    drawn anew with them; the widgets would otherwise keep their own values, or the
    defaults of controls dropped while another page was shown."""
    address = _address()
    if not st.session_state.get(APPLIED) or not address:
        return
    written = st.session_state.setdefault(WRITTEN, {})
    if address == written.get(page) and not st.session_state.get(ENTERED, {}).get(page):
        return
    if any(address == other for key, other in written.items() if key != page):
        return  # the page before's address, carried over to this one: none of this page's
    written[page] = address
    st.session_state.get(ENTERED, {}).pop(page, None)
    drawn = [key for key in st.session_state if isinstance(key, str) and key.startswith(controls)]
    for key in [DATASET_CONTROL, *drawn]:
        st.session_state.pop(key, None)
    _forget_defaults((DATASET_CONTROL, *controls))
    _take_link(address, dataset_names)


def write_address(page: str, params: dict[str, str]) -> None:
    """Put ``params`` (the page's settings, and the run it shows) in the address.

    Not yet on a page just arrived at with a bare address (a click in the sidebar): the
    browser has made a history entry for it, and a new address now would make a second,
    which Back would step onto before it left the page. Its settings go into the address
    once they differ from those it arrived with, or once the address names a run."""
    settings = {key: value for key, value in params.items() if key != RUN_PARAM}
    entered = st.session_state.setdefault(ENTERED, {})
    held = st.session_state.setdefault(HELD, {})
    if entered.get(page) and not st.query_params:
        if held.setdefault(page, settings) == settings:
            return
    entered.pop(page, None)
    held.pop(page, None)
    st.query_params.from_dict(params)
    st.session_state.setdefault(WRITTEN, {})[page] = settings
