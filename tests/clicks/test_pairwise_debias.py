"""Pairwise debiasing (Hu, Wang, Peng and Li, "Unbiased LambdaMART", WWW 2019): the pairs and the
bias update re-derived from the paper by slow loops over the sessions of a tiny log, the click
bias recovering the true examination ratios of a simulated PBM log, and the front door (library
and command line) training on IPS labels under the estimated bias."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ndcglab.clicks import ClickLog, write_log
from ndcglab.clicks.learn import click_labels, click_statistics, fit_clicks
from ndcglab.clicks.pairwise_debias import (
    click_pairs,
    fit_pairwise,
    pair_losses,
    update_position_biases,
)
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.data import load_dataset
from ndcglab.errors import NdcglabError
from ndcglab.training import fit, load_trained

from ..test_cli_safety import ndcglab

DATA = "synthetic:default"


def _tiny_log() -> ClickLog:
    # 4 sessions over documents 0..5 (two queries), up to 3 positions
    rows = [  # session, query, doc, position, click
        (0, 0, 0, 1, 1), (0, 0, 1, 2, 0), (0, 0, 2, 3, 1),
        (1, 0, 2, 1, 0), (1, 0, 0, 2, 1), (1, 0, 1, 3, 0),
        (2, 1, 3, 1, 0), (2, 1, 4, 2, 0), (2, 1, 5, 3, 1),
        (3, 0, 0, 1, 1), (3, 0, 1, 2, 0), (3, 0, 2, 3, 0),
    ]  # fmt: skip
    a = np.array(rows)
    return ClickLog(
        session=a[:, 0].astype(np.int64), query=a[:, 1].astype(np.int64),
        doc=a[:, 2].astype(np.int64), position=a[:, 3].astype(np.int32),
        click=a[:, 4].astype(np.int8), propensity=np.ones(len(a)),
        qids=np.array(["q0", "q1"], dtype=object), meta={"k": 3},
    )  # fmt: skip


def _slow_pairs(log: ClickLog) -> list[tuple[int, int, int, int]]:
    """Every (clicked doc, unclicked doc, its position, their position) of each session."""
    out = []
    for s in np.unique(log.session):
        r = np.flatnonzero(log.session == s)
        for i in r:
            for j in r:
                if log.click[i] == 1 and log.click[j] == 0:
                    out.append((log.doc[i], log.doc[j], log.position[i], log.position[j]))
    return out


def test_pairs_equal_a_slow_enumeration():
    log = _tiny_log()
    pairs = click_pairs(log)
    got = {}
    for t in zip(pairs.hi, pairs.lo, pairs.pos_hi, pairs.pos_lo, pairs.count, strict=True):
        got[tuple(int(v) for v in t[:4])] = t[4]
    want: dict[tuple[int, ...], float] = {}
    for t in _slow_pairs(log):
        key = tuple(int(v) for v in t)
        want[key] = want.get(key, 0) + 1
    assert got == want


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_bias_update_equals_the_paper_by_a_slow_loop(p):
    log = _tiny_log()
    scores = np.array([0.3, -0.2, 0.9, 0.1, 0.4, -0.5])
    t_plus_old = np.array([1.0, 0.7, 0.4])
    t_minus_old = np.array([1.0, 0.8, 0.6])
    pairs = click_pairs(log)
    t_plus, t_minus = update_position_biases(
        pairs, pair_losses(pairs, scores), t_plus_old, t_minus_old, p=p
    )
    # the paper: t+_i ∝ (Σ_q Σ_{j:(i,j)} L(f(x_i), f(x_j)) / t-_j)^(1/(p+1)), relative to
    # position 1; t-_j likewise over the pairs (i, j) weighted by 1/t+_i
    num_plus, num_minus = np.zeros(3), np.zeros(3)
    for d_hi, d_lo, i, j in _slow_pairs(log):
        loss = np.log(1 + np.exp(-(scores[d_hi] - scores[d_lo])))
        num_plus[i - 1] += loss / t_minus_old[j - 1]
        num_minus[j - 1] += loss / t_plus_old[i - 1]
    np.testing.assert_allclose(t_plus, (num_plus / num_plus[0]) ** (1 / (p + 1)), rtol=1e-12)
    np.testing.assert_allclose(t_minus, (num_minus / num_minus[0]) ** (1 / (p + 1)), rtol=1e-12)


@pytest.fixture(scope="module")
def pbm_world():
    ds = load_dataset(DATA)
    scores = 0.5 * ds.labels + np.random.default_rng(0).normal(0, 1, ds.n_docs)
    log = simulate_clicks(ds, "pbm(eta=1)", make_policy(scores, "pl"), 20_000, k=5, seed=1)
    return ds, log


def test_click_bias_recovers_the_true_examination_ratios(pbm_world):
    ds, log = pbm_world
    theta = np.asarray(log.meta["examination"])
    truth = theta / theta[0]
    result = fit_pairwise(ds, log, rounds=5)
    assert result.t_plus[0] == 1.0 and result.t_minus[0] == 1.0
    np.testing.assert_allclose(result.t_plus, truth, atol=0.04)
    # the first round (a ranker trained as if unbiased) is further from the truth than the last
    first = np.abs(result.history[0][0] - truth).max()
    assert np.abs(result.t_plus - truth).max() <= first + 1e-12
    # the ranker orders documents by relevance on average (positive correlation per query)
    s = result.predict(ds.features)
    assert np.corrcoef(s, ds.labels)[0, 1] > 0.3


def test_front_door_trains_on_ips_labels_under_the_click_bias(pbm_world, tmp_path):
    ds, full = pbm_world
    log = full.take(full.session < 3000)
    res = fit_clicks(ds, log, estimator="pairwise", loss="squared", epochs=2)
    t_plus = fit_pairwise(ds, log).t_plus
    np.testing.assert_allclose(res.examination, t_plus)
    labels = click_labels(click_statistics(log, ds), estimator="ips", examination=t_plus)
    np.testing.assert_allclose(res.labels, labels)
    lib = fit(dataclasses.replace(ds, labels=labels), loss="squared(gain=linear)", epochs=2)
    np.testing.assert_allclose(res.predict(ds), lib.predict(ds), rtol=1e-6, atol=1e-6)


@pytest.mark.slow
def test_command_line_pairwise(pbm_world, tmp_path):
    ds, full = pbm_world
    log = full.take(full.session < 3000)
    labels = click_labels(
        click_statistics(log, ds), estimator="ips", examination=fit_pairwise(ds, log).t_plus
    )
    lib = fit(dataclasses.replace(ds, labels=labels), loss="squared(gain=linear)", epochs=2)
    write_log(log, tmp_path / "log.npz")
    run = ndcglab("train", DATA, "--clicks", "log.npz", "--estimator", "pairwise", "--loss",
                  "squared", "--epochs", "2", "--out", "m.zip", "--quiet",
                  cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(
        load_trained(tmp_path / "m.zip").predict(ds), lib.predict(ds), rtol=1e-6, atol=1e-6
    )
    # a statistics file has no sessions: one error line
    from ndcglab.clicks.logs import write_stats

    write_stats(log.stats(), tmp_path / "stats.npz")
    run = ndcglab("train", DATA, "--clicks", "stats.npz", "--estimator", "pairwise",
                  "--examination", "1,1,1,1,1", "--out", "m2.zip", "--quiet",
                  cwd=tmp_path)  # fmt: skip
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert run.returncode != 0 and len(lines) == 1, run.stderr
    assert "--estimator pairwise needs the sessions of a log" in lines[0]


def test_errors():
    log = _tiny_log()
    pairs = click_pairs(log)
    with pytest.raises(NdcglabError, match="p must be >= 0"):
        update_position_biases(pairs, np.ones(len(pairs)), np.ones(3), np.ones(3), p=-1)
    no_clicks = dataclasses.replace(log, click=np.zeros(len(log), np.int8))
    assert len(click_pairs(no_clicks)) == 0
