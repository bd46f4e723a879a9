"""numpy arrays seen as CPU tensors."""

import warnings

import numpy as np

from nca_core.util.tensors import cpu_view


def test_a_read_only_array_is_viewed_without_a_copy_or_a_warning():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    a.flags.writeable = False  # as the app shares its datasets
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = cpu_view(a)
    assert t.data_ptr() == a.ctypes.data and t.dtype.is_floating_point and t.shape == (3, 4)


def test_a_writable_array_is_shared_and_a_strided_one_copied():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert cpu_view(a).data_ptr() == a.ctypes.data
    columns = a[:, ::2]  # not contiguous
    assert np.array_equal(cpu_view(columns).numpy(), columns)
