"""The one declaration of run settings, checked as a table (like scikit-learn's constraints)."""

import pytest

from nca_core import NCA
from nca_core.config.rules import OPTIONS
from nca_core.config.settings import SETTINGS, RunConfig
from nca_core.runs.run import estimator_params


def test_run_config_is_built_from_the_declaration():
    assert list(RunConfig().as_dict()) == [s.name for s in SETTINGS]
    assert RunConfig().as_dict() == {s.name: s.default for s in SETTINGS}


def test_keys_flags_and_labels_are_consistent():
    url_keys = [s.url_key for s in SETTINGS if s.url_key]
    assert len(url_keys) == len(set(url_keys))
    assert len({s.flag for s in SETTINGS}) == len(SETTINGS)
    for s in SETTINGS:
        if s.labels:
            assert set(s.labels) == set(s.choices), s.name
        if s.applies is not None or s.reset_on:
            assert set(s.reset_on) <= {t.name for t in SETTINGS}


def test_option_lists_are_the_librarys_own():
    for name, options in OPTIONS.items():
        setting = next(s for s in SETTINGS if s.name == name)
        assert setting.choices == options


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_every_allowed_value_parses_back_and_the_estimator_accepts_it(setting):
    values = setting.choices or [v for v in (setting.low, setting.high, setting.default) if v is not None]
    for value in values:
        value = setting.kind(value)
        text = str(value).lower() if setting.kind is bool else str(value)
        assert setting.parse(text) == value
        NCA(**estimator_params(RunConfig(**{setting.name: value}), image_shape=(16, 16)))._validate_params()


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("n_components", "4", "must be one of 2, 3, 5, 10, 16, 32, 64"),
        ("learning_rate", "nan", "must be a number from 1e-05 to 1000"),
        ("learning_rate", "abc", "must be a number from 1e-05 to 1000"),
        ("epochs", "301", "must be a whole number from 1 to 300"),
        ("epochs", "2.5", "must be a whole number from 1 to 300"),
        ("optimizer", "newton", "must be one of lbfgs, adam, sgd"),
        ("standardize", "maybe", "must be true or false"),
    ],
)
def test_bad_values_are_refused_with_what_is_allowed(name, text, message):
    setting = next(s for s in SETTINGS if s.name == name)
    with pytest.raises(ValueError, match=message):
        setting.parse(text)
