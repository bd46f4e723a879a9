"""One BLAS (or torch) thread while work runs, the count restored after."""

from threadpoolctl import threadpool_info, threadpool_limits

from nca_core.util.threads import numpy_blas_on_one_thread, one_blas_thread


def _blas_threads() -> set[int]:
    return {info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"}


def test_blas_runs_on_one_thread_in_the_block_and_as_before_after_it():
    with threadpool_limits(limits=2, user_api="blas"):
        assert _blas_threads() == {2}
        with one_blas_thread():
            assert _blas_threads() == {1}
        assert _blas_threads() == {2}


def test_numpys_blas_alone_runs_on_one_thread_in_its_block():
    import numpy as np  # noqa: F401  (its BLAS is loaded)

    from nca_core.util.threads import _numpy_blas

    (numpy_blas,) = _numpy_blas().lib_controllers
    with threadpool_limits(limits=2, user_api="blas"):
        with numpy_blas_on_one_thread():
            assert numpy_blas.num_threads == 1
        assert numpy_blas.num_threads == 2


def test_torch_runs_on_one_thread_in_its_block_and_as_before_after_it():
    import torch

    from nca_core.util.threads import torch_on_one_thread

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with torch_on_one_thread():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
