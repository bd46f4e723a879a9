"""The colours every picture shares: figures, live charts, replay GIFs and regions.

Colours follow class order everywhere, so a class keeps its colour and legend slot on every
page and in every frame.
"""

from __future__ import annotations

__all__ = ["PALETTE", "class_colors"]

# Ten class colours that every viewer can tell apart, chosen by a search over sRGB for the
# largest least difference (tests/plots/test_colours.py checks each bound):
# - every pair at least LEAST_DIFFERENCE apart in CIEDE2000 (about 1 is just noticeable side
#   by side), with normal vision and under simulated deuteranopia, protanopia and tritanopia
#   (Machado, Oliveira and Fernandes 2009, full severity); the closest pairs, at about 12.7,
#   are maroon and brown (deuteranopia), orange and green (protanopia), plum and indigo
#   (tritanopia); with normal vision every pair is at least 19.8 apart;
# - each at least LEAST_CONTRAST against the white page (WCAG 2.1's floor for graphical
#   objects; the green is the lightest, at 3.01), so no mark fades into the paper as
#   Okabe-Ito's yellow did (1.3);
# - none black or grey, and each more than 25 (CIE76) from the colours of the lines from a
#   clicked point, under every simulation.
# Past ten classes the colours repeat.
LEAST_DIFFERENCE, LEAST_CONTRAST = 12.0, 3.0
PALETTE = (
    "#2932FF", "#EA6800", "#820000", "#68415B", "#D05CFD",
    "#275B41", "#1A759C", "#91570D", "#21AA5F", "#4E0079",
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
    """One colour per class index, cycling the palette past ten classes."""
    return [PALETTE[i % len(PALETTE)] for i in range(n_classes)]
