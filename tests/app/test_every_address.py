"""Every address the app writes opens cleanly: what a class meets when it follows a link.

A page's address is made the way a lecturer makes it, by choosing a dataset (and on the
Train page, a map) and copying the address the page then shows; a student opens it in a
fresh session. That session must draw the page with the same settings, without a word about
the link and without an error, and so write back the very same address.
"""

from __future__ import annotations

import pytest
from apptest_helpers import APP, click_points
from streamlit.testing.v1 import AppTest

from nca_core import datasets
from nca_core.config.rules import ENCODERS

PAGES = ("train", "compare", "knn_speed", "about")  # each a file app_pages/PAGE.py
# The Compare and kNN speed pages fit and time models on what they show: on the small sets
# that bound every setting they write (3, 13 and 64 features), not on MNIST's 60,000 images,
# whose Train address covers the bounds a large set puts on the run's settings.
SMALL_SETS = ("rings", "wine", "digits")


def _ready(name: str) -> None:
    if not dict(datasets.available()).get(name):
        pytest.skip(f"{name} is not on this machine (set NCA_DATA_DIR to the folder of the real datasets)")


def _session(page: str, address: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    if address:
        at.query_params.update(address)
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _address(at: AppTest) -> dict[str, str]:
    return {key: str(value) for key, value in at.query_params.items()}


def _said_about_the_link(at: AppTest) -> list[str]:
    """What the page says that a link alone would make it say: settings it did not use, a
    run it could not show, or any warning or error at all."""
    link_words = ("link", "address", "ignored", "another tab", "no longer")
    infos = [i.value for i in at.info if any(word in i.value.lower() for word in link_words)]
    return infos + [w.value for w in at.warning] + [e.value for e in at.error]


def opens_cleanly(page: str, address: dict[str, str]) -> AppTest:
    """Open ``address`` on ``page`` in a fresh session and check it draws as it was written."""
    at = _session(page, address)
    assert _said_about_the_link(at) == [], address
    assert _address(at) == address, "the page wrote back another address than it opened"
    return at


def lecturers_address(page: str, dataset: str, encoder: str | None = None) -> dict[str, str]:
    """The address ``page`` writes once ``dataset`` is chosen (and on the Train page, the
    map ``encoder``)."""
    at = _session(page)
    at.selectbox(key="dataset").set_value(dataset).run()
    if encoder is not None:
        at.sidebar.selectbox(key=f"{dataset}-encoder").set_value(encoder).run()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return _address(at)


@pytest.mark.parametrize("encoder", ENCODERS)
@pytest.mark.parametrize("dataset", list(datasets.REGISTRY))
def test_every_train_address_opens_cleanly(dataset, encoder):
    _ready(dataset)
    address = lecturers_address("train", dataset, encoder)
    assert address["dataset"] == dataset and address["encoder"] == encoder
    opens_cleanly("train", address)


@pytest.mark.parametrize("page", ["compare", "knn_speed"])
@pytest.mark.parametrize("dataset", SMALL_SETS)
def test_every_compare_and_speed_address_opens_cleanly(page, dataset):
    address = lecturers_address(page, dataset)
    assert address["dataset"] == dataset, f"the {page} page keeps no dataset in its address"
    opens_cleanly(page, address)


def test_the_address_of_how_nca_works_opens_its_toy_as_it_was():
    at = _session("about")
    at.slider(key="about-scale").set_value(2.5).run()
    click_points(at, "about-after", [{"curve_number": 0, "point_index": 0, "customdata": 7}])
    at.run()
    address = _address(at)
    assert address == {"a_scale": "2.5", "point": "7"}
    visitor = opens_cleanly("about", address)
    assert visitor.slider(key="about-scale").value == 2.5
    assert visitor.session_state["about-anchor"] == 7
