"""Presentation mode for the Train page: what a lecture hall can read from the back row.

The sidebar and Streamlit's header are hidden, type is larger and the page shows one big
embedding with the run buttons, Step included on a 1024 x 768 projector. It is a toggle
beside them, and ``?present=1`` in the link opens the page in it (``share.read_once``
reads it), so a lecturer can bookmark it. The sidebar is hidden with CSS rather than left out: its widgets
must still be drawn, or Streamlit would forget the run settings chosen in it.
"""

from __future__ import annotations

import streamlit as st

from app_pages.ui import page_style

KEY = "present"

# Selectors are Streamlit's test ids. See ``style`` for why an empty one is drawn too.
_STYLE = """
<style>
  section[data-testid="stSidebar"], header[data-testid="stHeader"],
  [data-testid="stExpandSidebarButton"] { display: none; }
  html { font-size: 20px; }
  [data-testid="stMainBlockContainer"] { padding: 1rem 2rem 1rem; max-width: 100%; }
  [data-testid="stCaptionContainer"] p { font-size: 1.05rem; }
  [data-testid="stWidgetLabel"] p, [data-testid="stMetricLabel"] p, [data-testid="stMetricDelta"] div,
  [data-testid="stAlertContentInfo"] p, [data-testid="stMarkdownContainer"] p { font-size: 1rem; }
</style>
"""

# Chart text sized for a projector, 18 pixels at least (read from the back of a room at
# 1024 x 768): Vega-Lite config and Plotly font.
VEGA_CONFIG = {
    "axis": {"labelFontSize": 18, "titleFontSize": 20},
    "legend": {"labelFontSize": 20, "titleFontSize": 20, "symbolSize": 200},
    "title": {"fontSize": 22},
}
PLOTLY_FONT = {"size": 18}
# What the big chart's place shows, picked beside it: the live picture, the curves, the
# replay (once the run has ended) and epochs side by side.
VIEW_KEY = "present-view"
PICTURE, CURVES, REPLAY, EPOCHS = "Picture", "Curves", "Replay", "Epochs side by side"
VIEWS = (PICTURE, CURVES, REPLAY, EPOCHS)
NAMES_KEY = "present-class-names"  # the toggle that writes class names on the picture
# The 2-D picture fills the window's height below the controls: Streamlit does not tell
# the page the window's size, so CSS sizes the picture's container (``PICTURE_KEY``) and the
# chart stretches to it, between these pixels (the legend and the axes included).
PICTURE_KEY = "present-picture"
PICTURE_HEIGHTS = (400, 1000)
# Pixels of the window the picture leaves: about 190 above it (the buttons and the
# progress) and 80 below it (the regions toggle after a run).
OUTSIDE_PICTURE = 270
# In windows narrower than this the run buttons and the toggle's words do not fit on one
# line (up to about 1127 px with Resume, its longest label; measured in Chromium): the toggle
# would take a line of its own, 60 pixels of a 1024 x 768 projector's picture. There the
# toggle shows its switch and its help alone (its name stays the switch's accessible name),
# and every run button keeps its word.
WORDS_FIT_FROM = 1130
# The plot's own sizes (the legend and axes left out) in windows from 1024 x 768 to about
# 1920 x 1200, over which decision regions must reach every edge.
PLOT_HEIGHTS, PLOT_WIDTHS = (300, 800), (600, 1600)
# A 3-D chart (Plotly) keeps a height that fits a 1024 x 768 projector below the controls.
CHART_HEIGHT = 440
POINT_AREA = 70  # Vega-Lite mark size (square pixels); the page's own is live_charts.POINT_AREA, 50
PLOTLY_MARKER = 9  # Plotly marker diameter in the 3-D view; the page's own is 3 (figures.embedding_scatter)
_PICTURE_BOX = f'[data-testid="stLayoutWrapper"]:has(> .st-key-{PICTURE_KEY})'
_PICTURE_STYLE = (
    f"<style>{_PICTURE_BOX} {{ height: clamp({PICTURE_HEIGHTS[0]}px, calc(100vh - {OUTSIDE_PICTURE}px), {PICTURE_HEIGHTS[1]}px); }}</style>"
)
_NARROW_STYLE = (
    f"<style>@media (max-width: {WORDS_FIT_FROM - 1}px) "
    f'{{ .st-key-{KEY} [data-testid="stWidgetLabel"] p {{ display: none; }} }}</style>'
)


def active() -> bool:
    """Whether the page is presenting (the toggle's state, drawn later in the run)."""
    return bool(st.session_state.get(KEY, False))


def style(presenting: bool) -> None:
    """The mode's CSS while ``presenting``, else the page's compact margins in its place.

    Drawn first on every run. Streamlit replaces an element when a run draws another at
    its place, but removes one that is no longer drawn only when the run ends; meanwhile
    the charts of that run take their type size from the page's (Plotly's theme turns rem
    into pixels once), so turning the mode off left them projector-sized.
    """
    st.html(
        _STYLE + _PICTURE_STYLE + _NARROW_STYLE + page_style.STEADY_BUTTONS + page_style.OUT_OF_FLOW
        if presenting
        else page_style.COMPACT
    )


def title_with_toggle(title: str) -> None:
    """The page's title with the toggle at the end of its line, outside the mode (which has
    no title: the toggle then follows the run buttons). The row below is left to the
    dataset and the run buttons, which fill a 1024-pixel screen beside the sidebar."""
    st.space("small")  # a title in a row loses the top margin it has alone
    line = st.container(horizontal=True, vertical_alignment="center", horizontal_alignment="distribute")
    line.title(title, width="content")
    with line:
        toggle()


def toggle() -> bool:
    return st.toggle(
        "Presentation mode",
        key=KEY,
        help="Presentation mode: large type, no sidebar, one big chart with the run buttons, for a "
        "projector. Add ?present=1 to the page's address to open it this way.",
    )


def big_spec(spec: dict) -> dict:
    """A Vega-Lite spec with projector-sized text, as tall as the container it is drawn in
    (``picture_container``; the points' size, ``POINT_AREA``, is given to
    ``live_picture.picture_spec``)."""
    return {**spec, "height": "container", "config": {**spec.get("config", {}), **VEGA_CONFIG}}


# Pixels of the chart outside its plot: the y axis's labels and title beside it, the
# legend above and the x axis below (at the mode's type sizes, measured in Chromium).
AXES_BESIDE, AXES_ABOVE_AND_BELOW = 90, 120


def picture_width_style(ranges, classes=()) -> str:
    """CSS that makes the picture's box as wide as its data at one scale on both axes need
    at the box's height (``_PICTURE_STYLE``), and no wider than its column: a plot wider
    than its data left the clusters a third of its width on a 1920 x 1080 projector. It is
    as wide as the legend of ``classes`` above it at least (about 11 pixels a letter and 50
    a symbol at the mode's 20-pixel legend type), so no class name is cut off."""
    (x0, x1), (y0, y1) = ranges[0], ranges[1]
    aspect = (x1 - x0) / (y1 - y0) if x1 > x0 and y1 > y0 else 1.0
    height = f"clamp({PICTURE_HEIGHTS[0]}px, calc(100vh - {OUTSIDE_PICTURE}px), {PICTURE_HEIGHTS[1]}px)"
    width = f"calc(({height} - {AXES_ABOVE_AND_BELOW}px) * {aspect:.4f} + {AXES_BESIDE}px)"
    legend = sum(11 * len(str(name)) + 50 for name in classes)
    return (
        f"<style>{_PICTURE_BOX} {{ width: {width}; min-width: min(100%, {legend}px); max-width: 100%; "
        "align-self: center; }</style>"
    )


def picture_container(ranges=None, classes=()):
    """The container the 2-D picture fills, as tall as the window leaves below the controls
    and, given the picture's ``ranges``, as wide as they need (``picture_width_style``)."""
    if ranges is not None:
        st.html(picture_width_style(ranges, classes))
    return st.container(key=PICTURE_KEY)


def view_picker() -> str:
    """What the big chart's place shows (``VIEWS``), picked by the lecturer; the picture
    until then."""
    return st.radio(
        "Show", VIEWS, key=VIEW_KEY,
        help="The live picture, the accuracy and objective curves, the replay of the run, or "
        "chosen epochs side by side on one scale.",
    )  # fmt: skip


def class_names_toggle() -> bool:
    """The toggle, drawn with the picture only; its state is kept apart (``NAMES_KEY``), so
    it holds while another view is shown (a widget not drawn loses its own)."""
    return st.toggle(
        "Class names on the picture", key=NAMES_KEY + "-toggle", value=class_names_on(),
        on_change=lambda: st.session_state.__setitem__(NAMES_KEY, st.session_state[NAMES_KEY + "-toggle"]),
        help="Each class's name at the centre of its points, following them as they move.",
    )  # fmt: skip


def other_view(view: str, active, data, title: str, running: bool) -> None:
    """The curves, the replay or epochs side by side in the big chart's place, with type
    sized for a projector."""
    if view == CURVES:
        _curves(active)
    elif view == REPLAY:
        if running:
            st.info("The replay is ready once the run has ended.", icon=":material/hourglass_top:")
            return
        from nca_core.plots import replay  # loads torch: not at the page's top

        fig = replay.animation(active.snapshots, active.run.display_labels, data.classes, title=title, height=CHART_HEIGHT)
        st.plotly_chart(projector_type(fig), key="present-replay")
    else:
        from app_pages.ui.train import epochs  # loads torch: not at the page's top

        epochs.side_by_side(active, data, title, choose=False, big=True)


def _curves(active) -> None:
    """The objective and the k-NN accuracy against epoch, side by side, whole epochs only."""
    from nca_core.plots import live_curves  # loads torch: not at the page's top

    snaps = [s for s in active.snapshots if s.fraction >= 1.0]
    config, epochs = active.run.config, [s.epoch for s in snaps]
    objective, accuracy = st.columns(2)
    height = CHART_HEIGHT - 40
    objective.vega_lite_chart(
        live_curves.objective_rows(epochs, [s.objective for s in snaps]),
        {**live_curves.objective_spec(config.objective, height=height), "config": VEGA_CONFIG},
        key="present-objective-curve",
    )
    accuracy.vega_lite_chart(
        live_curves.accuracy_rows(epochs, [s.train_accuracy for s in snaps], [s.test_accuracy for s in snaps]),
        {**live_curves.accuracy_spec(config.k, height=height), "config": VEGA_CONFIG},
        key="present-accuracy-curve",
    )


def class_names_on() -> bool:
    """Whether the picture names its classes (``class_names_toggle``'s state)."""
    return bool(st.session_state.get(NAMES_KEY, False))


def projector_type(fig):
    """``fig`` (Plotly) with every text at ``PLOTLY_FONT``'s size or more: the replay sets
    its own smaller sizes for ticks, legend, slider and buttons."""
    size = PLOTLY_FONT["size"]
    fig.update_layout(font=PLOTLY_FONT, legend={"font": {"size": size + 2}, "title": {"font": {"size": size + 2}}})
    fig.update_xaxes(tickfont_size=size, title_font_size=size + 2)
    fig.update_yaxes(tickfont_size=size, title_font_size=size + 2)
    for slider in fig.layout.sliders:
        slider.font = {"size": size}
        slider.currentvalue.font = {"size": size}
    for menu in fig.layout.updatemenus:
        menu.font = {"size": size}
    if fig.layout.title.text:
        fig.update_layout(title_font_size=size + 4)
    return fig
