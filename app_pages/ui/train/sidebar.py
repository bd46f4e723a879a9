"""The sidebar's run settings, generated from ``nca_core.config.settings.SETTINGS``.

Each declared setting becomes one control; this module only chooses the Streamlit widget
for it, its options for the dataset at hand and its default (the value recommended for the
dataset, or one from a shared link). Which settings apply, and which another one locks,
come from the library (``Setting.applies``, ``rules.locked_values``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

from app_pages.ui import links
from nca_core import available_devices
from nca_core.config.rules import locked_values
from nca_core.config.settings import APP_REQUEST, BY_NAME, SETTINGS, Setting
from nca_core.datasets import REGISTRY, Dataset
from nca_core.runs.demo import DemoStart, demo_start
from nca_core.runs.run import RunConfig, recommended_config


@st.cache_resource(show_spinner="Choosing a start that shows the learning…", max_entries=8)
def _demo_start(name: str, _data: Dataset) -> DemoStart | None:
    return demo_start(_data)


def demo_for(name: str, data: Dataset) -> DemoStart | None:
    """The Train page's demonstration start for a registered set (``nca_core.runs.demo``),
    measured once per process: it depends on the data alone, the same for every session.
    An uploaded set keeps the library's start."""
    return _demo_start(name, data) if name in REGISTRY else None


def run_settings(
    data: Dataset, key: str, overrides: dict | None = None, start: str | None = None
) -> RunConfig:
    """Sidebar controls, defaulting to what converges on ``data`` (changed by ``overrides``,
    e.g. from a shared link); ``key`` scopes widgets to the dataset so that switching
    datasets restores that dataset's defaults. ``start``, if given, is a linear map's
    default start (the demonstration start) in place of the recommended one."""
    overrides = _usable(dict(overrides or {}), data)
    if start is not None:
        overrides = {"init": start, **overrides}
    recommended = recommended_config(data, **_request(key, overrides))  # the one plan of this render
    values: dict[str, Any] = {}
    section = None
    with st.sidebar:
        for setting in SETTINGS:
            if setting.section != section:
                section = setting.section
                st.subheader(section)
            default = overrides[setting.name] if setting.name in overrides else getattr(recommended, setting.name)
            value = _control(setting, data, key, values, default)
            values[setting.name] = value if setting.parser is not None else setting.kind(value)
    return RunConfig(**values)


def _request(key: str, overrides: Mapping) -> dict:
    """The app's request (``settings.APP_REQUEST``) as this render's controls will hold it:
    each of d, the map and the optimiser as its control was left, else from the link, else
    the app's. Each is drawn before the settings it resets (``Control.reset_on``), whose
    recommended values the plan for this request gives."""
    request = {}
    for name, value in APP_REQUEST.items():
        setting = BY_NAME[name]
        request[name] = st.session_state.get(_widget_key(setting, key, request), overrides.get(name, value))
    return request


def _widget_key(setting: Setting, key: str, values: Mapping) -> str:
    """A control's key: the dataset's, the setting's and those of the settings it follows,
    so that a change of those draws it anew at its recommended value."""
    return "-".join([key, setting.url_key or setting.name, *(str(values[n]) for n in setting.reset_on)])


def options_for(setting: Setting, data: Dataset) -> list:
    """The setting's choices that make sense for ``data`` (d up to D, at most n points drawn,
    image shifts only for images)."""
    if setting.bound == "n_features":
        return [c for c in setting.choices if c <= data.n_features]
    if setting.bound == "n_samples":
        return sorted({min(c, len(data.y_train)) for c in setting.choices})
    if setting.bound == "image_shape":  # tabular rows have no pixels to move
        shorter = min(data.image_shape) if data.image_shape is not None else 1
        return [c for c in setting.choices if c < shorter]
    return list(setting.choices)


def _usable(overrides: dict, data: Dataset) -> dict:
    """Drop link values the dataset cannot take, with a notice saying what it allows."""
    for setting in SETTINGS:
        options = options_for(setting, data)
        if setting.bound and setting.name in overrides and overrides[setting.name] not in options:
            value = overrides.pop(setting.name)
            links.notice(f"{setting.url_key}={value} ignored: this dataset allows {', '.join(map(str, options))}")
    return overrides


def _control(setting: Setting, data: Dataset, key: str, values: Mapping, default):
    """Draw one setting's widget, first at ``default`` (a link's value, else the
    recommended one), and return its value."""
    locked = locked_values(values["encoder"]).get(setting.name) if "encoder" in values else None
    widget_key = _widget_key(setting, key, values)
    value = links.first_default(widget_key, locked if locked is not None else default)
    options = options_for(setting, data)
    common = {
        "label": setting.label,
        "help": setting.help,
        "key": widget_key,
        "disabled": (
            locked is not None
            or (setting.applies is not None and not setting.applies(values))
            or len(options) == 1  # nothing to choose
        ),
    }
    if setting.widget == "select_slider":
        if value not in options:  # the nearest the data allows (sizes: the first)
            value = min(options, key=lambda o: abs(o - value)) if isinstance(value, int | float) else options[0]
        if setting.kind is tuple:  # a tuple value would make a range slider: choose among texts
            texts = {setting.text_of(o): o for o in options}
            chosen = st.select_slider(options=list(texts), value=setting.text_of(value),
                                      format_func=lambda text: setting.label_of(texts[text]), **common)  # fmt: skip
            return texts[chosen]
        return st.select_slider(options=options, value=value, format_func=setting.label_of, **common)
    if setting.widget in ("selectbox", "radio"):
        index = options.index(value) if value in options else 0
        if setting.widget == "radio":
            return st.radio(options=options, index=index, format_func=setting.label_of,
                            horizontal=len(options) <= 2, **common)  # fmt: skip
        return st.selectbox(options=options, index=index, format_func=setting.label_of, **common)
    if setting.widget == "toggle":
        return st.toggle(value=bool(value), **common)
    if setting.widget == "slider":
        return st.slider(min_value=int(setting.low), max_value=int(setting.high), value=int(value), **common)
    if setting.widget == "number":
        if setting.kind is int:
            return st.number_input(
                min_value=int(setting.low), max_value=int(setting.high), value=int(value), **common
            )
        return st.number_input(
            min_value=setting.low, max_value=setting.high, value=float(value), format="%.4g", **common
        )
    if setting.widget == "dof":
        return _dof_control(setting, value, common)
    if setting.widget == "device":
        devices = ["auto", *available_devices()]
        common["help"] += f" Available here: {', '.join(devices[1:])}."
        return st.selectbox(options=devices, **common)
    raise ValueError(f"no control for widget {setting.widget!r} ({setting.name})")


def _dof_control(setting: Setting, value, common: dict):
    """The Student-t's degrees of freedom: a toggle to learn them, else a number (0: d − 1)."""
    learn = st.toggle(
        "Learn the degrees of freedom", value=value == "learn", disabled=common["disabled"],
        key=common["key"] + "-learn", help="Train the Student-t's tail weight by gradient along with the map.",
    )  # fmt: skip
    number = 0.0 if value in (None, "learn") else float(value)
    chosen = st.number_input(min_value=setting.low, max_value=setting.high, value=number, format="%.4g",
                             **{**common, "disabled": common["disabled"] or learn})  # fmt: skip
    return "learn" if learn else (chosen or None)
