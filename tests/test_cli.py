"""The command line, run as a user would run it: the trainer, and the command that serves the app."""

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from nca_core import load_model
from tests.without import run_without


def test_train_wine_writes_model_metrics_and_snapshots(tmp_path):
    out = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "nca_core", "train", "--dataset", "wine", "--out", str(out), "--max-iter", "5",
         "--standardize", "--device", "cpu", "--snapshots"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "test 5-NN error" in result.stdout and result.stdout.rstrip().endswith(" s on cpu")
    assert "NCA wine on cpu:" in result.stderr  # the progress bar names the device that trains
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["device"] == "cpu"
    assert [h["epoch"] for h in metrics["history"]] == list(range(metrics["epochs_run"] + 1))
    assert 0.0 <= metrics["test_error_5nn"] < 0.1
    model = load_model(out / "model.npz")
    assert model.components_.shape == (2, 13)
    with np.load(out / "snapshots.npz", allow_pickle=False) as snaps:
        assert snaps["embeddings"].shape[0] == metrics["epochs_run"] + 1
        assert snaps["embeddings"].shape[2] == 2
    assert sorted(p.name for p in out.iterdir()) == ["metrics.json", "model.npz", "snapshots.npz"]


def _refused(tmp_path, *flags: str) -> str:
    """stderr of a wine training the CLI refuses (exit 2) before writing anything."""
    out = tmp_path / "refused"
    command = [sys.executable, "-m", "nca_core", "train", "--dataset", "wine", "--out", str(out), *flags]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and not out.exists()
    return result.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present: nothing to refuse")
def test_a_gpu_this_machine_lacks_is_refused_plainly_before_training(tmp_path):
    stderr = _refused(tmp_path, "--device", "cuda")
    assert "error: device 'cuda' was requested but CUDA is not available here" in stderr
    assert "available: cpu" in stderr
    assert "NCA wine" not in stderr  # refused before the progress bar


def test_the_cli_and_the_app_give_the_same_model_for_the_same_settings(tmp_path):
    """Both train through runs.Run: same recommended settings, a model that takes raw inputs."""
    from nca_core import datasets
    from nca_core.runs.run import Run, recommended_config

    out = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "nca_core", "train", "--dataset", "wine", "--out", str(out), "--max-iter", "4",
         "--device", "cpu", "--eval-every", "0"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    wine = datasets.load("wine")
    config = recommended_config(wine).replace(max_iter=4, device="cpu")
    assert config.standardize  # wine's units differ: both paths standardise
    run = Run(config, wine)
    for _ in run.stream(eval_every=None):
        pass
    from_cli, from_app = load_model(out / "model.npz"), load_model(io.BytesIO(run.model_file()))
    np.testing.assert_allclose(from_cli.components_, from_app.components_, rtol=1e-6)
    # the file takes raw inputs where the run takes them: standardised, centred, mapped
    np.testing.assert_allclose(from_cli.center_, from_app.center_, rtol=1e-6)
    Z = run.transform(wine.X_test)
    np.testing.assert_allclose(from_cli.transform(wine.X_test), Z, rtol=0, atol=1e-5 * np.abs(Z).max())
    settings = json.loads((out / "metrics.json").read_text())["settings"]
    assert {k: settings[k] for k in config.as_dict()} == json.loads(json.dumps(config.as_dict()))  # sizes: a list


@pytest.mark.parametrize(
    "flags", [(), ("--encoder", "mlp", "--hidden-sizes", "16,16")], ids=["map", "network"]
)
def test_model_npz_maps_the_drawn_rows_to_their_embedding_in_snapshots_npz(tmp_path, flags):
    """Wine with its defaults (standardised): the model file, given the raw rows that
    snapshots.npz draws, gives back their last embedding."""
    from nca_core import datasets

    out = tmp_path / "run"
    result = subprocess.run(
        [sys.executable, "-m", "nca_core", "train", "--dataset", "wine", "--out", str(out), "--max-iter", "3",
         "--device", "cpu", "--eval-every", "0", "--snapshots", *flags],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    wine = datasets.load("wine")
    model = load_model(out / "model.npz")
    with np.load(out / "snapshots.npz", allow_pickle=False) as snaps:
        picture, labels = snaps["embeddings"][-1], snaps["labels"]
        rows = np.arange(len(wine.y_train))  # wine's 125 training rows are all drawn, in order
        np.testing.assert_array_equal(labels, wine.y_train[rows])
        reach = np.abs(picture).max()
        np.testing.assert_allclose(model.transform(wine.X_train[rows]), picture, rtol=0, atol=1e-5 * reach)
        np.testing.assert_array_equal(snaps["index"], rows)  # which rows are drawn, for larger sets


def test_flags_are_checked_against_the_settings_declaration(tmp_path):
    assert "--learning-rate: '0' must be a number from 1e-05 to 1000" in _refused(tmp_path, "--learning-rate", "0")


def test_whole_number_flags_are_not_bound_to_the_apps_grids():
    from nca_core.cli import _parser

    args = _parser().parse_args(["train", "--dataset", "usps", "--out", "x", "--n-components", "30",
                                 "--max-iter", "500", "--batch-size", "100"])  # fmt: skip
    assert (args.n_components, args.max_iter, args.batch_size) == (30, 500, 100)
    with pytest.raises(SystemExit):
        _parser().parse_args(["train", "--dataset", "usps", "--out", "x", "--max-iter", "0"])


def test_missing_files_offline_is_a_clear_error(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "nca_core", "train", "--dataset", "mnist", "--out", str(tmp_path / "x"),
         "--data-dir", str(tmp_path / "empty"), "--no-download"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "is missing" in result.stderr
    assert not (tmp_path / "x").exists()


def _train_usps(tmp_path, name, launcher, extra=()):
    out = tmp_path / name
    command = [*launcher, "-m", "nca_core", "train", "--dataset", "usps", "--out", str(out), "--no-download",
               "--max-iter", "10", "--n-components", "10", "--optimizer", "lbfgs", "--device", "cpu",
               "--eval-every", "0", *extra]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((out / "metrics.json").read_text()), result


def test_two_processes_under_torchrun_train_like_one(tmp_path, data_dir, monkeypatch):
    """Data-parallel L-BFGS on USPS with 2 gloo processes: same objective, same test error."""
    monkeypatch.setenv("NCA_DATA_DIR", str(data_dir))
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    two, result = _train_usps(tmp_path, "two", torchrun)
    one, _ = _train_usps(tmp_path, "one", [sys.executable])
    assert two["world_size"] == 2 and one["world_size"] == 1
    assert "x2 processes" in result.stderr and result.stdout.count("wrote") == 1  # rank 0 reports
    objective_two = [h["objective"] for h in two["history"]]
    objective_one = [h["objective"] for h in one["history"]]
    assert len(objective_two) == len(objective_one) == 11
    np.testing.assert_allclose(objective_two, objective_one, rtol=1e-4)
    assert objective_two[-1] > objective_two[0] + 0.01
    assert abs(two["test_error_5nn"] - one["test_error_5nn"]) <= 0.005
    assert load_model(tmp_path / "two" / "model.npz").components_.shape == (10, 256)


def test_data_parallel_refuses_what_it_cannot_shard(tmp_path, data_dir, monkeypatch):
    monkeypatch.setenv("NCA_DATA_DIR", str(data_dir))
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    out = tmp_path / "bank"
    result = subprocess.run(
        [*torchrun, "-m", "nca_core", "train", "--dataset", "usps", "--out", str(out), "--no-download",
         "--max-iter", "1", "--encoder", "mlp", "--optimizer", "adam", "--neighbors", "memory", "--device", "cpu"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode != 0
    assert "data-parallel training supports objectives f and g" in result.stderr
    assert not out.exists()


def test_app_help_names_its_options_and_streamlits_own():
    for launcher in ([sys.executable, "-m", "nca_core"], [str(Path(sys.executable).parent / "nca-explorer")]):
        result = subprocess.run([*launcher, "app", "--help"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert "--port PORT" in result.stdout and "--address ADDRESS" in result.stdout
        assert "--server.maxUploadSize 100" in result.stdout  # Streamlit's options pass through


def test_the_app_command_runs_the_packaged_script_with_the_options_given():
    import app_pages
    from nca_core.cli import _parser, app_command, app_script

    assert app_script() == Path(app_pages.__file__).parent / "main.py"
    args, extra = _parser().parse_known_args(
        ["app", "--port", "8600", "--address", "0.0.0.0", "--server.maxUploadSize", "100", "--theme.base=dark"]
    )
    assert app_command(args, extra) == [
        sys.executable, "-m", "streamlit", "run", str(app_script()), "--server.address", "0.0.0.0",
        "--server.port", "8600", "--server.maxUploadSize", "100", "--theme.base=dark",
    ]  # fmt: skip
    args, extra = _parser().parse_known_args(["app"])  # the packaged settings' address and port
    assert app_command(args, extra) == [sys.executable, "-m", "streamlit", "run", str(app_script())]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--bogus"], "error: unrecognized option --bogus: `nca-explorer app` takes --port, --address and"),
        (["--port", "http"], "argument --port: 'http' is not a port number (1 to 65535)"),
        (["--port", "70000"], "argument --port: '70000' is not a port number (1 to 65535)"),
    ],
    ids=["unknown option", "a word for a port", "a port out of range"],
)
def test_the_app_command_refuses_what_it_cannot_pass_on_before_serving(flags, message):
    result = subprocess.run(
        [sys.executable, "-m", "nca_core", "app", *flags], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2 and message in result.stderr
    assert "Traceback" not in result.stderr and "streamlit" not in result.stdout.lower()


def test_train_still_refuses_options_it_does_not_know(tmp_path):
    assert "unrecognized arguments: --server.port 8600" in _refused(tmp_path, "--server.port", "8600")


def test_the_app_without_streamlit_says_which_extra_to_install():
    code = (
        "import contextlib, io, json\nfrom nca_core.cli import main\nerr = io.StringIO()\n"
        "with contextlib.redirect_stderr(err):\n    status = main(['app', '--port', '8600'])\n"
        "print(json.dumps([status, err.getvalue()]))\n"
    )
    status, stderr = run_without("streamlit", code)
    assert status == 2
    assert stderr == (
        "error: the app needs Streamlit, which comes with the app extra: pip install 'nca-explorer[app]'\n"
    )
