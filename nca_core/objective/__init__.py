"""The NCA objective, written once (``weights``: f, g and MCML as values and gradients
through the log-similarities), on similarity kernels (``kernels``), in blocks of anchors
(``blocks``) that the exact engine walks without ever holding an n x n matrix
(``engine``), and as one autograd op for users (``function``). Knows nothing of encoders
beyond the embedding they produce."""
