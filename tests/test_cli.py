"""The command-line trainer, run as a user would run it."""

import json
import subprocess
import sys

import numpy as np

from nca_core import load_model


def test_train_wine_writes_model_metrics_and_snapshots(tmp_path):
    out = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "nca_core", "train", "--dataset", "wine", "--out", str(out), "--epochs", "5",
         "--standardize", "--device", "cpu", "--snapshots"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "test 5-NN error" in result.stdout
    metrics = json.loads((out / "metrics.json").read_text())
    assert [h["epoch"] for h in metrics["history"]] == list(range(metrics["epochs_run"] + 1))
    assert 0.0 <= metrics["test_error_5nn"] < 0.1
    model = load_model(out / "model.npz")
    assert model.components_.shape == (2, 13)
    with np.load(out / "snapshots.npz", allow_pickle=False) as snaps:
        assert snaps["embeddings"].shape[0] == metrics["epochs_run"] + 1
        assert snaps["embeddings"].shape[2] == 2
    assert sorted(p.name for p in out.iterdir()) == ["metrics.json", "model.npz", "snapshots.npz"]


def test_missing_files_offline_is_a_clear_error(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "nca_core", "train", "--dataset", "mnist", "--out", str(tmp_path / "x"),
         "--data-dir", str(tmp_path / "empty"), "--no-download"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "is missing" in result.stderr
    assert not (tmp_path / "x").exists()
