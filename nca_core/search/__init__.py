"""k-nearest-neighbour search (exact or HNSW, FAISS or torch) and kNN scoring."""
