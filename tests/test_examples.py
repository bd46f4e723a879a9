"""The gallery's examples run as they stand, in their small mode, and print their result."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import real_data_dir

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
pytestmark = pytest.mark.slow  # each example starts a Python, and most load MNIST
needs_data = pytest.mark.skipif(real_data_dir() is None, reason="needs the MNIST and USPS files (NCA_DATA_DIR)")


def run(name: str, *options: str) -> str:
    """The example's output in its small mode (NCA_EXAMPLES_FULL unset), checked to exit 0."""
    env = {key: value for key, value in os.environ.items() if key not in ("NCA_EXAMPLES_FULL", "NCA_EXAMPLES_FIGURES")}
    if real_data_dir() is not None:
        env["NCA_DATA_DIR"] = str(real_data_dir())
    done = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py"), *options], capture_output=True, text=True,
                          env=env, timeout=600, cwd=EXAMPLES.parent)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def percent(output: str, label: str) -> float:
    """The first percentage printed on the line that starts with ``label`` (after indentation)."""
    line = next(line for line in output.splitlines() if line.strip().startswith(label))
    return float(re.search(r"([\d.]+)%", line).group(1))


def test_every_example_is_tested_and_says_how_to_run_in_full():
    tested = {"wine_nca_pca_lda", "mnist_32d", "million_points", "deep_usps", "save_and_search"}
    for script in EXAMPLES.glob("*.py"):
        assert script.stem in tested, f"{script.name} has no test"
        text = script.read_text()
        assert "--full" in text and "NCA_EXAMPLES_FULL" in text, f"{script.name} has no full mode"


def test_wine_nca_separates_the_cultivars_better_than_pca(tmp_path):
    output = run("wine_nca_pca_lda", "--figures", str(tmp_path))
    assert "one split, 124 training and 54 test points" in output
    assert percent(output, "NCA 2-D") >= percent(output, "PCA 2-D")
    assert percent(output, "NCA 2-D") >= 90.0
    assert_figure(tmp_path / "wine_nca_pca_lda.png", panels=3)


def assert_figure(path: Path, panels: int) -> None:
    """The example's PNG: the gallery's width, and as many panels side by side as it has
    maps (each framed by two grey lines that run down most of the picture)."""
    from PIL import Image

    image = np.asarray(Image.open(path).convert("RGB"))
    assert image.shape[1] == 1200
    frame = (image == (96, 96, 96)).all(-1).sum(0) > 0.4 * image.shape[0]  # the panels' grey edges
    assert frame.sum() == 2 * panels, f"{frame.sum()} panel edges in {path.name}"


@needs_data
def test_mnist_to_32_dimensions_keeps_the_neighbours_of_the_raw_pixels():
    output = run("mnist_32d")
    assert "5,000 training and 1,000 test images" in output
    assert percent(output, "NCA 32-D") <= percent(output, "raw 784-D")


@needs_data
def test_the_million_point_example_trains_on_nearest_points():
    output = run("million_points")
    assert "61,000 training points, 1 epoch on nearest points" in output
    assert percent(output, "5-NN test error") < 5.0


@needs_data
def test_deep_usps_trains_both_maps_to_better_than_chance(tmp_path):
    output = run("deep_usps", "--figures", str(tmp_path))
    assert_figure(tmp_path / "deep_usps.png", panels=2)
    assert "1,000 training and 2,007 test images" in output
    for name in ("linear NCA", "deep NCA"):
        assert percent(output, name) < 60.0  # chance is 90% error on ten classes


@needs_data
def test_a_saved_model_loads_and_searches_with_an_exact_index():
    output = run("save_and_search")
    assert re.search(r"index: exact \(\w+\)", output)  # 5,000 references: "auto" keeps exact search
    assert percent(output, "1,000 queries") < 10.0
    neighbours = re.search(r"nearest training images are \[([\d, ]+)\]", output).group(1)
    assert len(neighbours.split(",")) == 5
