"""NCA Explorer's library: Neighbourhood Components Analysis in PyTorch.

Never imports Streamlit; the app builds on this package, not the other way round.
"""

from .baselines import Projection, fit_projection
from .device import available_devices, resolve_device
from .estimator import NCA
from .knn import knn_accuracy, knn_predict, leave_one_out_accuracy
from .losses import nca_objective
from .model_io import ModelFileError, load_model, save_model
from .sampling import stratified_subsample
from .training import Snapshot, TrainingDiverged

__all__ = [
    "NCA",
    "ModelFileError",
    "Projection",
    "Snapshot",
    "TrainingDiverged",
    "available_devices",
    "fit_projection",
    "knn_accuracy",
    "knn_predict",
    "leave_one_out_accuracy",
    "load_model",
    "nca_objective",
    "resolve_device",
    "save_model",
    "stratified_subsample",
]

__version__ = "0.1.0"
