"""Screenshots the browser tests took (test-artifacts/), made small enough to commit.

Each is cropped to the first screen (1440 x 900 of the tests' 1440 x 1250 pages), scaled
to 960 pixels wide and stored with a 160-colour palette. `make docs-images` runs the tests
that take these shots, then this script.

    python docs/images/shrink.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[2]
SHOTS = {  # test-artifacts/<name>.png, taken by the browser test named, -> docs/images/<name>.png
    "train-finished": "tests/e2e/test_training_in_browser.py::test_train_watch_stop_replay_download",
    "train-mnist-live": "tests/e2e/test_live_frames.py::test_mnist_draws_frames_within_an_epoch_and_stops_part_way_through_one",
    "compare-brushed": "tests/e2e/test_compare_and_upload.py::test_a_box_over_one_panel_highlights_the_same_points_in_every_panel",
    "upload-error": "tests/e2e/test_compare_and_upload.py::test_upload_bad_then_good_csv",
}
WIDTH, FIRST_SCREEN, COLOURS = 960, 900, 160


def shrink(source: Path, target: Path) -> None:
    with Image.open(source) as image:
        image = image.convert("RGB").crop((0, 0, image.width, min(image.height, FIRST_SCREEN)))
        image = image.resize((WIDTH, round(image.height * WIDTH / image.width)), Image.LANCZOS)
        image.quantize(COLOURS, dither=Image.Dither.NONE).save(target, optimize=True)


def main() -> int:
    if "--tests" in sys.argv:  # the pytest node ids, for make docs-images
        print(" ".join(SHOTS.values()))
        return 0
    for name in SHOTS:
        source = REPO / "test-artifacts" / f"{name}.png"
        if not source.exists():
            print(f"{source.relative_to(REPO)} is missing: run its browser test ({SHOTS[name]})")
            return 1
        target = Path(__file__).parent / f"{name}.png"
        shrink(source, target)
        print(f"{target.relative_to(REPO)}: {target.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
