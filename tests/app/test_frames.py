"""The frames a job keeps: thinned past their cap, part-way frames first."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from app_pages.engine.frames import MAX_FRAME_BYTES, FrameBuffer, frame_bytes, progress
from app_pages.engine.jobs import TrainingJob
from app_pages.engine.slots import JobSlots
from nca_core.training.loop import Snapshot


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


def _snapshot(epoch: int, points: int = 5000, d: int = 64, features: int = 5000) -> Snapshot:
    """A frame as large as a 64-D map of an upload's 5,000 columns draws (3.8 MB)."""
    return Snapshot(epoch, 0.5, 0.0, np.zeros((d, features)), np.zeros((points, d), np.float32))


def test_a_buffer_keeps_no_more_frames_than_fit_in_its_bytes():
    size = frame_bytes(_snapshot(0))
    buffer = FrameBuffer(capacity=600, max_bytes=10 * size)
    for epoch in range(100):
        buffer.keep(_snapshot(epoch))
    epochs = [s.epoch for s in buffer.items]
    assert sum(frame_bytes(s) for s in buffer.items) <= 10 * size
    assert epochs[0] == 0 and epochs[-1] == 99 and epochs == sorted(epochs)
    tiny = FrameBuffer(capacity=600, max_bytes=size // 2)  # a frame larger than the budget
    for epoch in range(5):
        tiny.keep(_snapshot(epoch))
    assert [s.epoch for s in tiny.items] == [0, 4]  # the start and the newest


def test_a_jobs_frames_stay_within_the_servers_budget_however_large_each_is():
    def stream(should_stop):
        yield from (_snapshot(epoch) for epoch in range(601))

    job = TrainingJob(stream, JobSlots(1))
    job.join(60)
    assert job.state == "finished" and job.snapshots[-1].epoch == 600
    assert sum(frame_bytes(s) for s in job.snapshots) <= MAX_FRAME_BYTES
