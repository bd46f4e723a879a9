"""The scikit-learn estimator ``NCA``, the PCA and LDA baselines, and model files."""
