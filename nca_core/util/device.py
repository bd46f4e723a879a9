"""Choosing where tensors live: one code path for CPU, CUDA and Apple MPS."""

from __future__ import annotations

import torch

__all__ = ["available_devices", "processor_name", "resolve_device", "resolve_dtype"]

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def available_devices() -> list[str]:
    """Devices usable on this machine, best first; "cpu" is always last."""
    found = []
    if torch.cuda.is_available():
        found += [f"cuda:{i}" if i else "cuda" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return [*found, "cpu"]


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """ "auto" (or None) picks CUDA, then Apple MPS, then CPU; anything else is checked."""
    if device is None or device == "auto":
        return torch.device(available_devices()[0])
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} was requested but CUDA is not available here")
    if resolved.type == "mps" and "mps" not in available_devices():
        raise ValueError(f"device {device!r} was requested but Apple MPS is not available here")
    return resolved


def resolve_dtype(dtype: str | torch.dtype, device: torch.device) -> torch.dtype:
    """Map "float32"/"float64" (or a torch dtype) to a dtype the device supports."""
    resolved = _DTYPES.get(dtype, dtype) if isinstance(dtype, str) else dtype
    if resolved not in _DTYPES.values():
        raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
    if resolved == torch.float64 and device.type == "mps":
        raise ValueError("Apple MPS has no float64: use dtype='float32' on device 'mps'")
    return resolved


def processor_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what the platform module says."""
    import platform

    try:
        with open("/proc/cpuinfo") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()
