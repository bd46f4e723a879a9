"""Settings in the URL query string, so a link opens the same configuration.

Only allow-listed keys with typed, range-checked values are read; anything else is ignored
and the page says so. Values are written back as plain strings (JSON-safe scalars).
"""

from __future__ import annotations

import math

import streamlit as st

from nca_core.runs import RunConfig

APPLIED = "_query_applied"
NOTICES = "_query_notices"
VALUES = "_query_values"

# query key -> (RunConfig field, parser returning the value or raising ValueError)
_CHOICES = {
    "init": ("pca", "lda", "identity", "random"),
    "objective": ("f", "g", "mcml"),
    "encoder": ("linear", "diagonal", "mlp"),
    "kernel": ("gaussian", "student-t"),
    "neighbors": ("auto", "all", "memory", "batch"),
    "optimizer": ("lbfgs", "adam", "sgd"),
}


def _int_in(lo: int, hi: int):
    def parse(text: str) -> int:
        value = int(text)
        if not lo <= value <= hi:
            raise ValueError(f"must be between {lo} and {hi}")
        return value

    return parse


def _float_in(lo: float, hi: float):
    def parse(text: str) -> float:
        value = float(text)
        if not (math.isfinite(value) and lo <= value <= hi):
            raise ValueError(f"must be a number from {lo:g} to {hi:g}")
        return value

    return parse


def _one_of(options):
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"must be one of {', '.join(options)}")
        return text

    return parse


def _boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("1", "true", "yes"):
        return True
    if lowered in ("0", "false", "no"):
        return False
    raise ValueError("must be true or false")


FIELDS = {
    "d": ("n_components", _int_in(1, 64)),
    "init": ("init", _one_of(_CHOICES["init"])),
    "objective": ("objective", _one_of(_CHOICES["objective"])),
    "encoder": ("encoder", _one_of(_CHOICES["encoder"])),
    "hidden": ("hidden_width", _one_of(("32", "64", "128", "256", "512"))),
    "kernel": ("kernel", _one_of(_CHOICES["kernel"])),
    "dof": ("dof", _float_in(0.0, 1000.0)),
    "learn_dof": ("learn_dof", _boolean),
    "neighbors": ("neighbors", _one_of(_CHOICES["neighbors"])),
    "optimizer": ("optimizer", _one_of(_CHOICES["optimizer"])),
    "lr": ("learning_rate", _float_in(1e-5, 1e3)),
    "batch": ("batch_size", _one_of(("32", "64", "128", "256", "512", "1024", "2048", "4096"))),
    "epochs": ("epochs", _int_in(1, 300)),
    "l2": ("weight_decay", _float_in(0.0, 10.0)),
    "std": ("standardize", _boolean),
    "seed": ("seed", _int_in(0, 2**31 - 1)),
    "k": ("k", _one_of(("1", "3", "5", "7", "9"))),
}


RUN_FIELDS = tuple(name for name, _ in FIELDS.values())


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
            name, parser = FIELDS[key]
            try:
                value = parser(text)
            except ValueError as exc:
                notices.append(f"{key}={text[:40]!r} ignored: {exc}")
                continue
            values[name] = int(value) if name in ("batch_size", "k", "hidden_width") else value
        else:
            notices.append(f"unknown setting {key[:40]!r} ignored")
    return dataset, values, notices


def to_params(dataset: str, config: RunConfig) -> dict[str, str]:
    fields = {name: key for key, (name, _) in FIELDS.items()}
    out = {"dataset": dataset}
    for name, value in config.as_dict().items():
        if name in fields:
            out[fields[name]] = str(value).lower() if isinstance(value, bool) else str(value)
    return out


def read_once(dataset_names: list[str]) -> None:
    """On a session's first run, take the settings in the URL (whichever page it opens)."""
    if st.session_state.get(APPLIED):
        return
    st.session_state[APPLIED] = True
    dataset, values, notices = parse(st.query_params.to_dict(), dataset_names)
    if dataset is not None:
        st.session_state["dataset_choice"] = dataset
    st.session_state[VALUES] = values
    st.session_state[NOTICES] = notices


def take(*fields: str) -> dict:
    """Settings from the link not used yet, for the named RunConfig fields; each is used once."""
    pending = st.session_state.get(VALUES, {})
    return {name: pending.pop(name) for name in fields if name in pending}


def show_notices() -> None:
    notices = st.session_state.pop(NOTICES, [])
    if notices:
        st.info(
            "Some settings in the link were not used: " + "; ".join(notices) + ".", icon=":material/link_off:"
        )
