"""What a class reads between the numbers: Compare's what-to-notice, and the lesson path from page to page."""

from __future__ import annotations

from app_pages.ui.compare.notice import what_to_notice
from nca_core.runs.comparison import MethodResult


def result(name: str, train: float, test: float | None, dimensions: int) -> MethodResult:
    return MethodResult(name, None, train, test, 0.1, "", dimensions)


def test_digits_at_two_dimensions_explains_the_raw_ceiling_and_the_training_score():
    """Digits at d = 2: NCA 85.7% leave-one-out but 75.7% on test, raw 64-D kNN 98.1%."""
    text = what_to_notice(
        [result("NCA", 0.857, 0.757, 2), result("PCA", 0.62, 0.60, 2), result("LDA", 0.70, 0.68, 2)],
        result("raw inputs", 0.98, 0.981, 64),
        k=5,
    )
    assert "5-NN does best on NCA's 2-D map (75.7%)" in text
    assert "On all 64 inputs it reaches 98.1%" in text and "a larger d keeps more" in text
    assert "leave-one-out score on the training points (85.7%) is above the test score" in text


def test_a_map_that_beats_its_inputs_says_so_and_a_close_one_reads_as_even():
    beats = what_to_notice([result("NCA", 0.95, 0.96, 2)], result("raw inputs", 0.7, 0.72, 3), k=3)
    assert "That beats all 3 inputs (72.0%)" in beats and "leave-one-out" not in beats
    even = what_to_notice([result("LDA", 0.90, 0.905, 2)], result("raw inputs", 0.9, 0.91, 13), k=5)
    assert "All 13 inputs give about the same (91.0%)" in even


def test_without_a_test_set_the_leave_one_out_scores_are_read():
    text = what_to_notice([result("NCA", 0.9, None, 2), result("PCA", 0.8, None, 2)], result("raw inputs", 0.99, None, 10), k=5)
    assert "does best on NCA's 2-D map (90.0%)" in text and "On all 10 inputs it reaches 99.0%" in text


def test_each_page_ends_with_the_next_step_of_the_lesson():
    """How NCA works, then the rings on Train, Compare, images on Train, kNN speed, your data."""
    from app_pages.ui.lesson import next_step

    assert next_step("about")[0::2] == ("train", {"dataset": "rings"})
    assert next_step("train", "rings")[0::2] == ("compare", {"dataset": "rings"})
    assert next_step("compare", "rings", images="usps")[0::2] == ("train", {"dataset": "usps"})
    assert next_step("train", "usps")[0::2] == ("knn_speed", {"dataset": "usps"})
    assert next_step("knn_speed", "usps")[0] == "your_data"


def test_the_menu_starts_with_the_idea_and_each_page_links_on():
    from apptest_helpers import APP
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("app_pages/about.py").run()
    assert not at.exception, at.exception
    (link,) = [p for p in at.get("page_link") if "Next:" in p.proto.label]
    assert link.proto.label == "Next: watch NCA learn the paper's rings" and link.proto.query_string == "dataset=rings"
    at.switch_page("app_pages/train.py").run()
    labels = [p.proto.label for p in at.get("page_link")]
    assert "Next: compare NCA with PCA and LDA on this data" in labels
