"""Settings travel in the URL: read (validated) on the first run, written on every run."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_pages.ui.links import FIELDS, NOTICES_LISTED, parse, to_params
from nca_core.runs.run import RunConfig

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_a_link_opens_its_settings_and_says_what_it_ignored():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(dataset="wine", d="3", optimizer="sgd", epochs="7", lr="abc", bogus="1")
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="dataset").value == "wine"
    assert at.sidebar.select_slider(key="wine-d").value == 3
    assert at.sidebar.selectbox(key="wine-optimizer").value == "sgd"
    assert at.sidebar.slider(key="wine-epochs-linear-3").value == 7
    notice = next(i.value for i in at.info if "were not used" in i.value)
    assert "lr='abc' ignored: must be a number from 1e-05 to 1000" in notice
    assert "unknown setting 'bogus' ignored" in notice


def test_the_url_follows_the_settings():
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.sidebar.slider(key="rings-epochs-linear-2").set_value(12).run()
    assert at.query_params["dataset"] == "rings"
    assert at.query_params["epochs"] == "12"
    assert at.query_params["optimizer"] == "adam"


def test_parse_checks_types_ranges_and_names():
    dataset, values, notices = parse(
        {
            "dataset": "../../etc/passwd",
            "d": "0",
            "std": "yes",
            "batch": "100",
            "k": "3",
            "init": "pca",
            "lr": "fast",
        },
        ["rings", "wine"],
    )
    assert dataset is None
    assert values == {"standardize": True, "k": 3, "init": "pca"}
    assert notices == [
        "unknown dataset '../../etc/passwd' ignored",
        "d='0' ignored: must be one of 2, 3, 5, 10, 16, 32, 64",
        "batch='100' ignored: must be one of 32, 64, 128, 256, 512, 1024, 2048, 4096",
        "lr='fast' ignored: must be a number from 1e-05 to 1000",
    ]


def test_round_trip():
    config = RunConfig(n_components=3, optimizer="sgd", learning_rate=0.05, standardize=True, random_state=7)
    dataset, values, notices = parse(to_params("wine", config), ["wine"])
    assert dataset == "wine" and notices == []
    assert RunConfig(**{**config.as_dict(), **values}) == config


def test_a_link_to_compare_opens_its_settings():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(dataset="wine", d="3", k="7")
    at.switch_page("app_pages/compare.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="dataset").value == "wine"
    assert at.radio(key="compare-d").value == 3
    assert at.select_slider(key="compare-k").value == 7
    assert at.query_params["d"] == "3" and at.query_params["dataset"] == "wine"


def test_a_compare_link_keeps_one_scale_for_every_panel():
    """The toggle is written into the page's link, and a link that says so opens with it on."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(dataset="wine", k="3")
    at.switch_page("app_pages/compare.py").run()
    assert at.query_params["scale"] == "false"
    at.toggle(key="compare-same-scale").set_value(True).run()
    assert not at.exception, at.exception
    assert at.query_params["scale"] == "true" and at.query_params["k"] == "3"
    opened = AppTest.from_file(APP, default_timeout=60)
    opened.query_params.update(dict(at.query_params))
    opened.switch_page("app_pages/compare.py").run()
    assert opened.toggle(key="compare-same-scale").value is True
    assert not opened.info  # no "settings in the link were not used" notice


def test_a_links_settings_stay_until_the_page_has_drawn_them(monkeypatch):
    """A page run cut short by a click (a rerun stops it at its next element) must not drop
    the link's settings: the next run opens with them, not with the page's own defaults
    (a link's 300 epochs read as 60)."""
    from app_pages.ui import links

    monkeypatch.setattr(links.st, "session_state", {links.VALUES: {"max_iter": 300, "k": 7}})
    assert links.take("max_iter", "batch_size") == {"max_iter": 300}
    assert links.take("max_iter") == {"max_iter": 300}  # a run cut short took them: still there
    links.used("max_iter")
    assert links.take("max_iter", "k") == {"k": 7}


def test_a_control_keeps_the_links_value_as_its_default_while_the_page_shows_it():
    """The browser shows a control it meets for the first time at the default the page sends.
    A click sent before the link's first drawing reached it carries no value for the control,
    and the next drawing's default then becomes the value: the page sent 60, the page's own
    default, on every run after the first, and a link's 300 epochs trained as 60."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(dataset="rings", epochs="300")
    at.run()
    at.run()  # a click elsewhere: the page draws again
    epochs = at.sidebar.slider(key="rings-epochs-linear-2")
    assert (epochs.value, list(epochs.proto.default)) == (300, [300])
    at.sidebar.slider(key="rings-epochs-linear-2").set_value(40).run()  # the user's own value
    assert at.sidebar.slider(key="rings-epochs-linear-2").value == 40


def test_a_compare_control_keeps_the_links_value_as_its_default():
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(dataset="wine", d="3", k="7")
    at.switch_page("app_pages/compare.py").run()
    at.run()
    k, d = at.select_slider(key="compare-k"), at.radio(key="compare-d")
    assert (k.value, d.value) == (7, 3)
    assert (k.proto.options[int(k.proto.default[0])], d.proto.default) == ("7", 1)  # defaults: indices


# For every key a link may carry, a value past what its control offers: the most work a
# crafted link could ask of the server (a network of 100,000-unit layers, a billion epochs).
CRAFTED = {
    "d": "100000", "encoder": "transformer", "init": "../../etc/passwd", "hidden": "100000,100000",
    "kernel": "cauchy", "dof": "1e9", "objective": "h", "std": "2", "optimizer": "newton", "lr": "1e300",
    "schedule": "step", "batch": "10000000", "neighbors": "everyone", "shift": "1000", "epochs": "1000000000",
    "l2": "1e9", "seed": "99999999999", "k": "1001", "train": "999999999",
}  # fmt: skip


def test_every_link_key_is_tried_with_a_value_past_its_control():
    assert set(CRAFTED) == set(FIELDS)


@pytest.mark.parametrize("key", sorted(CRAFTED))
def test_a_crafted_link_cannot_ask_for_more_than_the_controls_offer(key):
    dataset, values, notices = parse({key: CRAFTED[key]}, ["rings"])
    assert dataset is None
    assert values == {} and len(notices) == 1
    assert notices[0].startswith(f"{key}={CRAFTED[key][:40]!r} ignored: must be ")


def test_a_link_of_many_unknown_keys_lists_a_few_and_counts_the_rest():
    _, values, notices = parse({f"x{i}": "1" for i in range(5000)}, ["rings"])
    assert values == {}
    assert notices == [*(f"unknown setting 'x{i}' ignored" for i in range(NOTICES_LISTED)), "4,990 more ignored"]


def test_the_train_page_trains_with_the_controls_values_whatever_a_link_or_a_widget_sends():
    """A crafted link's values are ignored with a notice, and values a crafted client sends
    for the sidebar's widgets fall back to the widgets' own: the run's settings (the page's
    link) stay inside the controls' ranges."""
    at = AppTest.from_file(APP, default_timeout=60)
    heavy = ("d", "hidden", "epochs", "batch", "lr", "seed", "dof", "shift", "k")
    at.query_params.update({**{key: CRAFTED[key] for key in heavy}, "encoder": "mlp"})
    at.run()
    assert not at.exception, at.exception
    notice = next(i.value for i in at.info if "were not used" in i.value)
    assert all(f"{key}={CRAFTED[key]!r} ignored" in notice for key in heavy)
    at.sidebar.slider(key="rings-epochs-mlp-2").set_value(10**9)
    at.sidebar.number_input(key="rings-lr-adam-mlp-2").set_value(1e300)
    at.sidebar.number_input(key="rings-seed").set_value(2**40)
    at.run()
    assert not at.exception, at.exception
    assert at.query_params["epochs"] == "40" and at.query_params["lr"] == "0.003"
    assert at.query_params["seed"] == "0" and at.query_params["hidden"] == "500,500"


def test_a_link_asks_for_no_more_than_the_dataset_allows():
    """d = 64 is among the control's choices, but rings has 3 features: the link's value
    is ignored with what the dataset allows, and the run maps to at most 3 dimensions."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(dataset="rings", d="64")
    at.run()
    assert not at.exception, at.exception
    notice = next(i.value for i in at.info if "were not used" in i.value)
    assert "d=64 ignored: this dataset allows 2, 3" in notice
    assert at.sidebar.select_slider(key="rings-d").value == 2 and at.query_params["d"] == "2"


class Address(dict):
    """``st.query_params`` as ``share`` uses it."""

    def to_dict(self) -> dict:
        return dict(self)

    def from_dict(self, params: dict) -> None:
        self.clear()
        self.update(params)


def test_back_brings_a_pages_settings_back_and_a_sidebar_visit_leaves_one_history_entry(monkeypatch):
    """The browser makes a history entry for a page opened from the sidebar, with a bare
    address; a page that wrote its settings there at once made a second, and Back stopped on
    the first, still on that page. Back to an address of a page draws it with that address's
    settings, though its controls kept other values or were dropped with the page."""
    from app_pages.ui import links

    address = Address()
    state = {links.APPLIED: True}
    monkeypatch.setattr(links.st, "session_state", state)
    monkeypatch.setattr(links.st, "query_params", address)
    links.arrive("")  # the Train page, first
    links.write_address("", {"dataset": "wine", "seed": "7"})
    assert address == {"dataset": "wine", "seed": "7"}
    links.arrive("compare")  # from the sidebar: a bare address
    address.clear()
    links.follow_address("compare", ["wine"], ("compare-",))
    links.write_address("compare", {"dataset": "wine", "k": "5"})
    links.write_address("compare", {"dataset": "wine", "k": "5"})  # a rerun, nothing changed
    assert address == {}
    state.update({"compare-k": 7, "dataset": "wine"})  # the user moves k
    links.write_address("compare", {"dataset": "wine", "k": "7"})
    assert address == {"dataset": "wine", "k": "7"}
    links.follow_address("compare", ["wine"], ("compare-",))  # the next run: its own address
    assert "compare-k" in state and links.VALUES not in state
    address.from_dict({"dataset": "wine", "k": "3"})  # Back to an earlier address of the page
    links.follow_address("compare", ["wine"], ("compare-",))
    assert state[links.VALUES] == {"k": 3} and state["dataset_choice"] == "wine"
    assert "compare-k" not in state and "dataset" not in state  # drawn anew, with k = 3
    links.arrive("")  # Back to the Train page's address
    address.from_dict({"dataset": "wine", "seed": "7"})
    links.follow_address("", ["wine"], ("wine-",))
    assert state[links.VALUES] == {"random_state": 7}


def test_an_uploads_link_says_where_its_data_is_and_waits_for_the_upload():
    """A classmate opening an upload's link gets a word on where the data lives and a way to
    upload it; nothing of the link falls on rings, and once the same file is used its
    settings apply to it."""
    sample = Path(APP).parent / "app_pages" / "assets" / "sample-iris.csv"
    owner = AppTest.from_file(APP, default_timeout=60)
    owner.switch_page("app_pages/your_data.py").run()
    owner.file_uploader(key="upload").set_value(("iris.csv", sample.read_bytes(), "text/csv")).run()
    next(b for b in owner.button if b.label == "Use this dataset on every page").click().run()
    owner.switch_page("app_pages/train.py")  # where the click went: AppTest's later runs stay there
    owner.sidebar.slider(key="uploaded-epochs-linear-2").set_value(12).run()
    address = {key: str(value) for key, value in owner.query_params.items()}
    assert address["dataset"] == "uploaded" and address["epochs"] == "12"

    classmate = AppTest.from_file(APP, default_timeout=60)
    classmate.query_params.update(address)
    classmate.run()
    assert not classmate.exception, classmate.exception
    assert not [i.value for i in classmate.info if "were not used" in i.value]
    (warning,) = [w.value for w in classmate.warning]
    assert "uploaded in another session" in warning and "nothing of the link was applied" in warning
    assert "Upload the file on Your data" in [link.label for link in classmate.get("page_link")]
    assert classmate.selectbox(key="dataset").value == "rings"
    assert classmate.sidebar.slider(key="rings-epochs-linear-2").value == 60  # rings' own, not 12
    classmate.run()
    assert not classmate.warning  # said once

    classmate.switch_page("app_pages/your_data.py").run()
    classmate.file_uploader(key="upload").set_value(("iris.csv", sample.read_bytes(), "text/csv")).run()
    next(b for b in classmate.button if b.label == "Use this dataset on every page").click().run()
    classmate.switch_page("app_pages/train.py")
    assert not classmate.exception, classmate.exception
    assert classmate.selectbox(key="dataset").value == "uploaded"
    assert classmate.sidebar.slider(key="uploaded-epochs-linear-2").value == 12
