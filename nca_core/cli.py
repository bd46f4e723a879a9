"""``python -m nca_core train``: train NCA on a registered dataset from the command line.

The run settings' flags are generated from ``config.settings.SETTINGS`` (the same declaration as
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
import io
import json
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

    parser = argparse.ArgumentParser(prog="python -m nca_core", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
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

    args = _parser().parse_args(argv)
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
