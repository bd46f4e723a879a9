"""Compare's predict, then reveal: the scores stay hidden until the class has guessed.

Learners remember more of a comparison they predicted before seeing its answer, so the
page can draw every method's picture without its accuracies ("Hide scores until Reveal",
``?hide=1`` in a link) and show them at a click. A reveal holds for the view it was made
on: another dataset, k, d or input scaling hides the new scores again.
"""

from __future__ import annotations

import streamlit as st

from app_pages.ui import links

HIDE = "compare-hide"  # the toggle's key
REVEALED = "compare-revealed"  # session key: the view whose scores were revealed


def hide_toggle(row, from_link: dict) -> bool:
    """The toggle, in ``row``, drawn with the link's value the first time."""
    return row.toggle(
        "Hide scores until Reveal", key=HIDE,
        value=links.first_default(HIDE, from_link.get("hide_scores", False)),
        on_change=lambda: st.session_state.pop(REVEALED, None),
        help="Draw every method's picture without its k-NN scores, so the class can guess the "
        "ranking first; Reveal the scores shows them. Add ?hide=1 to the page's address to open it this way.",
    )  # fmt: skip


def hidden(hide: bool, view: dict) -> bool:
    """Whether the scores of ``view`` (the page's settings) are hidden now."""
    return hide and st.session_state.get(REVEALED) != view


def reveal_button(row, view: dict) -> None:
    """The button that shows ``view``'s scores, in ``row``."""
    row.button(
        "Reveal the scores", key="compare-reveal", type="primary", icon=":material/visibility:",
        on_click=lambda: st.session_state.__setitem__(REVEALED, dict(view)),
        help="Show every method's k-NN accuracies, the table and what to notice in them.",
    )  # fmt: skip
