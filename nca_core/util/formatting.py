"""How numbers read on screen, for the app, the GIF and the library's messages alike.

Plain Python, no plotting library: the command line and ``runs`` use it too.
"""

from __future__ import annotations

__all__ = ["byte_size", "duration", "percent"]


def percent(fraction: float, decimals: int = 0) -> str:
    """``fraction`` as a percentage with ``decimals`` places, one more where rounding would
    turn an imperfect score into 100% (or a non-zero one into 0%): 0.997 reads 99.7%, and
    ">99.9%" when even that rounds up."""
    value = 100 * fraction
    for places in (decimals, decimals + 1):
        text = f"{value:.{places}f}"
        if float(text) not in (0, 100) or float(text) == value:
            return text + "%"
    step = 10.0 ** -(decimals + 1)
    return f">{100 - step:.{decimals + 1}f}%" if value > 50 else f"<{step:.{decimals + 1}f}%"


def byte_size(n_bytes: float) -> str:
    """Bytes in the unit that keeps three significant digits: 20.1 kB, not 0.0 MB."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if float(f"{n_bytes / scale:.3g}") >= 1:  # as it reads once rounded: 999,999 is 1 MB
            return f"{float(f'{n_bytes / scale:.3g}'):g} {unit}"
    return f"{n_bytes:.0f} bytes"


def duration(seconds: float) -> str:
    """A wait or a run's length: "8.4 s" below a minute, "2 min 05 s" from one."""
    seconds = max(0.0, seconds)
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
