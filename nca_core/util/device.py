"""Choosing where tensors live: one code path for CPU, CUDA and Apple MPS."""

from __future__ import annotations

import torch

__all__ = ["GPU_BLOCK_ELEMENTS", "available_devices", "block_elements", "processor_name", "resolve_device", "resolve_dtype"]

_DTYPES = {"float32": torch.float32, "float64": torch.float64}

# Entries of a pairwise block on a GPU: at most GPU_BLOCK_ELEMENTS (1 GiB of float32), and
# one per GPU_MEMORY_PER_BLOCK_ENTRY bytes of the GPU's memory, since a block's work holds
# about three matrices of its size. The CPU's block sizes fit its caches; on a GPU every
# block costs kernel launches from Python, so the larger the block the closer the work
# runs to the device's pace (measured in commit 3835932).
GPU_BLOCK_ELEMENTS = 1 << 28
GPU_MEMORY_PER_BLOCK_ENTRY = 64  # bytes of GPU memory for each entry of a block


def available_devices() -> list[str]:
    """Devices usable on this machine, best first; "cpu" is always last.

    Every CUDA GPU torch finds ("cuda" for the first, then "cuda:1", ...), then Apple's
    "mps", then "cpu". ``NCA(device="auto")`` takes the first (``resolve_device``).

    Returns
    -------
    list of str
        Torch device strings.

    See Also
    --------
    - ``resolve_device``: checks a requested device against this list.

    Examples
    --------
    >>> from nca_core import available_devices
    >>> devices = available_devices()
    >>> devices[-1]
    'cpu'
    """
    found = []
    if torch.cuda.is_available():
        found += [f"cuda:{i}" if i else "cuda" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        found.append("mps")
    return [*found, "cpu"]


def resolve_device(device: str | torch.device | None = "auto") -> torch.device:
    """ "auto" (or None) picks CUDA, then Apple MPS, then CPU; anything else is checked.

    Parameters
    ----------
    device : str, torch.device or None, default="auto"
        "auto" or None for the best available device (``available_devices``), or any
        torch device ("cpu", "cuda", "cuda:1", "mps").

    Returns
    -------
    torch.device

    Raises
    ------
    ValueError
        A CUDA or MPS device this machine does not have; the message says why (a torch
        built for the CPU only, no GPU found, too few GPUs) and what is available.

    Examples
    --------
    >>> from nca_core import resolve_device
    >>> resolve_device("cpu")
    device(type='cpu')
    >>> resolve_device("cuda:99")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: device 'cuda:99' was requested but ...
    """
    if device is None or device == "auto":
        return torch.device(available_devices()[0])
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} was requested but CUDA is not available here: {_why_no_cuda()}")
    if resolved.type == "cuda" and (resolved.index or 0) >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        gpus = f"{count} GPU" + ("s" if count != 1 else "")
        raise ValueError(f"device {device!r} was requested but this machine has {gpus}; {_available()}")
    if resolved.type == "mps" and "mps" not in available_devices():
        raise ValueError(f"device {device!r} was requested but Apple MPS is not available here; {_available()}")
    return resolved


def _why_no_cuda() -> str:
    """Whether torch was built without CUDA or finds no GPU, and what can be used instead."""
    if torch.version.cuda is None:
        return f"this torch ({torch.__version__}) is built for the CPU only; {_available()}"
    return f"torch {torch.__version__} (CUDA {torch.version.cuda}) finds no GPU; {_available()}"


def _available() -> str:
    return "available: " + ", ".join(available_devices())


def resolve_dtype(dtype: str | torch.dtype, device: torch.device) -> torch.dtype:
    """Map "float32"/"float64" (or a torch dtype) to a dtype the device supports."""
    resolved = _DTYPES.get(dtype, dtype) if isinstance(dtype, str) else dtype
    if resolved not in _DTYPES.values():
        raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
    if resolved == torch.float64 and device.type == "mps":
        raise ValueError("Apple MPS has no float64: use dtype='float32' on device 'mps'")
    return resolved


def block_elements(cpu_elements: int, device: torch.device) -> int:
    """Entries per pairwise block on ``device``: ``cpu_elements`` on the CPU (and Apple MPS);
    on CUDA up to ``GPU_BLOCK_ELEMENTS``, fewer on a GPU of less than 16 GiB (one entry per
    ``GPU_MEMORY_PER_BLOCK_ENTRY`` bytes of its memory), never fewer than the CPU's."""
    if device.type != "cuda":
        return cpu_elements
    memory = torch.cuda.get_device_properties(device).total_memory
    return max(cpu_elements, min(GPU_BLOCK_ELEMENTS, memory // GPU_MEMORY_PER_BLOCK_ENTRY))


def processor_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what the platform module says."""
    import platform

    try:
        with open("/proc/cpuinfo") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()
