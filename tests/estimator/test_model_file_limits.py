"""Model files that would cost the reader more memory than a model can need are refused
before they do."""

import io

import numpy as np
import pytest

from nca_core import ModelFileError, load_model


def _npy_member(archive, name: str, shape: tuple, data_bytes: int) -> None:
    """A .npy member of ``archive`` whose header says float64 ``shape`` and whose data is
    ``data_bytes`` zeros, written a megabyte at a time (it compresses to almost nothing)."""
    with archive.open(name, "w", force_zip64=True) as member:
        np.lib.format.write_array_header_1_0(member, {"descr": "<f8", "fortran_order": False, "shape": shape})
        chunk = bytes(2**20)
        for start in range(0, data_bytes, len(chunk)):
            member.write(chunk[: data_bytes - start])


def test_a_file_that_unpacks_past_the_limit_is_refused_before_it_is_unpacked():
    """A few hundred kilobytes of deflated zeros declared as a 257 MB array: refused from
    the archive's directory, without reserving or reading the array."""
    import tracemalloc
    import zipfile

    from nca_core.estimator.model_io import MAX_MODEL_BYTES

    buffer = io.BytesIO()
    n = MAX_MODEL_BYTES // 8 + 1
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        _npy_member(archive, "components.npy", (1, n), 8 * n)
    assert len(buffer.getvalue()) < MAX_MODEL_BYTES // 100
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match=r"the file unpacks to 268 MB, more than a model file may \(268 MB\)"):
            load_model(buffer.getvalue())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20


def test_a_header_that_claims_more_memory_than_there_is_is_refused_in_words():
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        _npy_member(archive, "components.npy", (2**42,), 64)  # 32 TB
    with pytest.raises(ModelFileError, match=r"not a readable \.npz model file: Unable to allocate"):
        load_model(buffer.getvalue())
