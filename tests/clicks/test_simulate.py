"""The click simulator against closed forms: each click model's click rate per position on a
fixed ranking equals its analytic probability (written here from the models' definitions)
within 4 standard errors over 10^6 sessions; the logging propensities equal exact enumeration
(Plackett-Luce over all permutations of a short list) and the frequencies of the shown rankings."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ndcglab.clicks.simulate import make_policy, parse_click_model, simulate_clicks
from ndcglab.data import RankingDataset
from ndcglab.errors import SpecError

LABELS = np.array([2, 0, 1, 2, 0, 1, 0, 0, 2, 1], dtype=float)
K = len(LABELS)
N = 1_000_000
EPS = 0.1


def _one_query(labels=LABELS) -> RankingDataset:
    n = len(labels)
    return RankingDataset(
        features=np.arange(n, dtype=np.float32)[::-1].reshape(-1, 1).copy(),
        labels=labels,
        boundaries=np.array([0, n]),
        query_ids=np.array(["q"]),
    )


def _attract(y, eps=EPS, ymax=2.0):
    return eps + (1 - eps) * (2.0**y - 1) / (2.0**ymax - 1)


def _closed_form(name: str, a: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Click probability per position from each model's definition (the papers' forms)."""
    r = np.arange(1, len(a) + 1, dtype=float)
    if name == "pbm(eta=1)":
        return a / r
    if name == "pbm(eta=2)":
        return a / r**2
    if name == "trust(eta=1,pos=0.95,neg=0.5)":
        return (1 / r) * (0.95 * a + (0.5 / r) * (1 - a))
    out = np.zeros(len(a))
    if name.startswith("ubm"):  # sum over the position of the last click above
        beta = 0.5
        p_last = {0: 1.0}
        for i in range(1, len(a) + 1):
            new = {}
            total = 0.0
            for last, pr in p_last.items():
                g = min(1.0, i**-1.0 * (i / (i - last)) ** beta)
                pc = pr * g * a[i - 1]
                total += pc
                new[last] = new.get(last, 0.0) + pr - pc
                new[i] = new.get(i, 0.0) + pc
            out[i - 1] = total
            p_last = new
        return out
    reach = 1.0  # P(examine position i)
    for i in range(len(a)):
        out[i] = reach * a[i]
        if name == "cascade":
            reach *= 1 - a[i]
        elif name == "dcm(lam=0.6)":
            reach = reach * (1 - a[i]) + reach * a[i] * 0.6
        elif name == "dbn(gamma=0.8)":
            reach = reach * 0.8 * ((1 - a[i]) + a[i] * (1 - s[i]))
        elif name == "sdbn":
            reach = reach * ((1 - a[i]) + a[i] * (1 - s[i]))
    return out


MODELS = [
    "pbm(eta=1)",
    "pbm(eta=2)",
    "cascade",
    "dcm(lam=0.6)",
    "dbn(gamma=0.8)",
    "sdbn",
    "ubm(eta=1,beta=0.5)",
    "trust(eta=1,pos=0.95,neg=0.5)",
]


@pytest.mark.parametrize("model", MODELS)
def test_click_rates_equal_the_closed_form_within_4_sigma(model):
    ds = _one_query()
    log = simulate_clicks(ds, model, None, N, k=K, seed=7)
    shown = LABELS[log.doc[:K]]  # the ideal ranking: labels in decreasing order
    assert (np.diff(shown) <= 0).all()
    a = _attract(shown)
    s = _attract(shown, eps=0.0)
    want = _closed_form(model, a, s)
    imp = np.bincount(log.position - 1, minlength=K)
    clk = np.bincount(log.position - 1, weights=log.click, minlength=K)
    assert (imp == N).all()
    got = clk / N
    sigma = np.sqrt(want * (1 - want) / N)
    assert (np.abs(got - want) <= 4 * sigma + 1e-12).all(), (model, got, want)
    # the model's own analytic form agrees with the definition too
    assert np.allclose(parse_click_model(model).click_probabilities(a, s), want, atol=1e-12)


def test_cascade_clicks_at_most_once_and_stops():
    log = simulate_clicks(_one_query(), "cascade", None, 20000, k=K, seed=1)
    per_session = np.add.reduceat(log.click.astype(int), log.session_starts()[:-1])
    assert per_session.max() == 1


def test_seeded_and_chunks_concatenate():
    ds = _one_query()
    whole = simulate_clicks(ds, "pbm", None, 300, k=5, seed=3)
    again = simulate_clicks(ds, "pbm", None, 300, k=5, seed=3)
    assert np.array_equal(whole.click, again.click)
    part = simulate_clicks(ds, "pbm", None, 100, k=5, seed=3, first_session=200)
    assert np.array_equal(part.click, whole.click[200 * 5 :])
    assert np.array_equal(part.session, whole.session[200 * 5 :])
    other = simulate_clicks(ds, "pbm", None, 300, k=5, seed=4)
    assert not np.array_equal(whole.click, other.click)


def _pl_exact(w: np.ndarray, k: int) -> np.ndarray:
    """P(item at position p) by enumerating every ranking (Plackett-Luce's product form)."""
    n = len(w)
    out = np.zeros((n, k))
    for perm in itertools.permutations(range(n)):
        p, left = 1.0, w.sum()
        for i in perm:
            p *= w[i] / left
            left -= w[i]
        for pos, i in enumerate(perm[:k]):
            out[i, pos] += p
    return out


@pytest.mark.parametrize("temperature", [0.3, 1.0, 5.0])
def test_plackett_luce_propensities_equal_enumeration(temperature):
    from ndcglab.clicks.simulate import pl_position_marginals

    scores = np.array([1.5, -0.2, 0.7, 3.0, 0.0, -4.0])
    got = pl_position_marginals(scores, np.array([0, 6]), 4, temperature)
    want = _pl_exact(np.exp(scores / temperature), 4)
    assert np.allclose(got, want, atol=1e-8)


@pytest.mark.parametrize("sampling", ["pl(temperature=0.7)", "randtop(n=4)", "swap"])
def test_logged_propensities_match_the_frequencies_shown(sampling):
    ds = _one_query(LABELS[:6])
    scores = np.array([0.3, 1.2, -0.5, 2.0, 0.1, 0.9])
    n = 60000
    log = simulate_clicks(ds, "pbm", make_policy(scores, sampling), n, k=4, seed=11)
    freq = np.zeros((6, 4))
    np.add.at(freq, (log.doc, log.position - 1), 1.0)
    freq /= n
    prop = np.full((6, 4), np.nan)
    prop[log.doc, log.position - 1] = log.propensity
    seen = ~np.isnan(prop)
    sigma = np.sqrt(prop[seen] * (1 - prop[seen]) / n)
    assert (np.abs(freq[seen] - prop[seen]) <= 4 * sigma + 1e-12).all(), (freq, prop)
    # every ranking the policy can show was shown: probabilities of the shown rows sum to 1
    assert np.allclose(np.nansum(prop, axis=0), 1.0)
    if sampling.startswith("pl"):
        assert np.allclose(prop, _pl_exact(np.exp(scores / 0.7), 4), atol=1e-8)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("pbn", "unknown click model"),
        ("pbm(eta=-1)", "out of range"),
        ("pbm(gamma=1)", "no parameter 'gamma'"),
        ("dcm(lam=1.5)", "out of range"),
        ("trust(pos=0.5,neg=0.6)", "neg <= pos"),
        ("pbm@10", "no @cutoff"),
    ],
)
def test_bad_click_model_specs_say_the_fix(spec, words):
    with pytest.raises(SpecError, match="Fix") as e:
        parse_click_model(spec)
    assert words in str(e.value)


def test_meta_states_the_truth():
    log = simulate_clicks(_one_query(), "trust(eta=1.5)", None, 10, k=4, seed=0)
    th = np.arange(1, 5) ** -1.5
    assert np.allclose(log.meta["examination"], th)
    neg = 0.65 / np.arange(1, 5)
    assert np.allclose(log.meta["alpha"], th * (1 - neg)) and np.allclose(
        log.meta["beta"], th * neg
    )
    assert log.meta["k"] == 4 and log.meta["seed"] == 0
    assert math.isclose(log.meta["attractiveness"]["ymax"], 2.0)


def test_the_attractiveness_mapping_and_its_parameters():
    """With eta = 0 every position is examined: the click rate of a label-y document is
    eps + (1 - eps)(2^y - 1)/(2^ymax - 1), here with eps = 0.3 and ymax = 4 (labels 0..2)."""
    n = 200_000
    log = simulate_clicks(_one_query(), "pbm(eta=0,eps=0.3,ymax=4)", None, n, k=K, seed=5)
    y = LABELS[log.doc[:K]]
    want = 0.3 + 0.7 * (2.0**y - 1) / 15.0
    got = np.bincount(log.position - 1, weights=log.click, minlength=K) / n
    assert (np.abs(got - want) <= 4 * np.sqrt(want * (1 - want) / n)).all()
    assert log.meta["attractiveness"] == {"eps": 0.3, "ymax": 4.0}


def test_short_lists_empty_queries_and_k_beyond_the_lists():
    ds = RankingDataset(
        features=np.zeros((5, 1), dtype=np.float32),
        labels=np.array([1.0, 0.0, 2.0, 0.0, 1.0]),
        boundaries=np.array([0, 2, 2, 5]),  # the middle query has no document
        query_ids=np.array(["a", "empty", "c"]),
    )
    log = simulate_clicks(ds, "dbn", None, 2000, k=10, seed=0)
    assert set(log.query.tolist()) == {0, 2}
    per = np.diff(log.session_starts())
    assert set(per.tolist()) == {2, 3}
    from ndcglab.clicks import validate_log

    validate_log(log, dataset=ds)


def test_the_same_log_whatever_the_number_of_threads():
    import numba

    ds = _one_query()
    pol = make_policy(np.linspace(0, 1, K), "pl(temperature=0.5)")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = simulate_clicks(ds, "dbn", pol, 3000, k=6, seed=9)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = simulate_clicks(ds, "dbn", pol, 3000, k=6, seed=9)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one.doc, two.doc) and np.array_equal(one.click, two.click)
