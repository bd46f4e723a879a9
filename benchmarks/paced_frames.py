"""Why the Train page's early time-left estimate on MNIST runs high: a minibatch computed right
after the slow-motion start's wait takes longer than one computed straight after another.

Runs the Train page's default MNIST stream (linear map, d = 2, one frame per minibatch) with
no page and no browser, twice in one process: the first frames back to back, then the same
frames each after a wait of the slow-motion start's length (``pacing.SLOW_FRAME_SECONDS``).
Prints the median milliseconds of a frame either way and their ratio; the estimate of the
time left (``RunClock.compute_seconds_per_epoch``) reads the waited frames until the slow
start ends.

    NCA_DATA_DIR=../shared/data .venv/bin/python benchmarks/paced_frames.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app_pages: the page's pace

from compare_sklearn import machine

from app_pages.ui.pacing import SLOW_FRAME_SECONDS, SLOW_FRAMES
from nca_core import datasets
from nca_core.runs.run import Run, recommended_config


def frame_seconds(run: Run, frames: int, wait: float) -> list[float]:
    """Seconds the stream takes for each of its first ``frames`` frames after the start
    frame, with ``wait`` seconds of sleep before each is asked for."""
    stream = run.stream(frames_per_epoch=59, should_stop=lambda: False)
    next(stream)  # the start frame: the run's set-up, left out as the page's clock does
    times = []
    for _ in range(frames):
        time.sleep(wait)
        start = time.monotonic()
        next(stream)
        times.append(time.monotonic() - start)
    stream.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=SLOW_FRAMES, help="frames timed each way")
    args = parser.parse_args()
    data = datasets.load("mnist")
    config = Run(recommended_config(data, 2), data).config
    print(f"Machine: {machine()}; MNIST's default Train page run, {args.frames} frames each way\n")
    print("| frames asked for | median ms a frame |")
    print("| --- | --- |")
    medians = []
    for name, wait in (("back to back", 0.0), (f"after a {SLOW_FRAME_SECONDS} s wait", SLOW_FRAME_SECONDS)):
        medians.append(statistics.median(frame_seconds(Run(config, data), args.frames, wait)) * 1e3)
        print(f"| {name} | {medians[-1]:.1f} |")
    straight, waited = medians
    print(f"\nA waited frame takes {waited / straight:.2f}x a frame computed straight after another.")


if __name__ == "__main__":
    main()
