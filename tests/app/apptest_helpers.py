"""Helpers shared by the AppTests (imported by name; conftest modules are not importable
reliably when several test folders have one)."""

from __future__ import annotations

import time

from streamlit.testing.v1 import AppTest


def wait_for(at: AppTest, condition, timeout: float = 60.0) -> None:
    """Rerun the app until ``condition(at)`` holds, as the page's own polling would."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        at.run()
        if condition(at):
            return
        time.sleep(0.2)
    raise AssertionError("condition not reached within the timeout")


def button(at: AppTest, label: str):
    matches = [b for b in at.button if b.label == label]
    assert matches, f"no button {label!r}; have {[b.label for b in at.button]}"
    return matches[0]


def click_points(at: AppTest, key: str, points: list[dict]) -> AppTest:
    """Send the selection a click on a Plotly chart would (AppTest has no chart widget), then rerun.

    ``points`` are the selected points as the browser reports them, e.g.
    ``[{"curve_number": 0, "point_index": 3, "customdata": 17}]``.
    """
    import json

    from streamlit.proto.WidgetStates_pb2 import WidgetState

    (chart,) = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    states = at._tree.get_widget_states()
    selection = {
        "points": points,
        "point_indices": [p["point_index"] for p in points],
        "box": [],
        "lasso": [],
    }
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps({"selection": selection})))
    return at._run(states)
