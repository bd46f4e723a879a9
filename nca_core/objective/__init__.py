"""The NCA objective: similarity kernels on squared distances, and f, g and MCML with
their gradients, evaluated in blocks of anchors (never an n x n matrix) or whole for a
few hundred points. Knows nothing of encoders beyond the embedding they produce."""
