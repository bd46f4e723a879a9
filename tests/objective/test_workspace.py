import torch

from nca_core.objective.workspace import Workspace


def test_a_name_keeps_its_storage_while_it_is_large_enough():
    workspace, like = Workspace(), torch.zeros(1)
    first = workspace.buffer(100, like, "pairs")
    assert workspace.buffer(60, like, "pairs").data_ptr() == first.data_ptr()
    assert workspace.matrix(5, 20, like, "pairs").data_ptr() == first.data_ptr()
    grown = workspace.buffer(101, like, "pairs")
    assert grown.numel() == 101 and grown.data_ptr() != first.data_ptr()
    assert workspace.buffer(50, like, "pairs").data_ptr() == grown.data_ptr()


def test_names_hold_separate_matrices_and_a_new_dtype_gets_new_storage():
    workspace = Workspace()
    a = workspace.matrix(4, 3, torch.zeros(1), "references")
    b = workspace.matrix(4, 3, torch.zeros(1), "exponent")
    a.fill_(1.0)
    b.fill_(2.0)
    assert bool((a == 1.0).all()) and a.data_ptr() != b.data_ptr()
    assert workspace.buffer(12, torch.zeros(1, dtype=torch.float64), "references").dtype == torch.float64


def test_clear_lets_every_buffer_go_and_forgets_the_holder():
    workspace = Workspace()
    first = workspace.buffer(10, torch.zeros(1), "pairs")
    workspace.holder = object()
    workspace.clear()
    assert workspace.holder is None
    assert workspace.buffer(10, torch.zeros(1), "pairs") is not first
