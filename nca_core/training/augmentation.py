"""Training-time input augmentation: new copies of the anchors at every step.

A network trained with NCA on a few thousand images learns them by heart: its
leave-one-out error falls far below its test error. Showing each anchor moved by a pixel
or two, a little differently at every step, asks the map to be robust to what does not
change a digit (its effect on USPS: benchmarks/RESULTS.md, "Deep NCA against the paper").

An augmentation is any callable ``(X, generator) -> X'`` on a (batch, n_features) tensor
that returns a tensor of the same shape, dtype and device; ``RandomShift`` is the one the
library ships.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["RandomShift"]


@dataclass(frozen=True)
class RandomShift:
    """Move each image by up to ``max_shift`` pixels along each axis, independently per image.

    Rows are flattened images of ``image_shape`` (height, width), row by row. The pixels
    shifted in at an edge repeat that edge, which is background for centred digits. Pass
    one as ``NCA(augment=...)``, or let ``NCA(image_shape=..., shift=...)`` build it.

    Parameters
    ----------
    image_shape : tuple of (int, int)
        (height, width) of each image; each row of X has height * width pixels.
    max_shift : int, default=1
        Largest move along each axis, in pixels: from 1 to min(height, width) - 1.

    Raises
    ------
    ValueError
        A size below 1, or ``max_shift`` out of its range.

    Examples
    --------
    >>> import torch
    >>> from nca_core import RandomShift
    >>> shift = RandomShift(image_shape=(3, 3), max_shift=1)
    >>> image = torch.arange(9.0).reshape(1, 9)
    >>> shift(image, torch.Generator().manual_seed(1)).reshape(3, 3)
    tensor([[1., 2., 2.],
            [4., 5., 5.],
            [7., 8., 8.]])
    """

    image_shape: tuple[int, int]
    max_shift: int = 1

    def __post_init__(self):
        height, width = (int(v) for v in self.image_shape)
        if height < 1 or width < 1:
            raise ValueError(
                f"image_shape must be (height, width) of positive sizes, got {self.image_shape!r}"
            )
        if int(self.max_shift) != self.max_shift or not 1 <= self.max_shift < min(height, width):
            raise ValueError(
                f"max_shift must be a whole number from 1 to {min(height, width) - 1}, got {self.max_shift!r}"
            )
        object.__setattr__(self, "image_shape", (height, width))
        object.__setattr__(self, "max_shift", int(self.max_shift))

    def __call__(self, X: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """Each image of X moved by its own offset.

        Parameters
        ----------
        X : Tensor of shape (batch, height * width)
        generator : torch.Generator or None, default=None
            Draws the offsets (on the CPU); None: torch's global generator.

        Returns
        -------
        Tensor of X's shape, dtype and device
        """
        height, width = self.image_shape
        if X.ndim != 2 or X.shape[1] != height * width:
            raise ValueError(
                f"RandomShift{self.image_shape} needs rows of {height * width} pixels, got shape {tuple(X.shape)}"
            )
        s, n = self.max_shift, len(X)
        images = X.reshape(n, 1, height, width)
        padded = torch.nn.functional.pad(images, (s, s, s, s), mode="replicate")[:, 0]
        offsets = torch.randint(0, 2 * s + 1, (2, n), generator=generator).to(X.device)
        rows = offsets[0, :, None] + torch.arange(height, device=X.device)
        columns = offsets[1, :, None] + torch.arange(width, device=X.device)
        batch = torch.arange(n, device=X.device)[:, None, None]
        return padded[batch, rows[:, :, None], columns[:, None, :]].reshape(n, height * width)
