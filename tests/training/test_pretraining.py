import numpy as np
import pytest
import torch

from nca_core import NCA
from nca_core.training.encoders import MLPEncoder
from nca_core.training.pretraining import pretrain_autoencoder


def _codes_rebuild(encoder, X):
    """How much of X's variance a least-squares linear read-out of the codes explains."""
    with torch.no_grad():
        Z = encoder(torch.as_tensor(X, dtype=torch.float32)).double().numpy()
    Z = np.hstack([Z, np.ones((len(Z), 1))])
    coef, *_ = np.linalg.lstsq(Z, X, rcond=None)
    return 1 - ((Z @ coef - X) ** 2).sum() / ((X - X.mean(0)) ** 2).sum()


def test_pretraining_lowers_the_reconstruction_error_and_keeps_the_structure(digits):
    X, _ = digits
    generator = torch.Generator().manual_seed(0)
    encoder = MLPEncoder(X.shape[1], 4, (32,), generator)
    before = _codes_rebuild(encoder, X)
    curve = list(pretrain_autoencoder(encoder, X, 15, 64, generator))
    assert len(curve) == 15
    assert curve[-1] < 0.5 * curve[0]
    assert _codes_rebuild(encoder, X) > before + 0.1  # the 4-D codes now carry the inputs


def test_the_estimator_pretrains_a_fresh_network_only(digits, capsys):
    X, y = digits
    params = dict(encoder="mlp", hidden_sizes=(32,), max_iter=1, random_state=0, device="cpu")
    plain = NCA(4, **params).fit(X, y)
    assert plain.pretrain_curve_ == []
    model = NCA(4, pretrain_epochs=3, verbose=1, **params).fit(X, y)
    assert len(model.pretrain_curve_) == 3 and model.pretrain_curve_[-1] < model.pretrain_curve_[0]
    assert "pre-training epoch    3: reconstruction error" in capsys.readouterr().out
    assert not np.allclose(model.transform(X), plain.transform(X))
    again = NCA(4, pretrain_epochs=3, **params).fit(X, y)
    np.testing.assert_array_equal(again.transform(X), model.transform(X))  # seeded
    model.set_params(warm_start=True, verbose=0).fit(X, y)
    assert model.pretrain_curve_ == []  # a warm start continues the network it has


def test_pretrain_epochs_must_not_be_negative(digits):
    X, y = digits
    with pytest.raises(ValueError, match="pretrain_epochs"):
        NCA(2, encoder="mlp", pretrain_epochs=-1).fit(X, y)
