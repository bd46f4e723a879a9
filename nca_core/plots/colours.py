"""The colours every picture shares: figures, live charts, replay GIFs and regions.

Colours follow class order everywhere, so a class keeps its colour and legend slot on every
page and in every frame.
"""

from __future__ import annotations

__all__ = ["PALETTE", "class_colors"]

# Colour-blind-safe qualitative palette (Okabe-Ito, then Tableau-like extras). No class is
# black or grey, the colours of the lines from a clicked point: Okabe-Ito's black and
# Tableau's grey gave way to Paul Tol's indigo and wine, which stay apart from every other
# entry under simulated deuteranopia and protanopia.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
    "#56B4E9", "#F0E442", "#332288", "#8C564B", "#882255",
    "#17BECF", "#BCBD22", "#9467BD", "#FF9896", "#98DF8A",
)  # fmt: skip


# Plotly's "RdBu" runs from red (low) to blue (high): with zmid=0, positive weights are blue.
DIVERGING_COLORSCALE = "RdBu"
DIVERGING_WORDS = {"positive": "blue", "negative": "red"}

# Points outside Compare's brush (``live_charts``): faint grey, so the chosen ones stand out.
DIMMED_MARKER = {"color": "#B4B4B4", "opacity": 0.15}

# Lines from a chosen point (``figures.neighbour_links``, ``live_picture``), and the words
# captions use for them: black and grey, solid and dashed, colours no class has.
SAME_CLASS_LINE = ("#1A1A1A", "solid black")
OTHER_CLASS_LINE = ("#8C8C8C", "dashed grey")


def class_colors(n_classes: int) -> list[str]:
    """One colour per class index, cycling the palette past 15 classes."""
    return [PALETTE[i % len(PALETTE)] for i in range(n_classes)]
