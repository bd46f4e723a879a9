"""The one declaration of run settings, checked as a table (like scikit-learn's constraints)."""

import re

import numpy as np
import pytest

from nca_core import NCA
from nca_core.config.rules import OPTIONS
from nca_core.config.settings import SETTINGS, RunConfig, parse_dof, parse_layer_sizes
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
        value = value if setting.parser is not None else setting.kind(value)
        text = str(value).lower() if setting.kind is bool else setting.text_of(value)
        value = setting.parse(text)  # dof: 0 stands for None, the paper's d - 1
        assert setting.parse(str(value).lower() if setting.kind is bool else setting.text_of(value)) == value
        NCA(**estimator_params(RunConfig(**{setting.name: value}), image_shape=(16, 16)))._validate_params()


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("n_components", "4", "must be one of 2, 3, 5, 10, 16, 32, 64"),
        ("learning_rate", "nan", "must be a number from 1e-05 to 1000"),
        ("learning_rate", "abc", "must be a number from 1e-05 to 1000"),
        ("max_iter", "301", "must be a whole number from 1 to 300"),
        ("max_iter", "2.5", "must be a whole number from 1 to 300"),
        ("random_state", "99999999999", "must be a whole number from 0 to 2147483647"),
        ("optimizer", "newton", "must be one of lbfgs, adam, sgd"),
        ("standardize", "maybe", "must be true or false"),
    ],
)
def test_bad_values_are_refused_with_what_is_allowed(name, text, message):
    setting = next(s for s in SETTINGS if s.name == name)
    with pytest.raises(ValueError, match=message):
        setting.parse(text)


@pytest.mark.parametrize(
    "text, value", [("learn", "learn"), ("LEARN", "learn"), ("0", None), ("3.5", 3.5), ("1000", 1000.0)]
)
def test_dof_is_a_number_learn_or_zero_for_the_papers_choice(text, value):
    assert parse_dof(text) == value


@pytest.mark.parametrize("text", ["-1", "1001", "nan", "many", ""])
def test_a_bad_dof_says_what_is_allowed(text):
    setting = next(s for s in SETTINGS if s.name == "dof")
    with pytest.raises(ValueError, match="must be a number from 0 to 1000 \\(0: d − 1\\) or learn"):
        setting.parse(text)


def test_hidden_layers_read_and_write_as_comma_separated_sizes():
    setting = next(s for s in SETTINGS if s.name == "hidden_sizes")
    assert setting.parse("256,256") == (256, 256) and setting.text_of((64, 64)) == "64,64"
    assert parse_layer_sizes("500,500,2000") == (500, 500, 2000)  # the command line takes any
    for bad in ("256", "0,5", "a,b", ""):  # the app's grid: two equal layers
        with pytest.raises(ValueError):
            setting.parse(bad)


def test_each_estimator_parameter_is_declared_once():
    """The estimator's constructor, constraints and documented parameters all come from
    ``PARAMS``; the run settings are the declared parameters that have a control."""
    import inspect

    from nca_core.config.params import PARAMS
    from nca_core.runs.run import RUN_ONLY

    declared = [p.name for p in PARAMS if p.estimator]
    assert list(inspect.signature(NCA).parameters) == declared
    assert NCA().get_params() == {p.name: p.default for p in PARAMS if p.estimator}
    assert set(NCA._parameter_constraints) == set(declared)
    documented = re.findall(r"^    (\w+) : ", NCA.__doc__.split("Attributes")[0], flags=re.M)
    assert documented == declared
    assert [s.name for s in SETTINGS] == [p.name for p in PARAMS if p.control is not None]
    assert {p.name for p in PARAMS if not p.estimator} == set(RUN_ONLY)


def test_an_unknown_keyword_is_refused_as_by_any_constructor():
    with pytest.raises(TypeError, match="unexpected keyword arguments: n_componets"):
        NCA(n_componets=2)


@pytest.mark.parametrize(
    "name, accepted, refused",
    [
        ("n_components", [1, 500, None], [0, 2.5, "2"]),  # beyond the app's 2..64
        ("max_iter", [1, 5000, None], [0]),
        ("learning_rate", [1e-9, 5e3, None], [0.0, -1.0]),
        ("dof", [1e-3, 5e3, "learn", None], [0.0, "auto"]),
        ("shift", [0, 3, "auto"], [-1, "learn"]),
        ("kernel", ["auto", "gaussian", "student-t"], ["cauchy"]),
        ("objective", ["auto", "f", "g", "mcml"], ["h"]),
        ("batch_size", [1, 10_000, None], [0]),
        ("weight_decay", [0.0, 100.0], [-0.1]),
        ("random_state", [None, 0, 2**32 - 1, np.random.RandomState(0)], [-1, 2**32]),
        ("init", ["auto", "pca", np.eye(2, 4)], ["svd"]),
        ("hidden_sizes", [(8,), [8, 8]], [8]),
    ],
)
def test_the_estimator_takes_what_its_setting_accepts(name, accepted, refused):
    from sklearn.utils._param_validation import InvalidParameterError

    for value in accepted:
        NCA(**{name: value})._validate_params()
    for value in refused:
        with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
            NCA(**{name: value})._validate_params()
