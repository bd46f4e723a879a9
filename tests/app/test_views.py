"""The live view's redraw policy (app_pages/ui/views.py)."""

from app_pages.ui.views import THREE_D_REDRAW_SECONDS, redraw_seconds


def test_small_sets_redraw_ten_times_a_second_and_large_ones_once():
    assert redraw_seconds(700, 2) == (0.1, 1.0)
    assert redraw_seconds(7291, 2) == (0.2, 1.0)
    assert redraw_seconds(60000, 2) == (1.0, 5.0)


def test_a_live_3d_view_polls_slower_whatever_the_size():
    assert redraw_seconds(700, 3)[0] == THREE_D_REDRAW_SECONDS > redraw_seconds(60000, 2)[0]
