"""The exact engine's schedule for CUDA: the Gaussian kernel's f or g in two Triton
kernels (``fused_kernels``) that never write the (anchors x points) matrix.

``FusedSchedule`` satisfies ``engine.Schedule``; ``engine.schedule_for`` takes it for
float32 embeddings on a CUDA device of at most ``MAX_DIMENSIONS`` columns when triton (the
optional extra ``gpu``) imports and ``FUSED_ON_CUDA`` says so (``fused_available``). Its
sums are those of ``GaussianSchedule``, found another way:

1. ``anchor_pass``: per anchor, online log-sum-exps over all points and over its class
   mates (each with its own running maximum, so p_i keeps its digits in float32 at any
   scale, with nothing computed again), and the pulls that give the anchors' gradient;
2. ``weights.anchor_scales`` turns those sums into the terms and the gradient's factors,
   in float64 (a few vectors of the anchors' length);
3. ``reference_pass``: the points' gradient, each tile of points sweeping every anchor and
   writing its own rows (deterministic; no atomics).

Arithmetic: the logits are formed twice (8 d n_anchor n flops in all against the 6 of one
pass that held the matrix) and exp'd twice (a little more over the class mates), in
exchange for no (block x n) matrix in memory at all.

Anchors and points are cut into tiles that each hold one class where that fills them
(small classes share a tile: ``class_tiles``), so the kernels' per-tile centring keeps the
near pairs' logits exact for classes far apart, and a tile's class-mate sweep spans one
class. A logit rounds at about 2^-24 (|a - c|^2 + |b - c|^2) from its tile's centre c, so
the weights of a point far from the rest of its class (80 units, say) carry relative
errors of about 1e-3.

On CPU tensors the kernels run through Triton's interpreter, in a process that set
TRITON_INTERPRET=1 before it imported triton (triton reads it then, and decorates its own
library functions accordingly): the tests do so in a process of their own. There the engine
takes them for CPU embeddings too, so that training through them is checked without a GPU.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from dataclasses import dataclass

import torch

from .weights import PER_ANCHOR_OBJECTIVES, anchor_scales

__all__ = ["MAX_DIMENSIONS", "TILES", "FusedSchedule", "Tiles", "class_tiles", "fused_available"]

# The widest embedding the kernels take: a tile's rows and accumulators live in registers,
# (rows x d) floats each, so tiles shrink as d grows (``TILES``). Wider embeddings keep
# GaussianSchedule.
MAX_DIMENSIONS = 128


@dataclass(frozen=True)
class Tiles:
    """A kernel's launch shape: the rows a program owns (anchors in ``anchor_pass``, points
    in ``reference_pass``), the rows it sweeps at a time (powers of two, at least 16, as
    ``tl.dot`` needs) and its warps."""

    rows: int
    columns: int
    warps: int = 8


# (anchor_pass, reference_pass) by d padded to a power of two, for an H100 or H200: the
# largest tiles that ptxas (triton 3.8, sm_90) fits in 255 registers a thread with at most a
# few dozen bytes spilled. float32 "ieee" products run on the CUDA cores, and Triton keeps
# each thread's share of both operands in registers, so the tiles shrink as d grows; the
# first kernel, with two accumulators and two running sums, needs the smaller ones.
TILES = {
    16: (Tiles(64, 64), Tiles(64, 64)),
    32: (Tiles(64, 64), Tiles(64, 64)),
    64: (Tiles(32, 32), Tiles(64, 64)),
    128: (Tiles(16, 32), Tiles(32, 32)),
}


# Whether the engine picks the fused kernels on CUDA by itself. Off until a GPU run shows them
# correct when compiled and faster than GaussianSchedule (benchmarks/gpu_training.sh);
# NCA_FUSED=1 in the environment turns them on for such a run, and in a process where triton
# interprets them, for training's tests on the CPU.
FUSED_ON_CUDA = os.environ.get("NCA_FUSED", "0") == "1"


def fused_available(Z: torch.Tensor) -> bool:
    """Whether the engine takes the fused kernels for this embedding: float32 of at most
    ``MAX_DIMENSIONS`` columns, ``FUSED_ON_CUDA``, triton importable, and Z on a CUDA device
    (or on the CPU in a process where triton interprets its kernels)."""
    return (
        FUSED_ON_CUDA
        and Z.dtype == torch.float32
        and 0 < Z.shape[1] <= MAX_DIMENSIONS
        and _triton_imports()
        and (Z.is_cuda or (Z.device.type == "cpu" and _interpreted()))
    )


@functools.cache
def _triton_imports() -> bool:
    return _kernels().AVAILABLE


def _interpreted() -> bool:
    """Whether triton runs the kernels through its interpreter (TRITON_INTERPRET=1 when it
    was imported), where they take CPU tensors."""
    return type(_kernels().anchor_pass).__name__ == "InterpretedFunction"


def _kernels():
    from . import fused_kernels

    return fused_kernels


def _check_device(Z: torch.Tensor) -> None:
    """CUDA tensors, or CPU tensors where triton interprets its kernels."""
    if not Z.is_cuda and not _interpreted():
        raise ValueError(
            "the fused kernels need CUDA tensors (or TRITON_INTERPRET=1 set before triton is imported)"
        )


def class_tiles(counts: list[int], size: int) -> tuple[list[int], list[int]]:
    """Starts and lengths of tiles of at most ``size`` rows over rows sorted by class
    (``counts`` rows of each class in turn). Classes that fit in a tile share tiles, whole;
    a longer one has tiles of its own, full ones and its remainder. So a tile spans several
    classes only where each of them is whole in it."""
    starts, lengths = [], []
    open_start, open_length, row = 0, 0, 0

    def close():
        nonlocal open_length
        if open_length:
            starts.append(open_start)
            lengths.append(open_length)
        open_length = 0

    for count in counts:
        if count > size or open_length + count > size:
            close()
        if count > size:
            starts += range(row, row + count, size)
            lengths += [min(size, row + count - start) for start in range(row, row + count, size)]
        elif count:
            open_start = row if open_length == 0 else open_start
            open_length += count
        row += count
    close()
    return starts, lengths


class FusedSchedule:
    """The Gaussian kernel's f or g through the Triton kernels of ``fused_kernels``.

    ``tiles`` (one ``Tiles`` for both kernels) replaces the table ``TILES`` of each width's
    defaults. ``precision`` is ``tl.dot``'s input precision for float32 (``"ieee"``;
    ``"tf32x3"`` runs on tensor cores and keeps almost as many digits).
    """

    def __init__(self, objective: str, tiles: Tiles | None = None, precision: str = "ieee"):
        if objective not in PER_ANCHOR_OBJECTIVES:
            raise ValueError(f"objective must be one of {PER_ANCHOR_OBJECTIVES}, got {objective!r}")
        if tiles is not None and any(b < 16 or b & (b - 1) for b in (tiles.rows, tiles.columns)):
            raise ValueError(f"tiles must be powers of two of at least 16, got {tiles}")
        self.objective, self.tiles, self.precision = objective, tiles, precision

    @torch.no_grad()
    def sums(self, Z, y, anchors, workspace):
        pairs = _Pairs(Z, y, anchors, self._tiles(Z)[0].rows)
        if pairs.n_anchor == 0:
            return torch.zeros_like(Z), 0.0, 0.0
        stats, pulls = self._anchor_pass(pairs, with_grad=True)
        terms, shifts, scale_same, scale_all = _factors(stats, self.objective)
        grad_anchor = 2.0 * (scale_same[:, None] * pulls[1] - scale_all[:, None] * pulls[0])
        factors = torch.stack([shifts[0].float(), shifts[1].float(), scale_all, scale_same])
        grad = self._reference_pass(pairs, factors)
        return grad.index_add_(0, pairs.anchors, grad_anchor), 0.0, float(terms.sum())

    @torch.no_grad()
    def value_sum(self, Z, y, anchors, workspace):
        pairs = _Pairs(Z, y, anchors, self._tiles(Z)[0].rows)
        if pairs.n_anchor == 0:
            return 0.0
        return float(_factors(self._anchor_pass(pairs, with_grad=False)[0], self.objective)[0].sum())

    def _tiles(self, Z: torch.Tensor) -> tuple[Tiles, Tiles]:
        """(anchor_pass, reference_pass) tiles for Z's width."""
        return (self.tiles, self.tiles) if self.tiles is not None else TILES[_padded(Z.shape[1])]

    def _anchor_pass(self, pairs: _Pairs, with_grad: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """(m, s, m', s') per anchor (4, b) and, with ``with_grad``, the pulls (2, b, d)."""
        b, d = pairs.Z_anchor.shape
        tiles = self._tiles(pairs.Z)[0]
        stats = pairs.Z.new_empty(4, b)
        pulls = pairs.Z.new_empty(2, b, d) if with_grad else pairs.Z.new_empty(1)
        with _device_of(pairs.Z):
            _kernels().anchor_pass[(len(pairs.anchor_tiles[0]),)](
                pairs.Z, pairs.Z_anchor, pairs.anchor_rows, pairs.mate_lo, pairs.mate_hi, *pairs.anchor_tiles,
                len(pairs.Z), b, d, stats, pulls, D_PAD=_padded(d), BLOCK_M=tiles.rows, BLOCK_N=tiles.columns,
                WITH_GRAD=with_grad, PRECISION=self.precision, num_warps=tiles.warps,
            )  # fmt: skip
        return stats, pulls

    def _reference_pass(self, pairs: _Pairs, factors: torch.Tensor) -> torch.Tensor:
        """d(sum of terms)/dZ through the anchors' weights on every point, (n, d)."""
        grad = torch.empty_like(pairs.Z)
        b, d = pairs.Z_anchor.shape
        tiles = self._tiles(pairs.Z)[1]
        starts, sizes = pairs.reference_tiles(tiles.rows)
        with _device_of(pairs.Z):
            _kernels().reference_pass[(len(starts),)](
                pairs.Z, pairs.Z_anchor, pairs.anchor_rows, pairs.anchor_lo, pairs.anchor_hi, starts, sizes,
                factors, len(pairs.Z), b, d, grad, D_PAD=_padded(d), BLOCK_R=tiles.rows, BLOCK_A=tiles.columns,
                PRECISION=self.precision, num_warps=tiles.warps,
            )  # fmt: skip
        return grad


def _device_of(Z: torch.Tensor):
    """Triton launches on the current CUDA device: make it Z's."""
    return torch.cuda.device(Z.device) if Z.is_cuda else contextlib.nullcontext()


def _padded(d: int) -> int:
    """d rounded up to a power of two of at least 16 (``tl.dot``'s least)."""
    return max(16, 1 << (d - 1).bit_length())


class _Pairs:
    """What both kernels read: Z centred on its mean (so |a|^2 + |b|^2 - 2 a.b has small
    terms for data far from the origin; the kernels centre again per tile), the anchors'
    rows, each anchor's class as a range of rows and each row's class as a range of
    anchor positions, and the tiles of anchors. Reads the class counts back from the device
    once, to cut the tiles."""

    def __init__(self, Z, y, anchors, block_rows: int):
        if Z.dtype != torch.float32 or Z.shape[1] > MAX_DIMENSIONS:
            raise ValueError(
                f"the fused kernels take float32 of at most {MAX_DIMENSIONS} columns, got {Z.dtype} {tuple(Z.shape)}"
            )
        _check_device(Z)
        self.Z = (Z - Z.mean(0)).contiguous()
        self.anchors = anchors
        self.n_anchor = len(anchors)
        self.Z_anchor = self.Z[anchors].contiguous()
        self.anchor_rows = anchors.to(torch.int32)
        y_anchor = y[anchors].contiguous()
        y = y.contiguous()
        self.mate_lo = torch.searchsorted(y, y_anchor).to(torch.int32)
        self.mate_hi = torch.searchsorted(y, y_anchor, right=True).to(torch.int32)
        self.anchor_lo = torch.searchsorted(y_anchor, y).to(torch.int32)
        self.anchor_hi = torch.searchsorted(y_anchor, y, right=True).to(torch.int32)
        self.counts = torch.bincount(y).tolist()
        anchor_counts = torch.bincount(y_anchor, minlength=len(self.counts)).tolist()
        self.anchor_tiles = self._tiles(anchor_counts, block_rows)

    def reference_tiles(self, block_rows: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self._tiles(self.counts, block_rows)

    def _tiles(self, counts: list[int], size: int) -> tuple[torch.Tensor, torch.Tensor]:
        starts, lengths = class_tiles(counts, size)
        both = torch.tensor([starts, lengths], dtype=torch.int32, device=self.Z.device)
        return both[0], both[1]


def _factors(stats: torch.Tensor, objective: str):
    """The terms, the shifts (m, m') and the gradient's factors (scale', scale) per anchor,
    in float64, from the first kernel's sums: ``weights.anchor_scales`` with the running
    maxima as the shifts (0 where a maximum is -inf: no neighbour, or no class mate)."""
    m, s, m_same, s_same = stats.double()
    shift = torch.where(m > -math.inf, m, 0.0)
    shift_same = torch.where(m_same > -math.inf, m_same, 0.0)
    log_total = torch.where(s > 0, m + torch.log(s), -math.inf)
    log_same = torch.where(s_same > 0, m_same + torch.log(s_same), -math.inf)
    terms, scale_same, scale_all = anchor_scales(log_same, log_total, shift_same, shift, objective)
    return terms, (shift, shift_same), scale_same[:, 0].float(), scale_all[:, 0].float()
