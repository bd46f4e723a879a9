import subprocess
import sys

import pytest
import torch

from nca_core.util.device import (
    GPU_BLOCK_ELEMENTS,
    available_devices,
    block_elements,
    resolve_device,
    resolve_dtype,
)


def test_auto_picks_the_best_available_device():
    assert available_devices()[-1] == "cpu"
    assert resolve_device("auto") == torch.device(available_devices()[0])
    assert resolve_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_missing_cuda_is_explained():
    with pytest.raises(ValueError, match="CUDA is not available here") as refused:
        resolve_device("cuda")
    built = "is built for the CPU only" if torch.version.cuda is None else "finds no GPU"
    assert built in str(refused.value) and str(refused.value).endswith("; available: " + ", ".join(available_devices()))
    if "mps" not in available_devices():
        with pytest.raises(ValueError, match="Apple MPS is not available here; available: "):
            resolve_device("mps")


def test_a_gpu_number_beyond_the_machines_gpus_is_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0") == torch.device("cuda", 0)
    with pytest.raises(ValueError, match="'cuda:1' was requested but this machine has 1 GPU; available: cuda, cpu"):
        resolve_device("cuda:1")


def test_blocks_are_sized_for_the_cpus_caches_and_larger_on_a_gpu_as_its_memory_allows(monkeypatch):
    from types import SimpleNamespace

    assert block_elements(1 << 24, torch.device("cpu")) == 1 << 24
    assert block_elements(1 << 24, torch.device("mps")) == 1 << 24
    memory = {"cuda:0": 80 << 30, "cuda:1": 8 << 30}  # an H100, a small GPU (pretended)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda d: SimpleNamespace(total_memory=memory[str(d)]))
    assert block_elements(1 << 24, torch.device("cuda", 0)) == GPU_BLOCK_ELEMENTS > 1 << 24
    assert block_elements(1 << 24, torch.device("cuda", 1)) == (8 << 30) // 64 == 1 << 27
    assert block_elements(1 << 30, torch.device("cuda", 0)) == 1 << 30  # never smaller than asked


def test_dtypes():
    assert resolve_dtype("float64", torch.device("cpu")) == torch.float64
    with pytest.raises(ValueError, match="dtype must be one of"):
        resolve_dtype("float16", torch.device("cpu"))


def test_library_never_imports_streamlit():
    code = "import sys, nca_core, nca_core.datasets; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
