"""nca-explorer (or python -m nca_core): train NCA from the command line, or serve the app.

``nca-explorer app`` serves the Streamlit app that the package carries (``app_pages``; needs the
``app`` extra) from any folder, with its own server settings; any of Streamlit's options may
follow (``--server.maxUploadSize 100``, ``--theme.base dark``).

``nca-explorer train`` trains NCA on a registered dataset. The run settings' flags are generated from ``config.settings.SETTINGS`` (the same declaration as
the app's controls); a flag left out takes the value recommended for the dataset, as the
app's sidebar does. Training goes through ``runs.run.Run``, as in the app, so the model file
(.npz, see ``nca_core.estimator.model_io``) takes raw inputs to the run's embedding, its
centring and any standardisation included. Also writes a metrics JSON (settings, per-epoch
objective and kNN accuracies, final kNN test error, timings) and, with ``--snapshots``, the
display embeddings of every epoch with the training rows they are (``index``).
Progress is a tqdm bar on stderr.

Launched by ``torchrun --nproc_per_node=N -m nca_core train ...`` it trains data-parallel
(see ``nca_core.training.distributed``): every process loads the data, rank 0 reports and writes.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from .util.files import write_atomic

__all__ = ["main"]

# Per-epoch kNN accuracies on at most this many points (the app uses fewer, to stay live).
CLI_EVAL_POINTS = 10000


def _parser() -> argparse.ArgumentParser:
    from .config.settings import SETTINGS
    from .datasets import REGISTRY

    parser = argparse.ArgumentParser(prog="nca-explorer", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    _add_app_command(commands)
    train = commands.add_parser("train", help="train NCA on a dataset and save the model and metrics")
    train.add_argument("--dataset", required=True, choices=list(REGISTRY))
    train.add_argument("--out", required=True, type=Path, help="folder for model.npz and metrics.json")
    train.add_argument(
        "--data-dir", type=Path, help="data directory (default: $NCA_DATA_DIR or the user cache)"
    )
    train.add_argument("--no-download", action="store_true", help="fail instead of downloading missing files")
    train.add_argument(
        "--eval-every", type=int, default=1, help="epochs between kNN measurements (0: only at the end)"
    )
    train.add_argument("--snapshots", action="store_true", help="also write every epoch's display embedding")
    settings = train.add_argument_group("run settings (default: recommended for the dataset)")
    for setting in SETTINGS:
        _add_flag(settings, setting)
    return parser


def _add_flag(group, setting) -> None:
    from .config.settings import parse_flag

    if setting.kind is bool:
        group.add_argument(setting.flag, action=argparse.BooleanOptionalAction, help=setting.help)
        return
    if setting.kind is tuple:
        metavar = "SIZES"
    elif setting.parser is not None:
        metavar = "VALUE"
    elif setting.choices:
        metavar = "{" + ",".join(map(str, setting.choices)) + "}"
    else:
        metavar = setting.kind.__name__.upper()
    text = (
        setting.help if setting.choices or setting.low is None else f"{setting.help} ({setting.describe()})"
    )
    group.add_argument(setting.flag, type=parse_flag(setting), metavar=metavar, help=text)


# Streamlit's own options, passed through to `streamlit run`: --section.option or --section.option=value.
_STREAMLIT_OPTION = re.compile(r"--[A-Za-z]+\.[A-Za-z]+(=.*)?")


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1 to 65535)")
    return int(text)


def _add_app_command(commands) -> None:
    app = commands.add_parser(
        "app",
        help="serve the app in the browser (needs the app extra)",
        description="Serve NCA Explorer's Streamlit app on http://ADDRESS:PORT, from any folder.",
        epilog="Any of Streamlit's own options may follow, as `streamlit run` takes them, for example "
        "--server.maxUploadSize 100 or --theme.base=dark (`streamlit run --help` lists them). The app's "
        "own server settings (app_pages/.streamlit/config.toml in the installed package) apply "
        "unless an option given here changes them. Ctrl+C stops the server.",
        allow_abbrev=False,
    )
    app.add_argument("--port", type=_port, help="the port to serve on (default: 8501, or the next free one)")
    app.add_argument(
        "--address", help="the address to serve on (default: 127.0.0.1, this machine only; read the "
        "docs' Security page before 0.0.0.0)",
    )  # fmt: skip


def app_script() -> Path:
    """The script Streamlit runs for the app: ``app_pages/main.py`` of the installed package,
    found without importing it (the library never imports the app)."""
    spec = importlib.util.find_spec("app_pages")
    if spec is None or spec.origin is None:
        raise ValueError("the app's package, app_pages, is not installed beside nca_core")
    return Path(spec.origin).parent / "main.py"


def app_command(args: argparse.Namespace, streamlit_options: list[str]) -> list[str]:
    """``python -m streamlit run`` on the app's script, with the address, the port and
    Streamlit's own options given; anything else is refused with the option named."""
    for option in streamlit_options:
        if option.startswith("-") and not _STREAMLIT_OPTION.fullmatch(option):
            raise ValueError(
                f"unrecognized option {option}: `nca-explorer app` takes --port, --address and "
                "Streamlit's own --section.option settings (see `nca-explorer app --help`)"
            )
    command = [sys.executable, "-m", "streamlit", "run", str(app_script())]
    if args.address is not None:
        command += ["--server.address", args.address]
    if args.port is not None:
        command += ["--server.port", str(args.port)]
    return [*command, *streamlit_options]


def _streamlit_missing() -> bool:
    try:
        return importlib.util.find_spec("streamlit") is None
    except ImportError:
        return True


def serve_app(args: argparse.Namespace, streamlit_options: list[str]) -> int:
    """Run the app's server until it stops (Ctrl+C); its exit status."""
    if _streamlit_missing():
        raise ValueError("the app needs Streamlit, which comes with the app extra: pip install 'nca-explorer[app]'")
    server = subprocess.Popen(app_command(args, streamlit_options))
    # A stop asked of this process (a service manager's SIGTERM) stops the server too.
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: server.terminate())
    try:
        while True:
            try:
                return server.wait()
            except KeyboardInterrupt:  # Ctrl+C reached the server too, which stops on its own
                continue
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(args: argparse.Namespace, data, device: str):
    """A run of the recommended settings for ``data``, changed by the flags given, made possible."""
    from .config.settings import APP_REQUEST, SETTINGS
    from .runs.run import Run, recommended_config

    given = {s.name: getattr(args, s.name) for s in SETTINGS if getattr(args, s.name) is not None}
    request = {name: given.get(name, value) for name, value in APP_REQUEST.items()}
    base = recommended_config(data, request.pop("n_components"), **request)
    return Run(base.replace(**{**given, "device": device}), data)


def _load(args: argparse.Namespace, lead: bool):
    """Rank 0 downloads what is missing; the other processes read the files it wrote."""
    from . import datasets
    from .training import distributed

    data = None
    if lead:
        data = datasets.load(args.dataset, data_dir=args.data_dir, download=not args.no_download)
    distributed.barrier()
    if data is None:
        data = datasets.load(args.dataset, data_dir=args.data_dir, download=False)
    return data


def _header(dataset: str, device: str, world_size: int) -> str:
    """The progress bar's title: what trains and on which device."""
    processes = f" x{world_size} processes" if world_size > 1 else ""
    return f"NCA {dataset}{processes} on {device}"


def _train_with_progress(run, args, world_size: int, lead: bool) -> tuple[list[dict], list[np.ndarray]]:
    """Consume the run's snapshots behind a tqdm bar; the per-epoch history and embeddings.
    The bar's title names the device once the estimator has chosen it (the start frame)."""
    from tqdm import tqdm

    history, embeddings = [], []
    eval_every = (args.eval_every or None) if lead else None
    title = f"NCA {args.dataset}"
    with tqdm(total=run.config.max_iter, desc=title, unit="epoch", file=sys.stderr, disable=not lead) as bar:
        for snap in run.stream(eval_every=eval_every, eval_points=CLI_EVAL_POINTS):
            if not history:
                bar.set_description(_header(args.dataset, run.model.device_, world_size))
            history.append(
                {"epoch": snap.epoch, "objective": snap.objective, "seconds": snap.elapsed,
                 "train_accuracy": snap.train_accuracy, "test_accuracy": snap.test_accuracy}
            )  # fmt: skip
            if args.snapshots:
                embeddings.append(snap.embedding)
            if snap.epoch:
                bar.update(1)
                bar.set_postfix(objective=f"{snap.objective:.4f}")
    return history, embeddings


def train(args: argparse.Namespace) -> dict:
    """Run one training as described by ``args``; returns the metrics written (rank 0)."""
    from . import knn_accuracy
    from .training import distributed
    from .util.device import resolve_device

    if args.device not in (None, "auto"):
        resolve_device(args.device)  # a device this machine lacks is refused before anything loads
    rank, world_size, device = distributed.init_from_environment(args.device or "auto")
    lead = rank == 0
    data = _load(args, lead)
    run = _run(args, data, device)
    for note in run.notes if lead else ():
        print(f"note: {note}", file=sys.stderr)
    start = time.perf_counter()
    history, embeddings = _train_with_progress(run, args, world_size, lead)
    if not lead:
        return {}
    test_error = None
    if len(data.y_test):
        Z_train, Z_test = run.transform(data.X_train), run.transform(data.X_test)
        test_error = 1 - knn_accuracy(Z_train, data.y_train, Z_test, data.y_test, run.config.k)
    metrics = {
        "dataset": args.dataset,
        "settings": {**run.config.as_dict(), "eval_every": args.eval_every},
        "notes": run.notes,
        "device": run.model.device_,
        "world_size": world_size,
        "epochs_run": run.model.n_iter_,
        "training_seconds": history[-1]["seconds"],
        "wall_seconds": time.perf_counter() - start,
        f"test_error_{run.config.k}nn": test_error,
        "history": history,
    }
    _write_outputs(args.out, run, metrics, embeddings)
    return metrics


def _write_outputs(out: Path, run, metrics: dict, embeddings: list[np.ndarray]) -> None:
    """model.npz, metrics.json and (when asked) snapshots.npz, each written whole or not at all."""
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "model.npz", run.model_file())
    write_atomic(out / "metrics.json", json.dumps(metrics, indent=2).encode())
    if embeddings:
        buffer = io.BytesIO()
        np.savez(buffer, embeddings=np.stack(embeddings), labels=run.display_labels, index=run.display_index)
        write_atomic(out / "snapshots.npz", buffer.getvalue())


def main(argv: list[str] | None = None) -> int:
    from .datasets import DatasetError

    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "app":
        try:
            return serve_app(args, extra)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        metrics = train(args)
    except (DatasetError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        from .training.distributed import shutdown

        shutdown()
    if not metrics:  # a worker process of a data-parallel run: rank 0 reports
        return 0
    k = metrics["settings"]["k"]
    error = metrics[f"test_error_{k}nn"]
    summary = f"test {k}-NN error {error:.2%}" if error is not None else "no test set"
    seconds = metrics["training_seconds"]
    print(f"wrote {args.out / 'model.npz'} and metrics.json: {summary}, {seconds:.1f} s on {metrics['device']}")
    return 0
