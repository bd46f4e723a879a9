"""The widget group that turns sidebar controls into a RunConfig."""

from __future__ import annotations

import streamlit as st

from nca_core import available_devices
from nca_core.datasets import Dataset
from nca_core.runs import RunConfig, recommended_config

from . import share

INIT_LABELS = {"pca": "PCA", "lda": "LDA", "identity": "identity", "random": "random"}
OPTIMIZER_LABELS = {"lbfgs": "L-BFGS (full batch)", "adam": "Adam (minibatch)", "sgd": "SGD (minibatch)"}
OBJECTIVE_LABELS = {
    "f": "f: expected correct (Σ pᵢ)",
    "g": "g: log-likelihood (Σ log pᵢ)",
    "mcml": "MCML: match pairs to classes (KL)",
}
ENCODER_LABELS = {
    "linear": "linear (full d × D map)",
    "diagonal": "diagonal (feature scaling)",
    "mlp": "neural network (MLP, nonlinear)",
}
KERNEL_LABELS = {"gaussian": "Gaussian (the paper's)", "student-t": "Student-t (heavy-tailed)"}
NEIGHBOR_LABELS = {
    "auto": "automatic",
    "all": "all points (exact)",
    "memory": "memory bank",
    "batch": "this batch only",
}
DEEP_LEARNING_RATE = 0.003


def _index(options, value) -> int:
    options = list(options)
    return options.index(value) if value in options else 0


def run_settings(data: Dataset, key: str, overrides: dict | None = None) -> RunConfig:
    """Sidebar controls, defaulting to what converges on ``data`` (changed by ``overrides``,
    e.g. from a shared link); ``key`` scopes widgets to the dataset so that switching
    datasets restores that dataset's defaults."""
    base = recommended_config(data)
    D = data.n_features
    overrides = dict(overrides or {})
    choices = sorted({2, 3, *(d for d in (5, 10, 16, 32, 64) if d <= D)} & set(range(1, D + 1)))
    if overrides.get("n_components", choices[0]) not in choices:
        st.session_state.setdefault(share.NOTICES, []).append(
            f"d={overrides.pop('n_components')} ignored: this dataset allows {', '.join(map(str, choices))}"
        )
    base = base.replace(**overrides)
    with st.sidebar:
        st.subheader("Map")
        n_components = st.select_slider(
            "Output dimension d",
            choices,
            value=min(base.n_components, D),
            key=f"{key}-d",
            help="2 or 3 to look at; larger keeps more for kNN (then the first three coordinates are drawn).",
        )
        encoder = st.selectbox(
            "Map type",
            list(ENCODER_LABELS),
            format_func=ENCODER_LABELS.get,
            index=_index(ENCODER_LABELS, base.encoder),
            key=f"{key}-encoder",
            help="A diagonal map only rescales features (the paper's feature-weighting variant); "
            "a neural network bends space too (nonlinear NCA), starting from random weights.",
        )
        deep = encoder == "mlp"
        init = st.selectbox(
            "Start from",
            list(INIT_LABELS),
            format_func=INIT_LABELS.get,
            index=_index(INIT_LABELS, "random" if deep else base.init),
            key=f"{key}-init-{'network' if deep else 'map'}",
            disabled=deep,
            help="A network always starts from random weights. A linear map can start from PCA (the "
            "directions of largest variance), LDA (the class-separating ones), the identity or at random.",
        )
        hidden_width = st.select_slider(
            "Hidden units per layer",
            [32, 64, 128, 256, 512],
            value=base.hidden_width,
            key=f"{key}-hidden",
            disabled=not deep,
            help="The network has two hidden ReLU layers of this width and a linear output layer.",
        )
        kernel = st.radio(
            "Kernel",
            list(KERNEL_LABELS),
            format_func=KERNEL_LABELS.get,
            index=_index(KERNEL_LABELS, base.kernel),
            key=f"{key}-kernel",
            horizontal=True,
            help="How fast a neighbour's chance of being picked falls with distance. The Student-t's "
            "heavy tail lets classes sit close in 2-D without crushing each other (Min et al., 2010).",
        )
        student = kernel == "student-t"
        learn_dof = st.toggle(
            "Learn the degrees of freedom",
            value=base.learn_dof,
            key=f"{key}-learn-dof",
            disabled=not student,
            help="Train the Student-t's tail weight by gradient along with the map.",
        )
        dof = st.number_input(
            "Degrees of freedom (0 = d − 1)",
            min_value=0.0,
            max_value=1000.0,
            value=base.dof,
            format="%.3g",
            key=f"{key}-dof",
            disabled=not student or learn_dof,
            help="Smaller means heavier tails. 0 uses the paper's choice, d − 1 (at least 1).",
        )
        objective = st.radio(
            "Objective",
            list(OBJECTIVE_LABELS),
            format_func=OBJECTIVE_LABELS.get,
            index=_index(OBJECTIVE_LABELS, base.objective),
            key=f"{key}-objective",
            help="f counts expected correct classifications; g is its log-likelihood version, which punishes "
            "hopeless points more; MCML pulls all same-class pairs together at once (Min et al., 2010).",
        )
        standardize = st.toggle(
            "Standardise inputs",
            value=base.standardize,
            key=f"{key}-std",
            help="Rescale every feature to zero mean and unit variance first; useful when units differ (wine).",
        )
        st.subheader("Optimiser")
        optimizer = st.selectbox(
            "Optimiser",
            list(OPTIMIZER_LABELS),
            format_func=OPTIMIZER_LABELS.get,
            index=_index(OPTIMIZER_LABELS, base.optimizer),
            key=f"{key}-opt",
            help="L-BFGS uses every point each step; Adam and SGD take batches of anchors, whose neighbours still come from all points.",
        )
        minibatch = optimizer != "lbfgs"
        learning_rate = st.number_input(
            "Learning rate",
            min_value=1e-5,
            max_value=1e3,
            value=(DEEP_LEARNING_RATE if deep and "learning_rate" not in overrides else base.learning_rate)
            if minibatch or "learning_rate" in overrides
            else 1.0,
            format="%.4g",
            key=f"{key}-lr-{optimizer}-{encoder}",
            help="Step size. If training diverges, lower it.",
        )
        batch_size = st.select_slider(
            "Batch size",
            [32, 64, 128, 256, 512, 1024, 2048, 4096],
            value=base.batch_size,
            key=f"{key}-batch",
            disabled=not minibatch,
            help="Anchors per step (minibatch optimisers only).",
        )
        neighbors = st.selectbox(
            "Neighbours from",
            list(NEIGHBOR_LABELS),
            format_func=NEIGHBOR_LABELS.get,
            index=_index(NEIGHBOR_LABELS, base.neighbors),
            key=f"{key}-neighbors",
            disabled=not minibatch,
            help="Where a batch's points find neighbours. All points is exact but recomputes every "
            "embedding each step; a memory bank keeps everyone's last embedding (Wu et al., 2018), "
            "cheap for a network; the batch alone is the naive baseline. Automatic: the bank for a "
            "network, all points for a linear map.",
        )
        epochs = st.slider(
            "Epochs",
            1,
            300,
            base.epochs,
            key=f"{key}-epochs",
            help="Passes over the training set (L-BFGS: iterations).",
        )
        weight_decay = st.number_input(
            "L2 weight on the map",
            min_value=0.0,
            max_value=10.0,
            value=base.weight_decay,
            format="%.4g",
            key=f"{key}-l2",
            help="Penalises large maps; a large map means very few effective neighbours.",
        )
        st.subheader("Run")
        devices = ["auto", *available_devices()]
        device = st.selectbox(
            "Device", devices, key=f"{key}-device", help=f"Available here: {', '.join(devices[1:])}."
        )
        seed = st.number_input(
            "Seed", 0, 2**31 - 1, base.seed, key=f"{key}-seed", help="Same seed, same run."
        )
        display_size = st.select_slider(
            "Points drawn",
            sorted({min(v, len(data.y_train)) for v in (500, 1000, 2000, 3000, 5000)}),
            value=base.display_size
            if base.display_size in (500, 1000, 2000, 3000, 5000)
            else min(3000, len(data.y_train)),
            key=f"{key}-display",
            help="Training uses every point; the picture shows a fixed stratified subset.",
        )
        k = st.select_slider("k for kNN accuracy", [1, 3, 5, 7, 9], value=base.k, key=f"{key}-k")
    return RunConfig(
        n_components=int(n_components),
        init=init,
        objective=objective,
        encoder=encoder,
        hidden_width=int(hidden_width),
        kernel=kernel,
        dof=float(dof),
        learn_dof=bool(learn_dof),
        neighbors=neighbors,
        optimizer=optimizer,
        learning_rate=float(learning_rate),
        batch_size=int(batch_size),
        epochs=int(epochs),
        weight_decay=float(weight_decay),
        standardize=bool(standardize),
        device=device,
        seed=int(seed),
        display_size=int(display_size),
        k=int(k),
    )
