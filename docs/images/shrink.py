"""Make a screenshot small enough to commit: ``take.py`` passes each shot it takes here.

Each is cropped to its first screen (900 pixels tall, the window's height), scaled to 960
pixels wide and stored with a 160-colour palette, about a fifth of the full-size file.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image

WIDTH, FIRST_SCREEN, COLOURS = 960, 900, 160


def shrink(source: Path, target: Path) -> None:
    with Image.open(source) as image:
        image = image.convert("RGB").crop((0, 0, image.width, min(image.height, FIRST_SCREEN)))
        image = image.resize((WIDTH, round(image.height * WIDTH / image.width)), Image.LANCZOS)
        image.quantize(COLOURS, dither=Image.Dither.NONE).save(target, optimize=True)
