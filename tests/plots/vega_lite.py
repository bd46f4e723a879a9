"""What the Vega-Lite chart tests share: class names, and Altair's check of a spec."""

import altair as alt

CLASSES = ["ring 1", "ring 2", "ring 3"]


def valid_vega_lite(spec: dict, rows) -> None:
    """Altair checks the spec against the Vega-Lite JSON schema."""
    chart = alt.Chart.from_dict({**spec, "data": {"values": rows.to_dict("records")}})
    chart.to_dict(validate=True)
