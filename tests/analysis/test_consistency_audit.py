"""The consistency audit reproduces Ravikumar, Tewari and Yang's known answers (AISTATS 2011):
squared, cosine and ListNet are not NDCG-consistent, their Z-normalised versions are."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")

from ndcglab.analysis.consistency_audit import (
    LabelDistribution,
    audit_all,
    audit_loss,
    check_distribution,
    draw_distributions,
    eta_ordered,
    expected_normalised_gains,
    minimise_expected_loss,
    random_calls,
)

#: few distributions keep the tests fast; the adversarial ones come first
DISTS = draw_distributions(10, seed=0)

#: the worked example of Ravikumar et al. §3.2.1 (two documents)
WORKED = LabelDistribution(np.array([[5, 4], [1, 3]]), np.array([0.3, 0.7]))


def test_expected_normalised_gains_worked_example() -> None:
    eta = expected_normalised_gains(WORKED)
    np.testing.assert_allclose(eta, [0.3216, 0.7533], atol=5e-5)


def test_distributions_are_small_and_adversarial_first() -> None:
    for d in DISTS:
        assert 3 <= d.labels.shape[1] <= 5
        assert d.labels.min() >= 0 and d.labels.max() <= 3
        assert abs(d.probs.sum() - 1) < 1e-12
    assert all(d.kind.startswith("adversarial") for d in DISTS[:5])


def test_check_counts_only_strict_differences() -> None:
    eta = np.array([0.5, 0.5, 0.1])
    assert check_distribution(eta, np.array([1.0, 2.0, 0.0]), k=3)[0] == ()
    bad, gap = check_distribution(eta, np.array([1.0, 2.0, 3.0]), k=3)
    assert set(bad) == {(0, 2), (1, 2)} and gap == pytest.approx(0.4)
    # a tie in the scores between different E[G/Z] is a violation
    assert check_distribution(eta, np.array([1.0, 1.0, 1.0]), k=3)[0]
    # with k = 1 only the document placed first matters
    assert check_distribution(eta, np.array([3.0, 2.0, 2.5]), k=1)[0] == ()


def test_worked_example_minimisers() -> None:
    s, _ = minimise_expected_loss("squared", WORKED)
    np.testing.assert_allclose(s, [10.0, 9.4], atol=1e-6)
    s, _ = minimise_expected_loss("consistent_squared", WORKED)
    np.testing.assert_allclose(s, expected_normalised_gains(WORKED), atol=1e-6)


@pytest.mark.parametrize("loss", ["squared", "cosine", "listnet"])
def test_known_not_consistent(loss: str) -> None:
    r = audit_loss(loss, distributions=DISTS, restarts=1, stop_at_first=True)
    assert r.verdict == "not consistent"
    ce = r.counter_example
    assert ce is not None and ce.violations
    print(f"{loss}: counter-example\n{ce.text()}")
    # the counter-example holds: some pair is strictly ordered the wrong way by s*
    i, j = ce.violations[0]
    assert ce.eta[i] > ce.eta[j] and ce.scores[i] <= ce.scores[j] + 1e-9


@pytest.mark.parametrize("loss", ["consistent_squared", "consistent_cosine", "consistent_listnet"])
def test_z_normalised_consistent(loss: str) -> None:
    r = audit_loss(f"{loss}(norm=z)", distributions=DISTS, restarts=1)
    assert r.verdict == "consistent", r.text()
    assert r.failures == 0 and r.distributions == len(DISTS)


def test_boosting_is_skipped_and_registry_is_read_at_run_time() -> None:
    (r,) = audit_all(count=1, losses=["adarank"])
    assert r.verdict == "skipped" and "boosting" in r.reason


def test_cli_subprocess() -> None:
    cmd = [sys.executable, "-m", "ndcglab.cli.main", "audit-consistency"]
    out = subprocess.run(
        [*cmd, "listnet", "--distributions", "10", "--restarts", "1", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["loss"] == "listnet" and payload["verdict"] == "not consistent"
    assert payload["counter_example"]["violations"]
    bad = subprocess.run(
        [*cmd, "squared", "--measure", "map"], capture_output=True, text=True, timeout=300
    )
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error:") and "Fix" in lines[0]


def test_random_losses_are_averaged_over_separate_calls():
    """A random loss gives every list of one call the same draws (the registry's randomness
    rule), so the audit averages separate calls: 64 draws in all, ⌈64 / samples⌉ calls for a
    loss that averages ``samples`` draws itself."""
    import torch

    from ndcglab.losses import get_loss

    assert random_calls(get_loss("listmle")) == 64
    assert random_calls(get_loss("gumbel_approx_ndcg")) == 8
    assert random_calls(get_loss("gumbel_approx_ndcg(samples=3)")) == 22
    assert random_calls(get_loss("listnet")) == 64  # not random: the audit does not use it
    gumbel = get_loss("gumbel_approx_ndcg")
    y = torch.tensor([[2.0, 1.0, 0.0]]).repeat(4, 1)
    s = torch.tensor([[0.3, 0.1, -0.2]], dtype=torch.float64).repeat(4, 1)
    rows = gumbel(s, y, generator=torch.Generator().manual_seed(0))
    assert torch.equal(rows, rows[:1].expand(4))  # one call: one draw for every row
    gen = torch.Generator().manual_seed(0)
    a, b = gumbel(s[:1], y[:1], generator=gen), gumbel(s[:1], y[:1], generator=gen)
    assert not torch.equal(a, b)  # separate calls: separate draws
    # the minimiser of the averaged objective stays finite and orders the one label vector
    dist = LabelDistribution(np.array([[2, 1, 0]]), np.array([1.0]))
    scores, value = minimise_expected_loss("gumbel_approx_ndcg", dist, restarts=1)
    assert np.all(np.isfinite(scores)) and np.isfinite(value)
    assert scores[0] > scores[1] > scores[2]


def test_eta_ordered_start_and_explicit_starts():
    """The refutation start: s*'s values rearranged into η's order; ``restarts=0`` with
    ``starts`` minimises from those only (a convex loss reaches the same minimiser)."""
    np.testing.assert_array_equal(
        eta_ordered(np.array([3.0, 1.0, 2.0]), np.array([0.1, 0.5, 0.3])), [1.0, 3.0, 2.0]
    )
    np.testing.assert_array_equal(
        eta_ordered(np.array([0.0, 2.0, 1.0]), np.array([0.2, 0.2, 0.1])), [2.0, 1.0, 0.0]
    )
    s0, v0 = minimise_expected_loss("squared", WORKED)
    s1, v1 = minimise_expected_loss("squared", WORKED, restarts=0, starts=[np.array([5.0, -5.0])])
    np.testing.assert_allclose(s1, s0, atol=1e-6)
    assert v1 == pytest.approx(v0, abs=1e-10)


def test_eta_follows_the_measures_rounding_and_short_rules() -> None:
    """The cut-off and the short rule of the audited measure are the measures' conventions:
    ``@0.5n`` of 3 documents keeps 1 position with ``rounding=floor`` and 2 with ``ceil``
    (Cutoff.k_for), and ``short=zero`` gives NDCG@4 = 0 to a list of 3, so η = 0."""
    dist = LabelDistribution(np.array([[2, 1, 0]]), np.array([1.0]))
    g = np.array([3.0, 1.0, 0.0])  # exp2 gains
    z1, z2 = 3.0, 3.0 + 1.0 / np.log2(3.0)
    np.testing.assert_allclose(
        expected_normalised_gains(dist, "ndcg(rounding=floor)@0.5n"), g / z1, rtol=1e-15
    )
    np.testing.assert_allclose(expected_normalised_gains(dist, "ndcg@0.5n"), g / z2, rtol=1e-15)
    assert not expected_normalised_gains(dist, "ndcg(short=zero)@4").any()
    np.testing.assert_allclose(
        expected_normalised_gains(dist, "ndcg@4"), expected_normalised_gains(dist, "ndcg")
    )
