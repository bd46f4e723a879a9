"""The frames a job keeps: thinned past their cap, part-way frames first."""

from __future__ import annotations

from types import SimpleNamespace

from app_pages.ui.frames import FrameBuffer, progress


def _frame(epoch: int, fraction: float = 1.0):
    return SimpleNamespace(epoch=epoch, fraction=fraction)


def test_part_way_frames_go_before_whole_epochs_and_the_newest_is_always_kept():
    buffer = FrameBuffer(capacity=6)
    frames = [_frame(0), _frame(1, 0.5), _frame(1), _frame(2, 0.5), _frame(2), _frame(3, 0.5)]
    for frame in frames:
        buffer.keep(frame)
    newest = _frame(3)
    buffer.keep(newest)
    assert [progress(f) for f in buffer.items] == [0, 0.5, 1, 2, 2.5, 3]  # the second part-way (1.5) dropped
    assert buffer.latest is newest and len(buffer.items) <= buffer.capacity


def test_once_only_whole_epochs_are_left_every_other_goes_the_first_kept():
    buffer = FrameBuffer(capacity=4)
    for epoch in range(5):
        buffer.keep(_frame(epoch))
    assert [f.epoch for f in buffer.items] == [0, 2, 4]
