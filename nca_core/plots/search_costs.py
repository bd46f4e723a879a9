"""The kNN speed page's chart: query time, index size and test error of each k-NN index,
exact and HNSW, raw inputs against NCA. Needs plotly, which comes with the ``app`` extra."""

from __future__ import annotations

from collections.abc import Sequence

try:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots
except ImportError as exc:  # the library alone is installed without plotly
    raise ImportError("nca_core.plots.search_costs needs plotly: pip install 'nca-explorer[app]'") from exc

from ..search.costs import INDEX_LABELS, SearchCost, faster, smaller
from .colours import PALETTE

__all__ = ["search_cost_chart"]

# The height of the band at a Plotly chart's top where its toolbar appears on hover: a
# title placed in it is hidden behind the buttons.
TOOLBAR_BAND = 34


def search_cost_chart(
    costs: Sequence[SearchCost], height: int = 380, noise_seconds: float = 0.0
) -> go.Figure:
    """Query time, index size and test error of each k-NN index, with ratios to the first.

    ``costs`` are ``search.timing.knn_search_cost`` results, the first being the reference
    (raw inputs searched exactly). Spaces (raw, NCA) run along each panel's x axis; each
    index kind (exact, HNSW) is one coloured bar series with a legend entry. Hovering a bar
    gives its value, and for times and sizes how it compares with the reference in words
    ("8.0x faster", "1.3x larger"; "too quick" where both times are under
    ``noise_seconds``). Where every time is under ``noise_seconds`` the time panel says so
    instead of drawing bars of timer noise. Error bars carry the error inside, hidden where
    it does not fit (side by side, two labels ran into one another).
    """
    ref = costs[0]

    def speed(c: SearchCost) -> str:
        if c is ref:
            return "reference"
        if max(c.query_seconds, ref.query_seconds) < noise_seconds:
            return "too quick"
        return faster(ref.query_seconds / c.query_seconds)

    def size(c: SearchCost) -> str:
        return "reference" if c is ref else smaller(ref.stored_bytes / c.stored_bytes)

    titles = ["query time (s)", "index size (MB)", "test error (%)"]  # short: a third of 1024 px each
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.08)
    all_noise = max(c.query_seconds for c in costs) < noise_seconds
    for i, kind in enumerate(dict.fromkeys(c.index for c in costs)):
        group = [c for c in costs if c.index == kind]
        panels = {  # column: values, the words on hover, the label on the bar, the hover's number
            1: ([c.query_seconds for c in group], [speed(c) for c in group], None, "%{y:.3g} s"),
            2: ([c.stored_bytes / 1e6 for c in group], [size(c) for c in group], None, "%{y:.3g} MB"),
            3: ([100 * c.error for c in group], None, [f"{100 * c.error:.2f}%" for c in group], "%{y:.2f}%"),
        }
        if all_noise:
            del panels[1]
        for col, (values, words, labels, number) in panels.items():
            bar = go.Bar(
                x=[c.name for c in group], y=values, text=labels, textposition="inside", textangle=0,
                insidetextanchor="end", hovertext=words, name=INDEX_LABELS[kind], legendgroup=kind,
                showlegend=col == min(panels), marker_color=PALETTE[i % len(PALETTE)],
                hovertemplate=f"%{{x}}: {number}" + ("<br>%{hovertext}" if words else ""),
            )  # fmt: skip
            fig.add_trace(bar, 1, col)
    if all_noise:
        _say_too_quick(fig, noise_seconds)
    fig.update_yaxes(rangemode="tozero", exponentformat="none")  # "0.0004", not "400μ"
    fig.update_layout(
        height=height, barmode="group", legend=dict(orientation="h", y=-0.15),
        margin=dict(l=10, r=10, t=TOOLBAR_BAND + 30, b=10), uniformtext=dict(mode="hide", minsize=9),
    )  # fmt: skip
    return fig


def _say_too_quick(fig: go.Figure, noise_seconds: float) -> None:
    """The time panel (the first) without axes, saying why it has no bars."""
    fig.update_xaxes(visible=False, row=1, col=1)
    fig.update_yaxes(visible=False, row=1, col=1)
    left, right = fig.layout.xaxis.domain
    fig.add_annotation(
        text=f"every search under<br>{noise_seconds * 1e3:.0f} ms: too quick<br>to tell apart",
        xref="paper", yref="paper", x=(left + right) / 2, y=0.5, showarrow=False,
    )  # fmt: skip
