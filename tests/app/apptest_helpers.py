"""Helpers shared by the AppTests (imported by name; conftest modules are not importable
reliably when several test folders have one)."""

from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


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


def click_vega(at: AppTest, key: str, selection: dict) -> AppTest:
    """Send a Vega-Lite chart's selection event (e.g. ``{"pick": [{"row": 17}]}``), then rerun."""
    import json

    from streamlit.proto.WidgetStates_pb2 import WidgetState

    (chart,) = [c for c in at.get("vega_lite_chart") if c.proto.id.endswith(f"-{key}")]
    states = at._tree.get_widget_states()
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps({"selection": selection})))
    return at._run(states)


def vega_chart(at: AppTest, key: str) -> tuple[dict, dict]:
    """The spec and the named tables (as DataFrames) of the Vega-Lite chart keyed ``key``."""
    import json

    import pyarrow as pa

    (chart,) = [c for c in at.get("vega_lite_chart") if c.proto.id.endswith(f"-{key}")]
    tables = {d.name: pa.ipc.open_stream(d.data.data).read_all().to_pandas() for d in chart.proto.datasets}
    return json.loads(chart.proto.spec), tables


# Runs the app in a fresh interpreter in which importing torch or scikit-learn fails, and
# reports what the page drew before it needed them (a first visit to a fresh server waits
# seconds for those imports).
_WITHOUT_HEAVY_IMPORTS = """
import json, sys
from streamlit.testing.v1 import AppTest

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("torch", "sklearn"):
            raise ImportError(f"{name} refused: drawn too early")

sys.meta_path.insert(0, Refuse())
at = AppTest.from_file(sys.argv[1], default_timeout=60)
if sys.argv[2]:
    at.switch_page(sys.argv[2])
at.run()
print(json.dumps({
    "titles": [t.value for t in at.title],
    "selectboxes": [s.label for s in at.selectbox],
    "buttons": [b.label for b in at.button],
    "errors": [e.message for e in at.exception],
}))
"""


def drawn_before_heavy_imports(page: str = "") -> dict:
    """What the app (its default page, or ``page``) draws before it imports torch or
    scikit-learn: titles, select boxes, buttons, and the error that stopped it."""
    import json
    import subprocess
    import sys

    root = Path(APP).parent
    result = subprocess.run(
        [sys.executable, "-c", _WITHOUT_HEAVY_IMPORTS, APP, page],
        capture_output=True, text=True, timeout=300, cwd=root,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
