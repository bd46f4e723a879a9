"""AppTest of How NCA works: formulas and the neighbour-probability illustration."""

from nca_core.datasets import make_stretched_blobs
from nca_core.objective.function import selection_probabilities


def test_formulas_and_the_illustration(app):
    at = app.switch_page("app_pages/about.py").run()
    assert not at.exception, at.exception
    assert len(at.latex) == 3
    labels = [m.label for m in at.metric]
    assert labels == ["p_i (same class)", "neighbours"] * 2
    before, after = float(at.metric[0].value), float(at.metric[2].value)
    assert after > before  # the learnt map gives the clicked point more of its own class


def test_scaling_a_shrinks_the_neighbourhood(app):
    at = app.switch_page("app_pages/about.py").run()
    wide = float(at.metric[1].value)
    at.slider(key="about-scale").set_value(4.0).run()
    narrow = float(at.metric[1].value)
    assert narrow < wide


def test_choosing_another_point_shows_its_probabilities(app):
    at = app.switch_page("app_pages/about.py").run()
    at.session_state["about-anchor"] = 31
    at.run()
    X, y = make_stretched_blobs(60, seed=0)
    p = selection_probabilities(X, 31)  # the "before" panel: identity map, scale 1
    assert at.metric[0].value == f"{p[y == y[31]].sum():.3f}"


def test_the_caption_names_the_line_colours_the_figure_draws(app):
    import json

    from nca_core.plots.colours import OTHER_CLASS_LINE, SAME_CLASS_LINE

    at = app.switch_page("app_pages/about.py").run()
    caption = next(c.value for c in at.caption if "p_ij to the others" in c.value)
    layouts = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    colours = {t["line"]["color"] for fig in layouts for t in fig["data"] if t.get("mode") == "lines"}
    assert colours <= {SAME_CLASS_LINE[0], OTHER_CLASS_LINE[0]}
    assert f"{SAME_CLASS_LINE[1]} = same class" in caption
    assert f"{OTHER_CLASS_LINE[1]} = another" in caption
    assert "green" not in caption and "red" not in caption
    assert all(fig["layout"]["yaxis"]["scaleanchor"] == "x" for fig in layouts)  # one scale


def about_figures(at):
    import json

    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def test_line_colours_cannot_be_taken_for_class_colours(app):
    from nca_core.plots.colours import class_colors

    at = app.switch_page("app_pages/about.py").run()
    for fig in about_figures(at):
        classes = {t["marker"]["color"] for t in fig["data"] if t.get("mode") == "markers" and "name" in t}
        lines = [t["line"] for t in fig["data"] if t.get("mode") == "lines"]
        assert lines and not {line["color"] for line in lines} & classes
        assert not {line["color"] for line in lines} & set(class_colors(len(classes)))
        assert {line.get("dash", "solid") for line in lines} <= {"solid", "dash"}
    caption = next(c.value for c in at.caption if "p_ij to the others" in c.value)
    assert "never a class colour" in caption


def test_panel_titles_sit_above_the_figures_and_follow_the_scale(app):
    at = app.switch_page("app_pages/about.py").run()
    assert all(
        not (fig["layout"].get("title") or {}).get("text") for fig in about_figures(at)
    )  # no clash with the legend
    titles = [m.value for m in at.markdown if m.value.startswith("**before") or m.value.startswith("**after")]
    assert titles == ["**before: A = identity**", "**after: A learnt by NCA**"]
    at.slider(key="about-scale").set_value(2.0).run()
    titles = [m.value for m in at.markdown if m.value.startswith("**before") or m.value.startswith("**after")]
    assert titles == ["**before: A = 2 × identity**", "**after: A learnt by NCA, × 2**"]


def test_the_toy_comes_first_and_the_formulas_after_it(app):
    """A student opens the page on the toy to click, not two screens of formulas above it."""
    at = app.switch_page("app_pages/about.py").run()
    assert [h.value for h in at.header] == ["Who does a point listen to?", "The idea, and the paper's formulas"]
    kinds = [element.type for element in at.main if element.type in ("plotly_chart", "latex")]
    assert kinds.index("latex") > kinds.index("plotly_chart")
