"""Plans for tests that build an epoch strategy around a ``Problem`` of their own."""

from nca_core.config.plan import Plan, make_plan
from nca_core.config.rules import DataShape


def plan_of(problem, **request) -> Plan:
    """The plan of ``request`` for the problem's data, objective, kernel, weight decay and
    augmentation (``config.plan.make_plan``); a request the estimator would refuse raises
    its ValueError, as a fit does."""
    n_classes = int(problem.y.max()) + 1
    asked = {
        "encoder": getattr(problem.encoder, "name", "linear"),
        "objective": problem.objective,
        "kernel": problem.kernel.name,
        "weight_decay": problem.weight_decay,
        "augment": problem.augment,
        "device": str(problem.X.device),
        **request,
    }
    plan = make_plan(asked, DataShape(len(problem.X), problem.X.shape[1], n_classes))
    for note in plan.notes:
        if note.level == "error":
            raise ValueError(note.error)
    return plan
