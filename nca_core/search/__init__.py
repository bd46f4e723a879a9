"""k-nearest-neighbour search (exact or HNSW, FAISS or torch), kNN scoring, and what a
search costs (timed, and compared in words)."""
