"""``python -m nca_core train``: train NCA on a registered dataset from the command line.

Writes the model (.npz, see ``nca_core.model_io``), a metrics JSON (settings, per-epoch
objective and kNN accuracies, final 5-NN test error, timings) and, with ``--snapshots``,
the display embeddings of every epoch (.npz). Progress is a tqdm bar on stderr.

Launched by ``torchrun --nproc_per_node=N -m nca_core train ...`` it trains data-parallel
(see ``nca_core.distributed``): every process loads the data, rank 0 reports and writes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m nca_core", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train NCA on a dataset and save the model and metrics")
    train.add_argument("--dataset", required=True, help="rings, wine, digits, usps, mnist or fashion-mnist")
    train.add_argument("--out", required=True, type=Path, help="folder for model.npz and metrics.json")
    train.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="data directory (default: $NCA_DATA_DIR or the user cache)",
    )
    train.add_argument("--no-download", action="store_true", help="fail instead of downloading missing files")
    train.add_argument("--n-components", type=int, default=2)
    train.add_argument("--init", default="auto", choices=["auto", "pca", "lda", "identity", "random"])
    train.add_argument("--objective", default="f", choices=["f", "g", "mcml"])
    train.add_argument("--encoder", default="linear", choices=["linear", "diagonal", "mlp"])
    train.add_argument(
        "--hidden-sizes", type=int, nargs="+", default=[500, 500], help="MLP hidden layer widths"
    )
    train.add_argument("--kernel", default="gaussian", choices=["gaussian", "student-t"])
    train.add_argument(
        "--dof", default=None, help="Student-t degrees of freedom: a number or 'learn' (default d - 1)"
    )
    train.add_argument("--neighbors", default="auto", choices=["auto", "all", "memory", "batch"])
    train.add_argument("--optimizer", default="lbfgs", choices=["lbfgs", "adam", "sgd"])
    train.add_argument("--epochs", type=int, default=50)
    train.add_argument("--batch-size", type=int, default=512)
    train.add_argument("--learning-rate", type=float, default=None)
    train.add_argument("--weight-decay", type=float, default=0.0)
    train.add_argument(
        "--standardize", action="store_true", help="scale features to zero mean and unit variance first"
    )
    train.add_argument("--device", default="auto")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--k", type=int, default=5, help="neighbours for the kNN accuracies")
    train.add_argument(
        "--eval-every", type=int, default=1, help="epochs between kNN measurements (0: only at the end)"
    )
    train.add_argument("--snapshots", action="store_true", help="also write every epoch's display embedding")
    return parser


def _write_atomic(path: Path, data: bytes) -> None:
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, path)
    finally:
        Path(temp).unlink(missing_ok=True)


def train(args: argparse.Namespace) -> dict:
    """Run one training as described by ``args``; returns the metrics written."""
    import io

    from sklearn.preprocessing import StandardScaler
    from tqdm import tqdm

    from . import NCA, datasets, distributed, knn_accuracy, save_model

    rank, world_size, local_rank = distributed.init_from_environment()
    device = distributed.process_device(args.device, local_rank, world_size)
    lead = rank == 0
    dof = args.dof if args.dof in (None, "learn") else float(args.dof)
    data = None
    if lead:  # downloads happen once; the other processes read the files it wrote
        data = datasets.load(args.dataset, data_dir=args.data_dir, download=not args.no_download)
    distributed.barrier()
    if data is None:
        data = datasets.load(args.dataset, data_dir=args.data_dir, download=False)
    X_train, X_test = data.X_train, data.X_test
    if args.standardize:
        scaler = StandardScaler().fit(X_train)
        X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    model = NCA(
        args.n_components, init=args.init, objective=args.objective, optimizer=args.optimizer,
        max_iter=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
        weight_decay=args.weight_decay, device=device, random_state=args.seed, encoder=args.encoder,
        hidden_sizes=tuple(args.hidden_sizes), kernel=args.kernel, dof=dof, neighbors=args.neighbors,
    )  # fmt: skip
    has_test = len(data.y_test) > 0
    history, embeddings = [], []
    start = time.perf_counter()
    stream = model.fit_iter(
        X_train, data.y_train, X_test if has_test else None, data.y_test if has_test else None,
        eval_every=(args.eval_every or None) if lead else None, k=args.k, display_size=2000,
    )  # fmt: skip
    title = f"NCA {args.dataset}" + (f" x{world_size} processes" if world_size > 1 else "")
    with tqdm(total=args.epochs, desc=title, unit="epoch", file=sys.stderr, disable=not lead) as bar:
        for snap in stream:
            history.append(
                {"epoch": snap.epoch, "objective": snap.objective, "seconds": snap.elapsed,
                 "train_accuracy": snap.train_accuracy, "test_accuracy": snap.test_accuracy}
            )  # fmt: skip
            if args.snapshots:
                embeddings.append(snap.embedding)
            if snap.epoch:
                bar.update(1)
                bar.set_postfix(objective=f"{snap.objective:.4f}")
    wall = time.perf_counter() - start
    if not lead:
        return {}
    Z_train = model.transform(X_train)
    test_error = (
        1 - knn_accuracy(Z_train, data.y_train, model.transform(X_test), data.y_test, args.k)
        if has_test
        else None
    )
    metrics = {
        "dataset": args.dataset,
        "settings": {
            key: (str(value) if isinstance(value, Path) else value) for key, value in vars(args).items()
        },
        "device": model.device_,
        "world_size": world_size,
        "epochs_run": model.n_iter_,
        "training_seconds": history[-1]["seconds"],
        "wall_seconds": wall,
        f"test_error_{args.k}nn": test_error,
        "history": history,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    save_model(model, buffer)
    _write_atomic(args.out / "model.npz", buffer.getvalue())
    _write_atomic(args.out / "metrics.json", json.dumps(metrics, indent=2).encode())
    if args.snapshots:
        buffer = io.BytesIO()
        np.savez(buffer, embeddings=np.stack(embeddings), labels=data.y_train[model.display_index_])
        _write_atomic(args.out / "snapshots.npz", buffer.getvalue())
    return metrics


def main(argv: list[str] | None = None) -> int:
    from .datasets import DatasetError

    args = _parser().parse_args(argv)
    try:
        metrics = train(args)
    except (DatasetError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        from .distributed import shutdown

        shutdown()
    if not metrics:  # a worker process of a data-parallel run: rank 0 reports
        return 0
    error = metrics[f"test_error_{args.k}nn"]
    summary = f"test {args.k}-NN error {error:.2%}" if error is not None else "no test set"
    print(f"wrote {args.out / 'model.npz'} and metrics.json: {summary}, {metrics['training_seconds']:.1f} s")
    return 0
