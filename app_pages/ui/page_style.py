"""Page margins for charts on the first screen.

Streamlit's wide layout pads the page by 6rem above and 5rem at the sides, and a heading
by 1.5rem: at 1024 x 768 beside the sidebar that left the Train page's picture and
Compare's panels below the fold.
"""

from __future__ import annotations

import streamlit as st

# Pause and Resume are one button: as wide as "Resume" (6 rem at either type size) both
# ways, so that Step and Stop do not move under the pointer when Pause is clicked.
STEADY_BUTTONS = "<style>.st-key-pause-resume button { min-width: 6.1rem; }</style>"

# Out of sight but read by screen readers (a live region, a heading over the panels): not
# hidden, which would take them from the accessibility tree too.
VISUALLY_HIDDEN = (
    "position:absolute;width:1px;height:1px;margin:-1px;padding:0;border:0;"
    "overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap"
)

# The live region's container (``live_status.live_region``) is out of sight and out of the
# page's flow, whatever state its markdown is in: laid out before its HTML was rendered, the
# markdown took a line's height and pushed the row of numbers and the picture down.
LIVE_REGION_KEY = "live-region"
OUT_OF_FLOW = f"<style>.st-key-{LIVE_REGION_KEY} {{ {VISUALLY_HIDDEN} }}</style>"

COMPACT = """
<style>
  [data-testid="stMainBlockContainer"] { padding: 2.5rem 1.5rem 4rem; }
  [data-testid="stMainBlockContainer"] h1 { font-size: 2rem; padding-bottom: 0.25rem; }
  [data-testid="stMainBlockContainer"] h3 { padding: 0 0 0.25rem; }
  /* A run's status takes two lines' height whether it wraps or not: a status that wrapped
     as a run went on (a longer time left) pushed the picture below it down */
  [data-testid="stMainBlockContainer"] [data-testid="stProgress"] p { min-height: 2lh; }
</style>
""" + STEADY_BUTTONS + OUT_OF_FLOW


def compact() -> None:
    """Draw the compact margins (once per page run, before anything else)."""
    st.html(COMPACT)
