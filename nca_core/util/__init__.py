"""Helpers every layer may use: the torch device, stratified sampling, number formatting
and atomic file writes. Imports nothing else from ``nca_core``."""
