"""Every parameter of a fit, declared once.

A ``declaration.Param`` names one parameter with its library default, the values it accepts (as
scikit-learn constraints, from which ``NCA._parameter_constraints`` is built), its
documentation (from which the estimator's docstring is built) and, for the settings a user
reaches in the app, a link or the command line, a ``Control``: label, help text, widget,
the app's choices or range, link key. ``NCA``'s constructor, its constraints and docstring,
the app's ``RunConfig``, its sidebar, its links and the CLI's flags are all generated from
``PARAMS``, so a new parameter is one entry here, the code that reads it from the plan
(``config.plan``) and its test.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from . import rules
from .declaration import (
    DOF_MAX,
    Control,
    Interval,
    Param,
    StrOptions,
    parse_dof,
    parse_layer_sizes,
    positive,
    whole_from,
)  # fmt: skip
from .rules import (
    ENCODERS,
    INITS,
    KERNEL_CHOICES,
    NEAREST_MIN_SAMPLES,
    NEIGHBOR_CHOICES,
    NETWORK_HIDDEN_SIZES,
    OBJECTIVE_CHOICES,
    OPTIMIZER_CHOICES,
    OPTIONS,
    PICTURE_NEAREST_MIN_SAMPLES,
    SCHEDULE_CHOICES,
    SHIFTS,
    minibatch_applies,
    shift_applies,
)

__all__ = ["BY_NAME", "ESTIMATOR_PARAMS", "PARAMS"]



_HIDDEN_WIDTHS = (32, 64, 128, 256, 500, 512, 1000)  # the app's hidden layer widths: two of each

PARAMS: tuple[Param, ...] = (
    # -- the map -------------------------------------------------------------------------
    Param(
        "n_components", None, whole_from(1, None), "int",
        "Dimension d of the embedding; None keeps n_features (or the rows of an init array).",
        Control(
            "Output dimension d",
            "2 or 3 to look at; larger keeps more for kNN (then the first three coordinates are drawn).",
            "Map", "select_slider", choices=(2, 3, 5, 10, 16, 32, 64), url_key="d", bound="n_features",
        ),
    ),
    Param(
        "encoder", "linear", (StrOptions(set(ENCODERS)),), '{"linear", "diagonal", "mlp"}',
        '"linear": a full d x D map; "diagonal": one scale per feature (d = D); "mlp": a ReLU '
        "network with ``hidden_sizes`` hidden layers and a linear output layer, starting from "
        'random weights (init must be "auto" or "random").',
        Control(
            "Map type",
            "A diagonal map only rescales features (the paper's feature-weighting variant); "
            "a neural network bends space too (nonlinear NCA), starting from random weights.",
            "Map", "selectbox", choices=ENCODERS, url_key="encoder",
            labels={
                "linear": "linear (full d × D map)",
                "diagonal": "diagonal (feature scaling)",
                "mlp": "neural network (MLP, nonlinear)",
            },
        ),
    ),
    Param(
        "init", "auto", (StrOptions(set(INITS)), np.ndarray), '{"auto", "pca", "lda", "identity", "random"} or ndarray',
        'Starting map. "auto" picks "lda" when n_components <= min(n_features, n_classes - 1), '
        'else "pca" when n_components < min(n_features, n_samples), else "identity" (as '
        'scikit-learn). "lda" gives at most n_classes - 1 directions; further rows start from '
        "PCA directions, with a warning. An array has shape (k, n_features) with k <= "
        "n_features, and k = n_components when that is given.",
        Control(
            "Start from",
            "A network always starts from random weights. A linear map can start from PCA (the "
            "directions of largest variance), LDA (the class-separating ones), the identity or at random.",
            "Map", "selectbox", choices=INITS, url_key="init", reset_on=("encoder",),
            labels={"auto": "automatic", "pca": "PCA", "lda": "LDA", "identity": "identity", "random": "random"},
        ),
    ),
    Param(
        "warm_start", False, ("boolean",), "bool", "Start from the map of the previous call to fit.",
    ),
    Param(
        "hidden_sizes", NETWORK_HIDDEN_SIZES, (tuple, list), "tuple of int",
        "Hidden layer widths of the MLP encoder (ignored by the others).",
        Control(
            "Hidden layers", "The network's hidden ReLU layers (units in each), then a linear output layer.",
            "Map", "select_slider", choices=tuple((w, w) for w in _HIDDEN_WIDTHS), url_key="hidden",
            reset_on=("encoder",), applies=lambda v: v.get("encoder") == "mlp", labels={(w, w): f"2 × {w}" for w in _HIDDEN_WIDTHS},
            parser=lambda text: parse_layer_sizes(text), text_of=lambda sizes: ",".join(map(str, sizes)),
        ),
    ),
    Param(
        "pretrain_epochs", 0, whole_from(0), "int",
        "MLP encoder only: epochs of autoencoder pre-training (``pretraining``; a stand-in for "
        "the RBM pre-training of Min et al., 2010) before NCA trains a fresh network. 0: none; "
        "a warm start keeps the network it has.",
    ),
    Param(
        "kernel", "auto", (StrOptions(set(KERNEL_CHOICES)),), '{"auto", "gaussian", "student-t"}',
        "Similarity of two embedded points: exp(-d^2) as in the paper, or the heavy-tailed "
        "Student-t (1 + d^2 / a)^(-(a + 1) / 2) of Min et al. (2010). \"auto\": the Gaussian for "
        'a linear or diagonal map (as scikit-learn), the Student-t for ``encoder="mlp"``.',
        Control(
            "Kernel",
            "How fast a neighbour's chance of being picked falls with distance. The Student-t's "
            "heavy tail lets classes sit close in 2-D without crushing each other (Min et al., 2010).",
            "Map", "radio", choices=OPTIONS["kernel"], url_key="kernel", reset_on=("encoder",),
            labels={"gaussian": "Gaussian (the paper's)", "student-t": "Student-t (heavy-tailed)"},
        ),
    ),
    Param(
        "dof", None, (StrOptions({"learn"}), *positive(None)), 'float, "learn" or None',
        "Degrees of freedom a of the Student-t kernel: a positive number, None for the paper's "
        'choice d - 1 (at least 1), or "learn" to train it by gradient from d - 1, kept '
        "positive. Ignored by the Gaussian kernel.",
        Control(
            "Degrees of freedom (0 = d − 1)",
            "Smaller means heavier tails. 0 uses the paper's choice, d − 1 (at least 1); "
            "'learn' trains the tail weight by gradient along with the map, from d − 1.",
            "Map", "dof", low=0.0, high=DOF_MAX, url_key="dof", applies=lambda v: v.get("kernel") == "student-t",
            parser=lambda text: parse_dof(text), text_of=lambda dof: "0" if dof is None else str(dof),
            values_text=f"a number from 0 to {DOF_MAX:g} (0: d − 1) or learn",
        ),
    ),
    Param(
        "objective", "auto", (StrOptions(set(OBJECTIVE_CHOICES)),), '{"auto", "f", "g", "mcml"}',
        '"f" maximises sum_i p_i, the expected number of points classified correctly; "g" '
        'maximises sum_i log p_i; "mcml" minimises KL(P || Q) between the label distribution P '
        "(uniform over same-class pairs) and the joint q_ij over all pairs (dt-MCML of Min et "
        'al., 2010). The reported objective is then -KL (at most 0). "auto" is f for a linear or '
        'diagonal map (as scikit-learn). For ``encoder="mlp"`` it is "mcml" for a wide map of a '
        "set that is not large, else g: from random weights f's gradient vanishes for points "
        "among other classes, and g's does not (``rules.auto_objective``).",
        Control(
            "Objective",
            "f counts expected correct classifications; g is its log-likelihood version, which punishes "
            "hopeless points more; MCML pulls all same-class pairs together at once (Min et al., 2010).",
            "Map", "radio", choices=OPTIONS["objective"], url_key="objective", reset_on=("encoder", "n_components"),
            labels={
                "f": "f: expected correct (Σ pᵢ)",
                "g": "g: log-likelihood (Σ log pᵢ)",
                "mcml": "MCML: match pairs to classes (KL)",
            },
        ),
    ),
    Param(
        "standardize", False, (), "bool",
        "Run setting: rescale every feature to zero mean and unit variance before training.",
        Control(
            "Standardise inputs",
            "Rescale every feature to zero mean and unit variance first; useful when units differ (wine).",
            "Map", "toggle", url_key="std",
        ),
    ),
    # -- the optimiser -------------------------------------------------------------------
    Param(
        "optimizer", "auto", (StrOptions(set(OPTIMIZER_CHOICES)),), '{"auto", "lbfgs", "adam", "sgd"}',
        '"lbfgs": full batch, scipy\'s L-BFGS-B in float64 as scikit-learn; "adam" and "sgd": '
        "minibatches of anchors whose neighbours are taken from the whole training set. "
        f'"auto": L-BFGS for a linear or diagonal map on at most ``rules.LBFGS_MAX_SAMPLES`` '
        f"({rules.LBFGS_MAX_SAMPLES:,}) points, else Adam with tuned settings.",
        Control(
            "Optimiser",
            "L-BFGS uses every point each step; Adam and SGD take batches of anchors, whose neighbours "
            "still come from all points.",
            "Optimiser", "selectbox", choices=OPTIONS["optimizer"], url_key="optimizer",
            labels={"lbfgs": "L-BFGS (full batch)", "adam": "Adam (minibatch)", "sgd": "SGD (minibatch)"},
        ),
    ),
    Param(
        "learning_rate", None, positive(None), "float",
        "Minibatch step size (L-BFGS's line search sets its own); None: tuned to the data size "
        "for Adam on a map, 0.1 for SGD; for the MLP 0.003 (Adam) and 0.01 (SGD), a third of that "
        'with objective "mcml" (``rules.default_learning_rate``).',
        Control(
            "Learning rate", "Step size. If training diverges, lower it.",
            "Optimiser", "number", low=1e-5, high=1e3, url_key="lr", reset_on=("optimizer", "encoder", "n_components"),
        ),
    ),
    Param(
        "learning_rate_schedule", "auto", (StrOptions(set(SCHEDULE_CHOICES)),), '{"auto", "constant", "cosine"}',
        'Minibatch optimisers only. "cosine": the step falls from learning_rate to 0 along a half '
        'cosine over max_iter epochs, so the last epochs settle; "constant" keeps it. "auto": '
        "cosine for the MLP, constant for a linear or diagonal map. A warm start decays again "
        "from learning_rate; tol can end a run before the step reaches 0.",
        Control(
            "Step size over the run",
            "Constant keeps the learning rate; cosine lowers it smoothly to 0 by the last epoch, so "
            "a network's final epochs settle instead of jittering.",
            "Optimiser", "radio", choices=OPTIONS["learning_rate_schedule"], url_key="schedule",
            reset_on=("encoder",), applies=minibatch_applies, labels={"constant": "constant", "cosine": "cosine decay to 0"},
        ),
    ),
    Param(
        "batch_size", None, whole_from(1, None), "int",
        "Anchors per minibatch (ignored by L-BFGS); None: tuned to the data size.",
        Control(
            "Batch size", "Anchors per step (minibatch optimisers only).",
            "Optimiser", "select_slider", choices=(32, 64, 128, 256, 512, 1024, 2048, 4096), url_key="batch",
            applies=minibatch_applies, reset_on=("encoder", "n_components"),
        ),
    ),
    Param(
        "neighbors", "auto", (StrOptions(set(NEIGHBOR_CHOICES)),), '{"auto", "all", "nearest", "memory", "batch"}',
        'Minibatch optimisers only: where each batch\'s anchors take their neighbours. "all": '
        'every training point, embeddings recomputed at each step (exact); "nearest": each '
        "anchor's ``n_candidates`` nearest points in the current embedding (found with FAISS, "
        "again every ``candidate_refresh`` epochs) and a uniform sample of the rest that stands "
        "in for it in p_ij's normaliser (approximate; a step costs the same whatever the data "
        'size); "memory": a bank of all points\' embeddings updated with momentum (Wu et al., '
        '2018), gradients only through the batch; "batch": the batch alone. "auto": "memory" for '
        'the MLP encoder with Adam or SGD, "nearest" for a map trained in minibatches on more '
        f"than ``rules.NEAREST_MIN_SAMPLES`` ({NEAREST_MIN_SAMPLES:,}) points "
        f'(``rules.PICTURE_NEAREST_MIN_SAMPLES`` ({PICTURE_NEAREST_MIN_SAMPLES:,}) for d <= 3), else "all".',
        Control(
            "Neighbours from",
            "Where a batch's points find neighbours. All points is exact but recomputes every "
            "embedding each step; nearest points takes each point's nearest few (searched again "
            "each epoch) and a random sample of the rest, so a step costs the same on any data "
            "size; a memory bank keeps everyone's last embedding (Wu et al., 2018), cheap for a "
            "network; the batch alone is the naive baseline. Automatic: the bank for a network, "
            f"nearest points for a map on over {NEAREST_MIN_SAMPLES:,} points (over "
            f"{PICTURE_NEAREST_MIN_SAMPLES:,} for a 2-D or 3-D picture), else all points.",
            "Optimiser", "selectbox", choices=OPTIONS["neighbors"], url_key="neighbors", applies=minibatch_applies,
            labels={
                "auto": "automatic", "all": "all points (exact)", "nearest": "nearest points (approximate)",
                "memory": "memory bank", "batch": "this batch only",
            },
        ),
    ),
    Param(
        "bank_momentum", 0.5, (Interval(Real, 0, 1, closed="left"),), "float",
        "Weight of the old bank row in each memory-bank update.",
    ),
    Param(
        "n_candidates", None, whole_from(1, None), "int",
        'With neighbors "nearest": how many nearest points each anchor takes (None: '
        f'``rules.DEFAULT_CANDIDATES`` ({rules.DEFAULT_CANDIDATES})). Given with neighbors "all" or "auto", it asks for '
        '"nearest" with that many.',
    ),
    Param("candidate_refresh", 1, whole_from(1), "int", "Epochs between candidate searches."),
    Param(
        "sample_size", 1024, whole_from(1), "int",
        'With neighbors "nearest": points drawn uniformly at each step, shared by its anchors, '
        "that stand in for the points beyond each anchor's candidates in p_ij's normaliser (each "
        "draw for n / sample_size of them). More draws approximate it more closely and cost "
        "more per step.",
    ),
    Param(
        "image_shape", None, (tuple, list, None), "tuple of (int, int) or None",
        "(height, width) of image inputs, whose pixels are the features row by row. It turns on "
        "the image shift for a network (``shift``). None: the rows are not images.",
    ),
    Param(
        "shift", "auto", (StrOptions({"auto"}), Interval(Integral, 0, None, closed="left")), '"auto" or int',
        "Pixels by which each minibatch's anchor images move, afresh at every step "
        "(``augmentation.RandomShift``), so that a network cannot learn a few thousand images by "
        'heart. Needs ``image_shape`` and a minibatch optimizer with neighbors "memory" or '
        '"batch". "auto": one pixel per 16 of the images\' shorter side for ``encoder="mlp"`` '
        "(``rules.image_shift``), none for a map or without image_shape.",
        Control(
            "Shift images while training",
            "Every step sees its images moved by up to this many pixels, differently each time, so "
            "a network cannot learn the training images by heart. For images, with neighbours from "
            "a memory bank or the batch.",
            "Optimiser", "select_slider", choices=SHIFTS, url_key="shift", reset_on=("encoder",),
            labels={0: "off", 1: "1 pixel", 2: "2 pixels"}, applies=shift_applies, bound="image_shape",
        ),
    ),
    Param(
        "augment", None, (callable, None), "callable or None",
        "Alters each minibatch's anchors afresh at every step, as ``augment(X_batch, "
        "generator)`` on a tensor, returning one of the same shape, dtype and device: e.g. "
        "``augmentation.RandomShift((28, 28), 1)`` moves images by up to a pixel (what ``shift`` "
        'builds). Needs a minibatch optimizer with neighbors "memory" or "batch" (the default '
        "for the MLP), and replaces ``shift``; None: the inputs as given, or shifted as "
        "``shift`` says.",
    ),
    Param(
        "max_iter", None, whole_from(1, None), "int",
        "Maximum number of iterations (L-BFGS) or epochs (full passes of minibatch optimisers). "
        f"None: ``rules.LBFGS_MAX_ITER`` ({rules.LBFGS_MAX_ITER}) for L-BFGS, and for minibatch training a count tuned to the data size and the "
        "encoder (``rules.minibatch_defaults``).",
        Control(
            "Epochs", "Passes over the training set (L-BFGS: iterations).",
            "Optimiser", "slider", low=1, high=300, url_key="epochs", reset_on=("encoder", "n_components"),
        ),
    ),
    Param(
        "tol", 1e-5, (Interval(Real, 0, None, closed="left"),), "float",
        "L-BFGS stops when the loss falls by less than tol relative to its size or every "
        "gradient entry is below tol (as scikit-learn's L-BFGS-B); minibatch training when the "
        "epoch's mean objective changes by less than tol relative to its size.",
    ),
    Param(
        "weight_decay", 0.0, (Interval(Real, 0, None, closed="left"),), "float",
        "L2 penalty on the map, ``weight_decay * ||A||_F^2`` (the MLP: its squared weights), "
        "subtracted from the objective.",
        Control(
            "L2 weight on the map", "Penalises large maps; a large map means very few effective neighbours.",
            "Optimiser", "number", low=0.0, high=10.0, url_key="l2",
        ),
    ),
    # -- the run -------------------------------------------------------------------------
    Param(
        "device", "auto", (str,), "str",
        '"auto" uses CUDA, then Apple MPS, then the CPU, except for small problems that L-BFGS '
        "fits with the whole-matrix float64 engine (at most ``rules.DENSE_MAX_SAMPLES`` "
        f"({rules.DENSE_MAX_SAMPLES}) points, a linear or diagonal "
        "map, the Gaussian kernel, f or g), which stay on the CPU, where they run faster; or "
        "any torch device string.",
        Control(
            "Device",
            "Where training runs: auto picks CUDA, then MPS, then the CPU, and keeps small L-BFGS fits "
            "on the CPU, where they are faster.",
            "Run", "device",
        ),
    ),
    Param(
        "dtype", "auto", (StrOptions({"auto", "float32", "float64"}),), '{"auto", "float32", "float64"}',
        'Precision of training. "auto": float64 for full-batch L-BFGS on at most '
        f"``rules.LBFGS_MAX_SAMPLES`` ({rules.LBFGS_MAX_SAMPLES:,}) points, where scipy's search needs the loss's digits to "
        "reach scikit-learn's optimum and a step costs milliseconds, float32 otherwise "
        "(``rules.auto_dtype``).",
    ),
    Param(
        "center", False, ("boolean",), "bool",
        "Whether ``transform`` and ``fit_iter``'s snapshots subtract the training mean from the "
        "inputs before a linear or diagonal map, so that the embedding is centred, as PCA's is. "
        "Every point moves alike: distances, and so every kNN result, are the same either way. "
        "False: ``transform(X) = X @ components_.T``, as scikit-learn's. A network takes its "
        "inputs as given whatever this says: where they lie changes what it learns.",
    ),
    Param(
        "random_state", None, (Interval(Integral, 0, 2**32 - 1, closed="both"), None, np.random.RandomState),
        "int, RandomState or None", "Seeds random init, minibatch order and the display subset.",
        Control("Seed", "Same seed, same run.", "Run", "number", low=0, high=2**31 - 1, url_key="seed"),
    ),
    Param(
        "callback", None, (callable, None), "callable",
        "Called after each iteration or epoch as ``callback(params, n_iter)``, params being the "
        "flattened map (as scikit-learn) or, for the MLP, its flattened weights; returning True "
        "stops training and keeps the map learnt so far.",
    ),
    Param(
        "verbose", 0, ("verbose",), "int",
        "1 prints, as scikit-learn does, how the map was started, one line per iteration "
        "(objective, seconds), the training time, and a ConvergenceWarning when max_iter ends "
        "training before it converged.",
    ),
    Param(
        "train_size", 1_000_000, (), "int",
        "Run setting: how many training points the run learns from, a fixed stratified subset "
        "(all of them where the set has fewer); the test set stays whole.",
        Control(
            "Training points",
            "The run learns from a fixed stratified subset of the training set; the test set stays whole.",
            "Run", "select_slider", choices=(1000, 3000, 10000, 30000, 1_000_000), url_key="train",
            bound="n_samples", reset_on=("encoder",),
        ),
    ),
    Param(
        "display_size", 2000, (), "int",
        "Run setting: how many points, a fixed stratified subset, each frame draws.",
        Control(
            "Points drawn", "Training uses every point; the picture shows a fixed stratified subset.",
            "Run", "select_slider", choices=(500, 1000, 2000, 3000, 5000), bound="n_samples",
        ),
    ),
    Param(
        "k", 5, (), "int", "Run setting: neighbours that vote in the kNN accuracies.",
        Control(
            "k for kNN accuracy", "Neighbours that vote in the kNN accuracies.",
            "Run", "select_slider", choices=(1, 3, 5, 7, 9), url_key="k",
        ),
    ),
)  # fmt: skip

BY_NAME: dict[str, Param] = {p.name: p for p in PARAMS}
ESTIMATOR_PARAMS: tuple[Param, ...] = tuple(p for p in PARAMS if p.estimator)
