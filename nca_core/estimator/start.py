"""Where a fit starts, from its plan: the map or network, the kernel and the training tensors.

``make_start`` reads only the plan (``config.plan``), the validated data and, for a warm
start, what the previous fit left (``Previous``); the estimator validates, plans and keeps
the fitted attributes. Failing checks raise ValueError before anything is trained.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import torch

from ..config.plan import Plan
from ..objective.kernels import make_kernel
from ..training.augmentation import RandomShift
from ..training.encoders import MLPEncoder, make_encoder
from ..training.pretraining import PRETRAIN_BATCH_SIZE, pretrain_autoencoder
from ..util.device import resolve_dtype
from ..util.sampling import stratified_subsample
from ..util.tensors import cpu_view
from .starts import lda_directions, pca_directions

__all__ = ["Previous", "Start", "display_index", "make_start", "rows_less", "training_offset", "training_rows"]


@dataclass(frozen=True)
class Previous:
    """What the previous fit left, which a warm start continues: its encoder, its map (None
    for a network) and its kernel."""

    encoder: torch.nn.Module
    components: np.ndarray | None
    kernel: torch.nn.Module | None
    n_components: int

    @classmethod
    def of(cls, model, plan: Plan) -> Previous | None:
        """The fit ``model`` holds, if ``plan`` continues it (``warm_start``); None for a fresh
        start. ValueError if it trained the other kind of encoder."""
        if not (plan.warm_start and hasattr(model, "encoder_")):
            return None
        previous = "network" if isinstance(model.encoder_, MLPEncoder) else "linear map"
        if previous != ("network" if plan.encoder == "mlp" else "linear map"):
            raise ValueError(
                f"warm_start continues the previous fit, which trained a {previous}: "
                f"set warm_start=False to start encoder={plan.encoder!r} afresh"
            )
        components = getattr(model, "components_", None)
        return cls(model.encoder_, components, getattr(model, "kernel_", None), model.n_components_)


@dataclass(frozen=True)
class Start:
    """What a fit starts from, once its data and settings have passed every check."""

    X: np.ndarray
    y: np.ndarray
    y_index: np.ndarray  # classes as 0..n_classes - 1
    plan: Plan
    augment: Callable | None  # ``plan.augment``, or the image shift the plan asks for
    encoder: torch.nn.Module
    kernel: torch.nn.Module
    seed: int
    generator: torch.Generator
    device: torch.device
    dtype: torch.dtype
    pretrain_curve: list[float]


def make_start(X, y, y_index, plan: Plan, previous: Previous | None, rng, report) -> Start:
    """The encoder, kernel and generator a fit on validated X, y starts from, as ``plan``
    says; ``previous`` is continued where given. ``rng`` draws the start and the seed,
    ``report`` times and reports what it does (``report.Report``)."""
    device = torch.device(plan.device)
    dtype = resolve_dtype(plan.dtype, device)
    augment = RandomShift(tuple(plan.image_shape), plan.shift) if plan.shift else plan.augment
    _check_augment(augment, X, dtype, device)
    with report.timing_start(plan.settings):
        components = _initial_components(X, y_index, plan, previous, rng)
    seed = int(rng.randint(np.iinfo(np.int32).max))
    generator = torch.Generator().manual_seed(seed)
    if plan.encoder == "mlp" and previous is not None:
        encoder, curve = previous.encoder, []
    else:
        init = None if components is None else torch.as_tensor(components)
        encoder = make_encoder(
            plan.encoder, X.shape[1], plan.n_components, init=init, hidden_sizes=plan.hidden_sizes,
            generator=generator, dtype=dtype, device=device,
        )  # fmt: skip
        curve = _pretrain(encoder, X, plan, generator, report)
    _check_finite_start(encoder, plan.init, plan.dtype)
    kernel = _kernel(plan, previous, device)
    return Start(X, y, y_index, plan, augment, encoder, kernel, seed, generator, device, dtype, curve)


def _pretrain(encoder, X, plan: Plan, generator, report) -> list[float]:
    """Autoencoder pre-training of a fresh network (``pretrain_epochs``); its curve."""
    if not plan.pretrain_epochs or plan.encoder != "mlp":
        return []
    batch_size = PRETRAIN_BATCH_SIZE if plan.optimizer == "lbfgs" else plan.batch_size
    curve = []
    for loss in pretrain_autoencoder(encoder, X, plan.pretrain_epochs, batch_size, generator):
        curve.append(loss)
        report.pretrain_epoch(len(curve), loss)
    return curve


def _kernel(plan: Plan, previous: Previous | None, device) -> torch.nn.Module:
    """A fresh kernel, or the previous fit's (keeping a learnt dof) when warm-starting."""
    kept = None if previous is None else previous.kernel
    if kept is not None and kept.name == plan.kernel and plan.dof == "learn":
        return kept
    return make_kernel(plan.kernel, plan.dof, plan.n_components).to(device)


def _initial_components(X, y_index, plan: Plan, previous: Previous | None, rng) -> np.ndarray | None:
    """The starting map, shape (d, D); None for the MLP, which draws its own weights."""
    d, n_features = plan.n_components, X.shape[1]
    if plan.encoder == "mlp":
        _check_network(plan, previous, n_features)
        return None
    if previous is not None and previous.components is not None:
        if previous.components.shape != (d, n_features):
            raise ValueError(
                f"warm_start needs the same shape as the previous fit, "
                f"{previous.components.shape}, but got {(d, n_features)}"
            )
        return previous.components.copy()
    method = plan.init
    if isinstance(method, np.ndarray):  # its shape was checked by plan.resolve
        return np.asarray(method, dtype=np.float64)
    if method == "identity":
        return np.eye(d, n_features)
    if method == "random":
        return rng.standard_normal((d, n_features))
    if method == "pca":
        return pca_directions(X, d, rng)
    return lda_directions(X, y_index, d, rng)


def _check_network(plan: Plan, previous: Previous | None, n_features: int) -> None:
    if any(not isinstance(h, Integral) or h < 1 for h in plan.hidden_sizes):
        raise ValueError(f"hidden_sizes must be positive integers, got {plan.hidden_sizes!r}")
    if previous is not None:
        before = (previous.encoder.layers[0].in_features, previous.n_components, tuple(previous.encoder.hidden_sizes))
        if before != (n_features, plan.n_components, tuple(plan.hidden_sizes)):
            raise ValueError(
                f"warm_start needs the same network as the previous fit (n_features, n_components, hidden_sizes) = {before}"
            )


def _check_finite_start(encoder: torch.nn.Module, init, dtype: str) -> None:
    if not all(bool(torch.isfinite(p).all()) for p in encoder.parameters()):
        raise ValueError(
            f"the starting map (init={init!r}) is not finite in {dtype}: "
            "standardise the inputs, or choose another init or dtype='float64'"
        )


def _check_augment(augment, X: np.ndarray, dtype: torch.dtype, device) -> None:
    """Try ``augment`` on two rows as training will hand them over, so that a mismatch is
    refused before training starts."""
    if augment is None:
        return
    rows = torch.as_tensor(np.ascontiguousarray(X[:2]), dtype=dtype, device=device)
    out = augment(rows, torch.Generator().manual_seed(0))

    def described(t):
        return (tuple(t.shape), t.dtype, str(t.device)) if isinstance(t, torch.Tensor) else type(t).__name__

    if described(out) != described(rows):
        raise ValueError(
            f"augment must return a tensor of the batch's shape, dtype and device {described(rows)}, "
            f"got {described(out)}"
        )


def training_offset(start: Start, center: np.ndarray) -> np.ndarray:
    """What training subtracts from every row: the mean, in float64, for a linear or diagonal
    map, whose distances it leaves unchanged; then float32 keeps the digits of data far from
    the origin. A network's output depends on where its inputs lie, and a shift or an
    augmentation alters the inputs as they are: nothing for those. ``center`` is the fit's
    ``center_``: the mean already, when the map was asked to centre (one pass over X less)."""
    if start.plan.encoder == "mlp" or start.augment is not None:
        return np.zeros(start.X.shape[1])
    return center if center.any() else start.X.mean(0, dtype=np.float64)


def training_rows(X: np.ndarray, order: np.ndarray, offset: np.ndarray, dtype, device) -> torch.Tensor:
    """X's rows in ``order`` less ``offset``, as one new tensor. The subtraction comes before
    the cast (float64 inputs keep their digits), chunk by chunk, so that no second full copy
    of X is made. float32 inputs trained in float32 subtract the offset rounded to float32:
    its rounding moves every row alike, which no distance sees, and each difference is
    rounded once, as the cast would, without a float64 copy of every chunk."""
    if X.dtype == np.float32 and dtype == torch.float32 and torch.device(device).type == "cpu":
        return _float32_rows(X, order, offset.astype(np.float32))
    return rows_less(X, order, offset, dtype, device)


def rows_less(X: np.ndarray, order: np.ndarray, offset: np.ndarray, dtype, device) -> torch.Tensor:
    """X's rows in ``order`` less ``offset``, as one new tensor: subtracted in float64 chunk
    by chunk, each difference then rounded once to ``dtype``."""
    out = torch.empty((len(order), X.shape[1]), dtype=dtype, device=device)
    for start in range(0, len(order), _CHUNK_ROWS):
        rows = X[order[start : start + _CHUNK_ROWS]] - offset
        out[start : start + len(rows)] = torch.from_numpy(rows).to(dtype=dtype, device=device)
    return out


_CHUNK_ROWS = 65536


def _float32_rows(X: np.ndarray, order: np.ndarray, offset: np.ndarray) -> torch.Tensor:
    """``training_rows`` of float32 rows kept on the CPU: one gather into the tensor training
    keeps, less the float32 offset in place, both on torch's threads: no copy of X on the
    way, which held back a large set's first frame (measured in commit 531979a)."""
    rows = torch.index_select(cpu_view(X), 0, torch.from_numpy(np.asarray(order, dtype=np.int64)))
    return rows.sub_(torch.from_numpy(offset))


def display_index(y, size: int | None, seed: int) -> np.ndarray:
    """Indices of the points each snapshot embeds: all (None), none (0) or a stratified few."""
    if size is None:
        return np.arange(len(y))
    return stratified_subsample(y, size, seed) if size else np.arange(0)
