"""The objectives' values and weights through the log-similarities, in closed form,
against autograd, in float64 and float32."""

import math

import pytest
import torch

from nca_core.objective.weights import McmlTotals, mcml_value_and_weights, per_anchor_terms_and_weights
from tests.objective.reference import objective_terms


def _logit_terms_by_autograd(logits: torch.Tensor, same: torch.Tensor, objective: str):
    """The reference: f's or g's terms by masked log-sum-exp, their weights by autograd."""
    logits = logits.detach().clone().requires_grad_(True)
    log_p = torch.logsumexp(logits.masked_fill(~same, -float("inf")), 1) - torch.logsumexp(logits, 1)
    terms = objective_terms(log_p, objective)
    terms.sum().backward()
    return terms.detach(), torch.nan_to_num(logits.grad)


@pytest.mark.parametrize("objective", ["f", "g"])
def test_per_anchor_terms_and_weights_are_exact_in_float32_for_far_class_mates(objective):
    """Closed-form terms and d(term)/d(logit), float32 against a float64 autograd reference:
    a row whose only class mate is 150 units of log-similarity away (its mass underflows
    in float32 unless taken again), a row with an excluded pair, one with no class mate."""
    gen = torch.Generator().manual_seed(0)
    logits64 = -5.0 * torch.rand(6, 40, generator=gen, dtype=torch.float64)
    logits64[0, 7] = -150.0
    logits64[1, 3] = -float("inf")
    same = torch.rand(6, 40, generator=gen) < 0.3
    same[0] = False
    same[0, 7] = True
    same[2] = False
    want_terms, want_weights = _logit_terms_by_autograd(logits64, same, objective)
    for dtype, tolerance in ((torch.float64, 1e-12), (torch.float32, 1e-5)):
        terms, weights = per_anchor_terms_and_weights(logits64.to(dtype), same, objective)
        torch.testing.assert_close(terms.double(), want_terms, rtol=tolerance, atol=tolerance * 1e-3)
        torch.testing.assert_close(weights.double(), want_weights, rtol=tolerance, atol=tolerance * 1e-3)
    assert want_terms[2] == 0.0 and float(weights[2].abs().sum()) == 0.0
    if objective == "g":
        assert want_terms[0] < -140.0  # the far row is really far: its term is about -150


def _mcml_by_autograd(log_k: torch.Tensor, mates: torch.Tensor):
    """-KL over a whole block by masked log-sum-exp, its weights by autograd."""
    log_k = log_k.detach().clone().requires_grad_(True)
    n_same = int(mates.sum())
    value = torch.where(mates, log_k, 0.0).sum() / n_same - torch.logsumexp(log_k.flatten(), 0)
    value.backward()
    return value.item() + math.log(n_same), log_k.grad


@pytest.mark.parametrize("objective", ["f", "g"])
def test_a_row_without_any_neighbour_adds_nothing_and_stays_finite(objective):
    """Every pair of the first row excluded (an anchor with no candidate and every draw
    among its own): term 0 and no weight, not 0 * inf; the other rows as usual."""
    logits = torch.tensor([[-math.inf, -math.inf, -math.inf], [0.0, -1.0, -math.inf]])
    mates = torch.tensor([[False, False, False], [True, False, False]])
    terms, G = per_anchor_terms_and_weights(logits, mates, objective)
    want_terms, want_G = _logit_terms_by_autograd(logits[1:].double(), mates[1:], objective)
    assert terms[0] == 0.0 and bool((G[0] == 0).all())
    torch.testing.assert_close(terms[1:].double(), want_terms, rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(G[1:].double(), want_G, rtol=1e-6, atol=1e-7)


def test_mcml_value_and_weights_match_autograd_whole_and_in_shares():
    """The whole block's -KL and G; then the same pairs cut in two row blocks with the
    totals of both, whose shares add up to the whole (as the engine's walk adds them)."""
    gen = torch.Generator().manual_seed(1)
    log_k64 = -30.0 * torch.rand(8, 12, generator=gen, dtype=torch.float64)
    log_k64[torch.arange(8), torch.arange(8)] = -float("inf")  # anchors among the references
    mates = torch.rand(8, 12, generator=gen) < 0.4
    mates[torch.arange(8), torch.arange(8)] = False
    want_value, want_weights = _mcml_by_autograd(log_k64, mates)
    for dtype, tolerance in ((torch.float64, 1e-12), (torch.float32, 1e-5)):
        log_k = log_k64.to(dtype)
        value, weights = mcml_value_and_weights(log_k, mates)
        assert value == pytest.approx(want_value, rel=tolerance)
        torch.testing.assert_close(weights.double(), want_weights, rtol=tolerance, atol=tolerance * 1e-3)
        totals = McmlTotals(float(torch.logsumexp(log_k64.flatten(), 0)), int(mates.sum()))
        shares = [mcml_value_and_weights(log_k[rows], mates[rows], totals) for rows in (slice(0, 3), slice(3, 8))]
        whole = sum(share for share, _ in shares) - totals.log_norm + math.log(totals.n_same)
        assert whole == pytest.approx(want_value, rel=tolerance)
        torch.testing.assert_close(
            torch.cat([w for _, w in shares]).double(), want_weights, rtol=tolerance, atol=tolerance * 1e-3
        )


def test_mcml_without_class_mates_is_zero_with_no_weight():
    value, weights = mcml_value_and_weights(torch.zeros(3, 3), torch.zeros(3, 3, dtype=torch.bool))
    assert value == 0.0 and float(weights.abs().sum()) == 0.0


def test_an_unknown_per_anchor_objective_is_refused():
    with pytest.raises(ValueError, match="per-anchor objective must be one of"):
        per_anchor_terms_and_weights(torch.zeros(2, 2), torch.ones(2, 2, dtype=torch.bool), "mcml")
