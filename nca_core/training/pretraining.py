"""Autoencoder pre-training of a network encoder, before NCA fine-tunes it.

Min et al. (2010) start deep NCA from a stack of RBMs trained to model the inputs. Here the
encoder is instead trained as the first half of an autoencoder: a mirrored decoder
(d -> reversed hidden layers -> D) learns to rebuild each input from its code, by Adam on
the mean squared error. The codes then keep the inputs' main structure, so NCA starts from
a map where neighbours are already meaningful rather than from random weights.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch

from .encoders import MLPEncoder

__all__ = ["PRETRAIN_BATCH_SIZE", "PRETRAIN_LEARNING_RATE", "pretrain_autoencoder"]

PRETRAIN_LEARNING_RATE = 1e-3  # Adam's customary rate
PRETRAIN_BATCH_SIZE = 256  # when the NCA optimiser takes no minibatches (L-BFGS)


def pretrain_autoencoder(
    encoder: MLPEncoder, X: np.ndarray, epochs: int, batch_size: int, generator: torch.Generator
) -> Iterator[float]:
    """Train ``encoder`` with a mirrored decoder to rebuild X; yield each epoch's mean squared
    reconstruction error. The decoder is dropped afterwards; the encoder keeps its weights."""
    first = encoder.layers[0].weight
    decoder = MLPEncoder(  # the same kind of network, mirrored: d -> hidden reversed -> D
        encoder.layers[-1].out_features, X.shape[1], tuple(reversed(encoder.hidden_sizes)),
        generator, first.dtype, first.device,
    )  # fmt: skip
    optimiser = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=PRETRAIN_LEARNING_RATE)
    for _ in range(epochs):
        order = torch.randperm(len(X), generator=generator).numpy()
        total = 0.0
        for start in range(0, len(X), batch_size):
            batch = torch.as_tensor(
                X[order[start : start + batch_size]], dtype=first.dtype, device=first.device
            )
            loss = ((decoder(encoder(batch)) - batch) ** 2).mean()
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) * len(batch)
        yield total / len(X)
