"""scikit-learn's own NCA test suite, run against nca_core.NCA.

The tests are imported from the installed scikit-learn (not copied) and see our estimator
under scikit-learn's class name, so its verbose lines read as they expect. Tests that call
scikit-learn's private functions or match its exact error wording are left out, each with
the reason.
"""

import pytest

suite = pytest.importorskip("sklearn.neighbors.tests.test_nca")

from nca_core import NCA  # noqa: E402

PRIVATE = {
    "test_toy_example_collapse_points": "computes the loss with scikit-learn's private _loss_grad_lbfgs",
    "test_finite_differences": "checks scikit-learn's private _loss_grad_lbfgs (ours: tests/objective/test_function.py)",
    "test_expected_transformation_shape": "calls scikit-learn's private _loss_grad_lbfgs",
}


# These raise ValueError here too, for the same inputs, with our own words; the shape rules
# themselves are tested in tests/config/test_rules.py and tests/estimator/test_nca.py.
WORDING = {
    "test_init_transformation": "matches scikit-learn's exact message for an init of the wrong width",
    "test_n_components": "matches scikit-learn's exact message for n_components against init",
    "test_params_validation": "matches scikit-learn's exact message for an init taller than wide",
    "test_warm_start_validation": "matches scikit-learn's exact message for a warm start on other data",
}


class NeighborhoodComponentsAnalysis(NCA):
    """nca_core.NCA under scikit-learn's name, on the CPU."""


@pytest.fixture(autouse=True)
def _our_estimator(monkeypatch):
    monkeypatch.setattr(suite, "NeighborhoodComponentsAnalysis", NeighborhoodComponentsAnalysis)


def _wrap(name):
    test = getattr(suite, name)
    reason = PRIVATE.get(name) or WORDING.get(name)
    return pytest.mark.skip(reason=reason)(test) if reason else test


for _name in dir(suite):
    if _name.startswith("test_"):
        globals()[_name] = _wrap(_name)
