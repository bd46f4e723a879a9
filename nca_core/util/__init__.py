"""Helpers every layer may use: the torch device, stratified sampling, number formatting,
atomic file writes and arrays seen as tensors. Imports nothing else from ``nca_core``."""
