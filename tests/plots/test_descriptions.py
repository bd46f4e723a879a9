"""The words a screen reader reads for each chart (``descriptions``)."""

from nca_core.plots import colours, descriptions


def test_the_class_key_names_each_class_with_its_shape_in_class_order():
    assert descriptions.class_key(["ring 1"]) == "ring 1 as circles"
    assert descriptions.class_key(["a", "b", "c"]) == "a as circles, b as squares and c as triangles"
    key = descriptions.class_key([str(k) for k in range(11)])
    assert "4 as pluses" in key and "7 as crosses" in key and key.endswith("and 10 as hollow diamonds")
    for k, shape in enumerate(colours.class_shapes(11)):
        assert f"{k} as {shape.name}" in key


def test_past_twelve_classes_the_others_are_counted_not_read_out():
    key = descriptions.class_key([f"person {k}" for k in range(40)])
    assert key.count(" as ") == descriptions.NAMED_CLASSES and key.endswith("and 28 more classes")
    assert descriptions.class_key([f"c{k}" for k in range(13)]).endswith("and 1 more class")


def test_an_embeddings_description_says_what_how_many_and_how_each_class_is_drawn():
    words = descriptions.embedding_description("NCA's embedding of wine", ["cultivar 1", "cultivar 2"], 1234)
    assert words == (
        "Scatter plot of NCA's embedding of wine: 1,234 points of 2 classes on axes z1 and z2, at one "
        "scale. Each class has a colour and a shape: cultivar 1 as circles and cultivar 2 as squares."
    )


def test_a_curves_description_gives_each_lines_start_and_end_and_skips_what_was_not_measured():
    words = descriptions.curve_description(
        "the 5-NN accuracy", [0, 1, 2], {"leave-one-out": [0.5, 0.7, 0.9], "test": [None, 0.6, 0.85]},
        fmt=lambda v: f"{v:.0%}",
    )  # fmt: skip
    assert words == (
        "Line chart of the 5-NN accuracy against epoch: leave-one-out from 50% at epoch 0 to 90% at "
        "epoch 2; test from 60% at epoch 1 to 85% at epoch 2."
    )
    assert descriptions.curve_description("f", [], {"f": []}) == "Line chart of f against epoch: no epoch yet."
