"""Encoders, optimisers, epoch strategies and the training loop that yields snapshots.
Knows nothing of datasets, estimators or user interfaces."""
