"""The Train page's MNIST run on a chosen device, with no browser: what the live view gets.

Builds the job the Train page starts (``app_pages.ui.train.runs.new_job``: the page's default
MNIST run, a linear map to d = 2, with the page's share of torch threads) on ``--device``,
at the sidebar's default pace (slow-motion start, 10 frames a second cap) and at full speed,
and follows it as the page does: the frames the job keeps are polled every 5 ms, and every
``views.redraw_seconds`` (1 s for MNIST) the latest frame's 2-D picture is built as the
page's redraw builds it (its Vega-Lite spec and point table, Arrow-encoded). For each pace it
prints the seconds from Train to the start frame, new frames and epochs per second over a
watch window, pictures drawn per second, the median seconds to build one, and the seconds
from Stop to the job's end. ``--devices cuda cpu`` runs it on both, one after the other, on
the same machine.

    NCA_DATA_DIR=/path/to/data python benchmarks/app_device.py --devices cuda cpu
    NCA_DATA_DIR=/path/to/data python benchmarks/app_device.py --quick      # watched 2 s; kept nowhere

The table is kept in results/app_device.json (``_results``) under the devices.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # app_pages: the page's job and pace

from _results import Table, machine

from app_pages.engine.frames import progress
from app_pages.engine.jobs import JobState
from app_pages.engine.pacing import Pace
from app_pages.engine.slots import JobSlots
from app_pages.ui.train.live_status import redraw_seconds
from app_pages.ui.train.runs import new_job, slot_capacity, turn_capacity
from nca_core import datasets
from nca_core.plots import axes, live_picture
from nca_core.runs.run import Run, recommended_config

PACES = {"page default": Pace(10.0, True), "full speed": Pace(0.0, False)}
POLL_SECONDS = 0.005


def frame_build_seconds(run: Run, snapshots: list, settling: axes.SettlingRanges) -> float:
    """Seconds to build the picture of the latest frame as the page's redraw does (the axes
    carried on from the frames seen before, the spec, the point table with its Arrow encoding)."""
    import pyarrow as pa

    start = time.perf_counter()
    ranges = settling.ranges(snapshots, points=lambda s: s.embedding[:, :2])
    spec = live_picture.picture_spec(run.data.classes, ranges, height=axes.picture_height(ranges))
    rows = live_picture.picture_rows(snapshots[-1].embedding, run.display_labels, run.data.classes, run.display_index)
    live_picture.picture_data(spec, rows)
    pa.Table.from_pandas(rows)
    return time.perf_counter() - start


def follow(run: Run, pace: Pace, watch: float, redraw: float) -> dict:
    """Start the page's job, watch it for ``watch`` seconds after its start frame (or to its
    end), noting each new frame (polled every ``POLL_SECONDS``) and building the latest
    frame's picture every ``redraw`` seconds as the page's redraw does; then Stop it."""
    job = new_job(run, pace, JobSlots(slot_capacity()), turns=JobSlots(turn_capacity()))
    started = time.perf_counter()
    while not job.snapshots and job.alive:
        time.sleep(POLL_SECONDS)
    first = time.perf_counter() - started
    job.drawn()  # the page tells the job its start frame is on screen
    seen, drawn, frames, builds = job.latest, job.latest, 0, []
    settling = axes.SettlingRanges()
    done_at_start = progress(seen) if seen is not None else 0.0
    watch_start = next_redraw = time.perf_counter()
    while job.alive and time.perf_counter() - watch_start < watch:
        latest = job.latest
        if latest is not seen:
            seen, frames = latest, frames + 1
        if time.perf_counter() >= next_redraw:
            next_redraw += redraw
            if latest is not drawn:
                drawn = latest
                builds.append(frame_build_seconds(run, job.snapshots, settling))
        time.sleep(POLL_SECONDS)
    watched = time.perf_counter() - watch_start
    epochs = progress(job.latest) - done_at_start if job.latest is not None else 0.0
    stop_at = time.perf_counter()
    running = job.alive
    job.stop()
    job.join(timeout=30)
    stop = time.perf_counter() - stop_at
    if job.state == JobState.FAILED:
        raise SystemExit(f"the run failed: {job.error}")
    return {
        "first": first, "watched": watched, "frames": frames, "epochs": epochs, "drawn": len(builds),
        "build": statistics.median(builds) if builds else float("nan"), "threads": job.threads,
        "stop": stop if running else None, "state": str(job.state), "device": run.model.device_,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", nargs="+", default=["auto"], help="cpu, cuda or auto (the page's choice)")
    parser.add_argument("--watch", type=float, default=10.0, help="seconds each run is watched before Stop")
    parser.add_argument("--quick", action="store_true", help="each run watched 2 s; kept nowhere")
    args = parser.parse_args()
    watch = 2.0 if args.quick else args.watch
    data = datasets.load("mnist")
    picture_every, _ = redraw_seconds(len(data.y_train), 2)
    gpu = next((d for d in args.devices if d.startswith("cuda")), "cpu")
    print(f"machine: {machine(gpu)}")
    table = Table("app_device", "+".join(args.devices), ["pace", "device", "torch threads", "start frame (s)",
                  "new frames / s", "epochs / s", "pictures drawn / s", "picture build (ms)", "Stop to end (s)", "state"],
                  device=gpu, keep=not args.quick)  # fmt: skip
    for device in args.devices:
        config = recommended_config(data, 2).replace(device=device)
        table.notes = table.notes or [
            f"MNIST's default Train page run ({config.max_iter} epochs, batch {config.batch_size}, d = 2), "
            f"watched {watch:g} s; the page redraws the picture every {picture_every:g} s"]  # fmt: skip
        for name, pace in PACES.items():
            got = follow(Run(config, data), pace, watch, picture_every)
            watched = got["watched"]
            stop = "ended first" if got["stop"] is None else f"{got['stop']:.3f}"
            table.add(name, got["device"], got["threads"], f"{got['first']:.2f}", f"{got['frames'] / watched:.1f}",
                      f"{got['epochs'] / watched:.2f}", f"{got['drawn'] / watched:.2f}", f"{got['build'] * 1e3:.1f}",
                      stop, got["state"])  # fmt: skip
    print(f"\n{table.notes[0]}")
    table.save()

if __name__ == "__main__":
    main()
