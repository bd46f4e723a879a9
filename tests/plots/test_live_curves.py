from nca_core.plots import live_curves
from tests.plots.vega_lite import valid_vega_lite


def test_curves_are_valid_vega_lite_and_skip_missing_values():
    objective = live_curves.objective_rows([0, 1, 2], [0.3, 0.5, 0.9])
    valid_vega_lite(live_curves.objective_spec("g"), objective)
    assert live_curves.objective_spec("g")["encoding"]["y"]["title"] == "mean log p_i (g / n)"
    accuracy = live_curves.accuracy_rows([0, 1, 2], [0.5, 0.7, 0.9], [None, 0.6, 0.8])
    valid_vega_lite(live_curves.accuracy_spec(5), accuracy)
    assert accuracy.values.tolist() == [
        [0, 0.5, "train (LOO)"],
        [1, 0.7, "train (LOO)"],
        [1, 0.6, "test"],
        [2, 0.9, "train (LOO)"],
        [2, 0.8, "test"],
    ]
    assert live_curves.accuracy_spec(5)["encoding"]["y"]["title"] == "5-NN accuracy"
    # probabilities and accuracies keep the full [0, 1] scale; a log-likelihood fits its data
    assert live_curves.accuracy_spec(5)["encoding"]["y"]["scale"] == {"domain": [0, 1]}
    assert live_curves.objective_spec("f")["encoding"]["y"]["scale"] == {"domain": [0, 1]}
    assert live_curves.objective_spec("g")["encoding"]["y"]["scale"] == {"zero": False}


def test_a_curves_last_point_is_drawn_whole():
    """The newest epoch's point sat on the right edge, half cut off; the x scale keeps room
    for a point's radius (about 3 pixels at Vega-Lite's default size of 30 square pixels)."""
    for spec in (live_curves.objective_spec("f"), live_curves.accuracy_spec(5)):
        assert spec["mark"]["point"] == {"aria": False}  # drawn, and kept from screen readers
        assert spec["encoding"]["x"]["scale"]["padding"] >= 3


def test_the_curves_padding_is_not_rounded_into_negative_epochs():
    """Vega-Lite widens a padded domain to nice numbers afterwards: a run stopped after 33
    epochs had its epoch axis start at -5. The padding stays a few pixels."""
    for spec in (live_curves.objective_spec("f"), live_curves.accuracy_spec(5)):
        assert spec["encoding"]["x"]["scale"]["nice"] is False


def test_each_curve_is_read_as_its_description_and_the_accuracies_differ_in_more_than_colour():
    from nca_core.plots import colours

    for spec in (live_curves.objective_spec("g"), live_curves.accuracy_spec(5)):
        assert spec["config"]["aria"] is False and spec["description"].startswith("Line chart of ")
        assert spec["mark"]["aria"] is False  # else an unnamed image to a screen reader (axe: svg-img-alt)
    assert live_curves.objective_spec("f", description="ends at 0.9")["description"] == "ends at 0.9"
    encoding = live_curves.accuracy_spec(5)["encoding"]
    dashes, shapes = encoding["strokeDash"]["scale"]["range"], encoding["shape"]["scale"]["range"]
    assert dashes[0] != dashes[1] and shapes == [colours.SHAPES[0].vega, colours.SHAPES[1].vega]
    assert encoding["color"]["scale"]["range"] == list(colours.PALETTE[:2])
    assert encoding["strokeDash"]["legend"] == encoding["shape"]["legend"] == encoding["color"]["legend"]
    valid_vega_lite(live_curves.accuracy_spec(5), live_curves.accuracy_rows([0, 1], [0.5, 0.7], [0.4, 0.6]))
