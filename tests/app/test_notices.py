"""The "what to notice" lines say what this run's figures show, with its numbers."""

from types import SimpleNamespace

import numpy as np

from app_pages.ui.train import notices
from nca_core.datasets import Dataset
from nca_core.runs.demo import DemoStart
from nca_core.runs.run import Run, RunConfig
from nca_core.training.loop import Snapshot


def snap(epoch, accuracy):
    return Snapshot(epoch, 0.5, 0.0, None, np.zeros((2, 2), np.float32), test_accuracy=accuracy)


def test_the_replay_says_when_the_run_did_its_learning():
    early = [snap(0, 0.60), snap(1, 0.80), snap(2, 0.93), *(snap(e, 0.95) for e in range(3, 11))]
    text = notices.replay(early)
    assert "most of the learning comes early" in text
    assert "accuracy rose from 60% to 93% by epoch 2 of 10 trained and ended at 95%" in text
    late = [snap(e, 0.5 + 0.04 * e) for e in range(11)]
    text = notices.replay(late)
    assert "goes on through the run" in text and "by epoch 10 of 10 trained" in text and "after that" not in text
    assert "hardly changed (98% to 98%)" in notices.replay([snap(0, 0.98), snap(5, 0.98)])
    assert notices.replay([snap(0, None)]) is None


def wine_like(weights, spreads):
    X = np.random.default_rng(0).normal(size=(50, 3)) * spreads
    data = Dataset(
        "t", X, np.zeros(50, int), X[:5], np.zeros(5, int), ("a",), feature_names=("ash", "hue", "proline")
    )
    run = SimpleNamespace(
        map_weights=lambda: np.array(weights), feature_influence=lambda: np.array(weights) * spreads
    )
    run.top_features = lambda count: Run.top_features(run, count)  # the real ranking on the stub
    return SimpleNamespace(run=run), data


def test_the_learned_map_names_what_it_relies_on_and_flags_a_weight_on_a_flat_input():
    active, data = wine_like([1.0, 2.0, 3.0], np.array([1.0, 1.0, 1.0]))
    text = notices.learned_map(active, data, count=2)
    assert "relies most on proline and hue." in text and "hardly varies" not in text
    active, data = wine_like([1.0, 2.0, 30.0], np.array([1.0, 1.0, 0.01]))
    text = notices.learned_map(active, data, count=2)
    assert "relies most on hue and ash." in text
    assert "The strongest colour, on proline, weighs an input that hardly varies." in text


def test_the_demo_line_names_the_axes_of_an_identity_start_and_the_way_back():
    data = SimpleNamespace(feature_labels=("alcohol", "malic acid", "ash"))
    config = RunConfig(init="identity", standardize=True)
    text = notices.demo_start(DemoStart("identity", 0.887, "lda", 1.0), config, data)
    assert text.startswith(
        "Demo start: **identity**, with standardised alcohol and malic acid as the axes, 89% 5-NN"
    )
    assert "the usual LDA start already scores 100%" in text and "Start from LDA" in text


def test_the_replay_does_not_round_an_almost_perfect_score_up_to_100():
    text = notices.replay([snap(0, 0.40), snap(1, 0.997), snap(2, 0.997)])
    assert "accuracy rose from 40% to 99.7% by epoch 1 of 2 trained and ended at 99.7%" in text
    assert "100%" not in text


def test_the_final_line_claims_separated_colours_only_when_the_accuracy_says_so():
    def active(accuracy):
        return SimpleNamespace(
            run=SimpleNamespace(config=RunConfig()), snapshots=[snap(0, 0.2), snap(1, accuracy)]
        )

    assert "most points now sit among their own colour" in notices.final(active(0.97), False)
    mixed = notices.final(active(0.418), False)
    assert "most points" not in mixed and "42%" in mixed and "still overlap" in mixed
    assert "Click a point to draw lines to the neighbours it is likeliest to pick" in mixed and "p_ij" in mixed


def test_a_brief_notice_keeps_the_click_hint_to_a_few_words_and_3_d_has_none():
    full, brief = notices.live(False), notices.live(False, brief=True)
    assert notices.PICK_HINT in full and notices.BRIEF_PICK_HINT not in full
    assert notices.BRIEF_PICK_HINT in brief and notices.PICK_HINT not in brief and len(brief) < 0.75 * len(full)
    assert notices.live(True, brief=True) == notices.live(True)  # nothing to click in 3-D
