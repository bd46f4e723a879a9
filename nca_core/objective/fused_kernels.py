"""The Triton kernels of ``fused.FusedSchedule``: the Gaussian kernel's f and g, every
anchor against every point, without ever writing the (anchors x points) matrix.

Both kernels recompute the logits l_ij = -||z_i - z_j||^2 tile by tile, as
|a|^2 + |b|^2 - 2 a.b on rows centred on the program's own tile mean (tiles hold one class
where they can, so near pairs keep their digits in float32 however far the classes sit
from each other), with j = i left out and l clamped at 0.

- ``anchor_pass``, one program per tile of anchors, sweeps every point once. Per anchor it
  keeps two online log-sum-exps, as FlashAttention's forward does: over all points (m, s)
  and over the class mates (m', s'), each with its own running maximum, so the class-mate
  mass keeps its digits where points of other classes sit far nearer (p_i far below
  float32's range). Beside each sum it keeps the rescaled sum of e (z_j - c), and ends
  with the "pulls" sum_j exp(l_ij - m) (z_j - z_i), over all points and over the class
  mates: the anchors' gradient is 2 (scale' pull' - scale pull) once ``weights.anchor_scales``
  has turned the sums into the objective's factors.
- ``reference_pass``, one program per tile of points, sweeps every anchor once and sums the
  points' gradient 2 sum_i G_ij (z_i - z_j), G_ij = scale'_i S_ij exp(l_ij - m'_i) -
  scale_i exp(l_ij - m_i), from those factors: every row is written by the one program
  that owns it, so the result does not depend on the order of the programs (no atomics:
  FlashAttention-2's backward writes dK and dV so, one program per tile of keys sweeping
  the queries and recomputing their scores).

The class-mate sweep needs only the tiles inside the class range of the program's tile, a
runtime branch taken by whole tiles. Every product is a ``tl.dot`` at ``PRECISION``
(``"ieee"`` by default: TF32 keeps about 10 bits, which |a|^2 + |b|^2 - 2 a.b loses to
cancellation for points far from their tile's centre).

Without triton (the optional extra ``gpu``) the module imports and defines the functions
undecorated: nothing calls them then. Under TRITON_INTERPRET=1, set before triton is
imported, they run through Triton's interpreter on CPU tensors.
"""

from __future__ import annotations

try:
    import triton
    import triton.language as tl
except ImportError:  # the optional extra "gpu" is not installed
    triton = tl = None

__all__ = ["AVAILABLE", "anchor_pass", "reference_pass"]

AVAILABLE = triton is not None


def _jit(fn):
    return fn if triton is None else triton.jit(fn)


@_jit
def _load_centred(ptr, index, count, d, cols):
    """Rows ``index`` (those below ``count``) of a row-major (count, d) matrix, zero beyond
    it and beyond column d; their mean; the rows less the mean (zero beyond); their squared
    norms."""
    live = index < count
    rows = tl.load(
        ptr + index[:, None].to(tl.int64) * d + cols[None, :],
        mask=live[:, None] & (cols < d)[None, :],
        other=0.0,
    )
    centre = tl.sum(rows, 0) / tl.maximum(tl.sum(live.to(tl.float32), 0), 1.0)
    rows = tl.where(live[:, None], rows - centre[None, :], 0.0)
    return rows, centre, tl.sum(rows * rows, 1)


@_jit
def _logits(left, left_sq, right_ptr, right_index, right_count, d, centre, cols, PRECISION: tl.constexpr):
    """-||a - b||^2 (clamped at 0) of the centred ``left`` rows against rows ``right_index``
    of the (right_count, d) matrix at ``right_ptr``, moved by the same ``centre``; and
    those right rows, centred (zero beyond ``right_count``)."""
    live = right_index < right_count
    right = tl.load(
        right_ptr + right_index[:, None].to(tl.int64) * d + cols[None, :],
        mask=live[:, None] & (cols < d)[None, :],
        other=0.0,
    )
    right = tl.where(live[:, None], right - centre[None, :], 0.0)
    right_sq = tl.sum(right * right, 1)
    dots = tl.dot(left, tl.trans(right), input_precision=PRECISION)
    return tl.minimum(2.0 * dots - left_sq[:, None] - right_sq[None, :], 0.0), right


@_jit
def _online(logits, m, s, acc, right, WITH_GRAD: tl.constexpr, PRECISION: tl.constexpr):
    """One tile into a row's online log-sum-exp: the running maximum m, s = sum exp(l - m)
    and acc = sum exp(l - m) right_j, rescaled to the new maximum (-inf logits add 0)."""
    m_new = tl.maximum(m, tl.max(logits, 1))
    shift = tl.where(m_new > float("-inf"), m_new, 0.0)
    rescale = tl.exp(m - shift)
    e = tl.exp(logits - shift[:, None])
    s = s * rescale + tl.sum(e, 1)
    if WITH_GRAD:
        acc = acc * rescale[:, None] + tl.dot(e, right, input_precision=PRECISION)
    return m_new, s, acc


@_jit
def anchor_pass(
    Z, Z_anchor, anchor_rows, mate_lo, mate_hi, tile_start, tile_size, n, n_anchor, d, stats, pulls,
    D_PAD: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    WITH_GRAD: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """Per anchor of this program's tile: (m, s, m', s') into ``stats`` (4, n_anchor) and,
    with ``WITH_GRAD``, the pulls over all points and over the class mates into ``pulls``
    (2, n_anchor, d). An anchor's class mates are rows [mate_lo, mate_hi) of Z, less its
    own row ``anchor_rows``."""
    start = tl.load(tile_start + tl.program_id(0))
    i = start + tl.arange(0, BLOCK_M)
    live = tl.arange(0, BLOCK_M) < tl.load(tile_size + tl.program_id(0))
    cols = tl.arange(0, D_PAD)
    left, centre, left_sq = _load_centred(Z_anchor, tl.where(live, i, n_anchor), n_anchor, d, cols)
    row = tl.load(anchor_rows + i, mask=live, other=-1)
    lo = tl.load(mate_lo + i, mask=live, other=n)
    hi = tl.load(mate_hi + i, mask=live, other=0)
    tile_lo, tile_hi = tl.min(lo, 0), tl.max(hi, 0)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, D_PAD], tl.float32)
    m_same, s_same, acc_same = m, s, acc
    for j0 in range(0, n, BLOCK_N):
        j = j0 + tl.arange(0, BLOCK_N)
        logits, right = _logits(left, left_sq, Z, j, n, d, centre, cols, PRECISION)
        pair = live[:, None] & (j < n)[None, :] & (j[None, :] != row[:, None])
        logits = tl.where(pair, logits, float("-inf"))
        m, s, acc = _online(logits, m, s, acc, right, WITH_GRAD, PRECISION)
        if (j0 < tile_hi) & (j0 + BLOCK_N > tile_lo):
            mates = (j[None, :] >= lo[:, None]) & (j[None, :] < hi[:, None])
            m_same, s_same, acc_same = _online(
                tl.where(mates, logits, float("-inf")), m_same, s_same, acc_same, right, WITH_GRAD, PRECISION
            )
    tl.store(stats + i, m, mask=live)
    tl.store(stats + n_anchor + i, s, mask=live)
    tl.store(stats + 2 * n_anchor + i, m_same, mask=live)
    tl.store(stats + 3 * n_anchor + i, s_same, mask=live)
    if WITH_GRAD:  # sum_j e_ij (z_j - z_i) = acc - s (z_i - c), both in the tile's frame
        keep = live[:, None] & (cols < d)[None, :]
        out = pulls + i[:, None].to(tl.int64) * d + cols[None, :]
        tl.store(out, acc - s[:, None] * left, mask=keep)
        out = pulls + (n_anchor + i)[:, None].to(tl.int64) * d + cols[None, :]  # the second (b, d) matrix
        tl.store(out, acc_same - s_same[:, None] * left, mask=keep)


@_jit
def reference_pass(
    Z, Z_anchor, anchor_rows, anchor_lo, anchor_hi, tile_start, tile_size, factors, n, n_anchor, d, grad,
    D_PAD: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_A: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """d(sum of the anchors' terms)/dz_j for the rows j of this program's tile, into
    ``grad`` (n, d). ``factors`` (4, n_anchor) holds each anchor's m, m', scale and scale';
    the anchors of row j's class are positions [anchor_lo, anchor_hi) of Z_anchor."""
    start = tl.load(tile_start + tl.program_id(0))
    j = start + tl.arange(0, BLOCK_R)
    live = tl.arange(0, BLOCK_R) < tl.load(tile_size + tl.program_id(0))
    cols = tl.arange(0, D_PAD)
    left, centre, left_sq = _load_centred(Z, tl.where(live, j, n), n, d, cols)
    lo = tl.load(anchor_lo + j, mask=live, other=n_anchor)
    hi = tl.load(anchor_hi + j, mask=live, other=0)
    tile_lo, tile_hi = tl.min(lo, 0), tl.max(hi, 0)
    acc = tl.zeros([BLOCK_R, D_PAD], tl.float32)
    colsum = tl.zeros([BLOCK_R], tl.float32)
    for a0 in range(0, n_anchor, BLOCK_A):
        a = a0 + tl.arange(0, BLOCK_A)
        ok = a < n_anchor
        logits, right = _logits(left, left_sq, Z_anchor, a, n_anchor, d, centre, cols, PRECISION)
        rows = tl.load(anchor_rows + a, mask=ok, other=-1)
        logits = tl.where(live[:, None] & ok[None, :] & (rows[None, :] != j[:, None]), logits, float("-inf"))
        shift = tl.load(factors + a, mask=ok, other=0.0)
        scale = tl.load(factors + 2 * n_anchor + a, mask=ok, other=0.0)
        weights = -scale[None, :] * tl.exp(logits - shift[None, :])
        if (a0 < tile_hi) & (a0 + BLOCK_A > tile_lo):
            shift_same = tl.load(factors + n_anchor + a, mask=ok, other=0.0)
            scale_same = tl.load(factors + 3 * n_anchor + a, mask=ok, other=0.0)
            mates = (a[None, :] >= lo[:, None]) & (a[None, :] < hi[:, None])
            mate_logits = tl.where(mates, logits, float("-inf"))  # exp of a non-mate may overflow
            weights += scale_same[None, :] * tl.exp(mate_logits - shift_same[None, :])
        acc += tl.dot(weights, right, input_precision=PRECISION)
        colsum += tl.sum(weights, 1)
    out = grad + j[:, None].to(tl.int64) * d + cols[None, :]
    tl.store(out, 2.0 * (acc - colsum[:, None] * left), mask=live[:, None] & (cols < d)[None, :])
