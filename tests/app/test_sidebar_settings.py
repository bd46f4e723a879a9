"""The Train page's sidebar: one plan of the recommended settings per render, for the request
its controls hold (d, the map and the optimiser)."""

from __future__ import annotations

from apptest_helpers import APP
from streamlit.testing.v1 import AppTest

from app_pages.ui.train import sidebar
from nca_core import datasets
from nca_core.runs.run import recommended_config


def _counting(monkeypatch) -> list[tuple]:
    asked = []

    def counted(data, *args, **kwargs):
        asked.append((data.name, args, tuple(sorted(kwargs.items()))))
        return recommended_config(data, *args, **kwargs)

    monkeypatch.setattr(sidebar, "recommended_config", counted)
    return asked


def test_each_render_plans_the_recommended_settings_once(monkeypatch):
    asked = _counting(monkeypatch)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(dataset="wine")
    at.run()
    assert not at.exception, at.exception
    renders = len(asked)
    assert renders >= 1 and len(set(asked)) == 1  # every render plans the same request once
    at.sidebar.selectbox(key="wine-optimizer").set_value("sgd").run()
    assert len(asked) == renders + 1  # the render after the click: one plan, for SGD
    wine = datasets.load("wine")
    sgd = recommended_config(wine, 2, encoder="linear", optimizer="sgd")
    assert at.sidebar.number_input(key="wine-lr-sgd-linear-2").value == sgd.learning_rate


def test_a_links_map_and_optimiser_are_the_request_its_controls_start_from(monkeypatch):
    asked = _counting(monkeypatch)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(dataset="wine", encoder="mlp", optimizer="sgd", d="3")
    at.run()
    assert not at.exception, at.exception
    assert set(asked) == {("wine", (), (("encoder", "mlp"), ("n_components", 3), ("optimizer", "sgd")))}
    wine = datasets.load("wine")
    planned = recommended_config(wine, 3, encoder="mlp", optimizer="sgd")
    assert at.sidebar.slider(key="wine-epochs-mlp-3").value == planned.max_iter
