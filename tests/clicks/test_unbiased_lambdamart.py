"""Unbiased LambdaMART (Hu, Wang, Peng and Li, WWW 2019): the debiased lambda gradients and
Hessians equal a slow loop over the raw sessions written from the paper's formulas (and finite
differences of the pairwise loss), the bias step equals its closed form, the click bias of a
simulated PBM log comes out near the true examination ratios, and the front door (library and
command line) trains the same trees; bad input gets one error line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ndcglab.clicks import ClickLog, write_log
from ndcglab.clicks.learn import fit_clicks
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.clicks.unbiased_lambdamart import (
    UnbiasedLambdaObjective,
    session_pairs,
    train_unbiased_lambdamart,
)
from ndcglab.data import load_dataset
from ndcglab.errors import NdcglabError
from ndcglab.training import load_trained

from ..test_cli_safety import ndcglab

DATA = "synthetic:default"
SIGMA = 1.3


class _Docs:
    """The two attributes of a dataset the objective reads (six documents, two queries)."""

    n_docs = 6
    query_ids = np.array(["q0", "q1"], dtype=object)
    boundaries = np.array([0, 3, 6])


def _tiny_log() -> ClickLog:
    # 6 sessions over documents 0..5 (two queries), up to 3 positions; session 3 repeats
    # session 0 (merged and counted twice), session 5 shows two documents only
    rows = [  # session, query, doc, position, click
        (0, 0, 0, 1, 1), (0, 0, 1, 2, 0), (0, 0, 2, 3, 1),
        (1, 0, 2, 1, 0), (1, 0, 0, 2, 1), (1, 0, 1, 3, 0),
        (2, 1, 3, 1, 0), (2, 1, 4, 2, 0), (2, 1, 5, 3, 1),
        (3, 0, 0, 1, 1), (3, 0, 1, 2, 0), (3, 0, 2, 3, 1),
        (4, 1, 5, 1, 1), (4, 1, 3, 2, 1), (4, 1, 4, 3, 0),
        (5, 0, 1, 1, 0), (5, 0, 2, 2, 1),
    ]  # fmt: skip
    a = np.array(rows)
    return ClickLog(
        session=a[:, 0].astype(np.int64), query=a[:, 1].astype(np.int64),
        doc=a[:, 2].astype(np.int64), position=a[:, 3].astype(np.int32),
        click=a[:, 4].astype(np.int8), propensity=np.ones(len(a)),
        qids=np.array(["q0", "q1"], dtype=object), meta={"k": 3},
    )  # fmt: skip


def _objective(t_plus, t_minus, p: float = 0.0) -> UnbiasedLambdaObjective:
    pairs = session_pairs(_tiny_log(), _Docs())
    return UnbiasedLambdaObjective(
        pairs, sigma=SIGMA, p=p, t_plus=np.array(t_plus), t_minus=np.array(t_minus)
    )


def _slow(scores, t_plus, t_minus):
    """The paper's lambdas by a loop over every raw session and every (clicked, unclicked) pair:
    ``λ_ab = −σ|ΔZ_ab| / (1 + e^{σ(s_a − s_b)})`` divided by ``t⁺_i·t⁻_j``; ``|ΔZ|`` the change
    of the session's NDCG (gain 1 per click) when ``a`` and ``b`` swap in the ranking by the
    scores (ties: the shown order). Returns (grad, hess, per-pair (i, j, lambda loss))."""
    log = _tiny_log()
    g, h = np.zeros(6), np.zeros(6)
    pairs = []
    for s in np.unique(log.session):
        rows = np.flatnonzero(log.session == s)
        docs, clicks = log.doc[rows], log.click[rows]
        order = sorted(range(len(rows)), key=lambda r: (-scores[docs[r]], r))
        rank = {r: order.index(r) + 1 for r in range(len(rows))}
        n_clicks = int(clicks.sum())
        idcg = sum(1 / np.log2(1 + r) for r in range(1, n_clicks + 1))
        for a in range(len(rows)):
            for b in range(len(rows)):
                if clicks[a] != 1 or clicks[b] != 0:
                    continue
                dz = abs(1 / np.log2(1 + rank[a]) - 1 / np.log2(1 + rank[b])) / idcg
                diff = scores[docs[a]] - scores[docs[b]]
                rho = 1 / (1 + np.exp(SIGMA * diff))
                w = 1 / (t_plus[a] * t_minus[b])  # rows are in position order: row = position
                g[docs[a]] += -SIGMA * dz * rho * w
                g[docs[b]] -= -SIGMA * dz * rho * w
                h[docs[a]] += SIGMA**2 * dz * rho * (1 - rho) * w
                h[docs[b]] += SIGMA**2 * dz * rho * (1 - rho) * w
                pairs.append((a + 1, b + 1, dz * np.log(1 + np.exp(-SIGMA * diff))))
    return g, h, pairs


SCORES = [
    np.array([0.3, -0.2, 0.9, 0.1, 0.4, -0.5]),
    np.array([0.0, 0.0, 0.0, 0.7, 0.7, 0.7]),  # ties: the shown order decides the ranks
    np.array([-2.0, 1.5, 0.2, 3.0, -1.0, 0.5]),
]


@pytest.mark.parametrize("scores", SCORES)
def test_gradients_equal_the_paper_by_a_slow_loop(scores):
    t_plus, t_minus = [1.0, 0.6, 0.3], [1.0, 1.4, 0.8]
    obj = _objective(t_plus, t_minus)
    g, h = obj.grad_hess(scores)
    want_g, want_h, _ = _slow(scores, t_plus, t_minus)
    np.testing.assert_allclose(g, want_g, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(h, want_h, rtol=1e-12, atol=1e-15)


def test_gradients_are_finite_differences_of_the_pairwise_loss():
    # |ΔZ| is constant while no two scores cross: the loss Σ w·|ΔZ|·log(1 + e^{−σ(s_a − s_b)})
    # is then smooth, its gradient the lambdas and its diagonal second derivative the Hessian
    obj = _objective([1.0, 0.6, 0.3], [1.0, 1.4, 0.8])
    s = SCORES[0]
    g, h = obj.grad_hess(s)
    eps = 1e-6
    for d in range(6):
        e = np.zeros(6)
        e[d] = eps
        fd_g = (obj.loss(s + e) - obj.loss(s - e)) / (2 * eps)
        fd_h = (obj.grad_hess(s + e)[0][d] - obj.grad_hess(s - e)[0][d]) / (2 * eps)
        assert fd_g == pytest.approx(g[d], rel=1e-6, abs=1e-9)
        assert fd_h == pytest.approx(h[d], rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("p", [0.0, 1.0])
def test_bias_step_equals_the_closed_form(p):
    # the minimisers of Σ ℓ_ab / (t⁺_i t⁻_j) + ‖t⁺‖_p^p + ‖t⁻‖_p^p relative to position 1:
    # t⁺_i = (Σ_{pairs (i, j)} ℓ / t⁻_j ÷ the same at i = 1)^{1/(p+1)}, t⁻ likewise
    t_plus, t_minus = [1.0, 0.6, 0.3], [1.0, 1.4, 0.8]
    obj = _objective(t_plus, t_minus, p=p)
    scores = SCORES[0]
    obj.update_biases(scores)
    _, _, pairs = _slow(scores, t_plus, t_minus)
    num_plus, num_minus = np.zeros(3), np.zeros(3)
    for i, j, loss in pairs:
        num_plus[i - 1] += loss / t_minus[j - 1]
        num_minus[j - 1] += loss / t_plus[i - 1]
    e = 1 / (p + 1)
    np.testing.assert_allclose(obj.t_plus, (num_plus / num_plus[0]) ** e, rtol=1e-12)
    np.testing.assert_allclose(obj.t_minus, (num_minus / num_minus[0]) ** e, rtol=1e-12)
    assert len(obj.history) == 1


def test_bias_step_with_the_logistic_loss():
    t_plus, t_minus = [1.0, 0.6, 0.3], [1.0, 1.4, 0.8]
    obj = _objective(t_plus, t_minus)
    obj.bias_loss = "logistic"
    scores = SCORES[2]
    obj.update_biases(scores)
    log = _tiny_log()
    num_plus = np.zeros(3)
    for s in np.unique(log.session):
        r = np.flatnonzero(log.session == s)
        for a in r:
            for b in r:
                if log.click[a] == 1 and log.click[b] == 0:
                    d = scores[log.doc[a]] - scores[log.doc[b]]
                    num_plus[log.position[a] - 1] += (
                        np.log1p(np.exp(-SIGMA * d)) / t_minus[log.position[b] - 1]
                    )
    np.testing.assert_allclose(obj.t_plus, num_plus / num_plus[0], rtol=1e-12)


def test_identical_sessions_are_merged_and_counted():
    pairs = session_pairs(_tiny_log(), _Docs())
    assert sorted(pairs.count.tolist()) == [1, 1, 1, 1, 2]  # session 2 repeats 0; 6 logged
    assert len(pairs) == 2 + 2 + 2 + 2 + 1  # pairs of the 5 distinct sessions


@pytest.fixture(scope="module")
def pbm_world():
    ds = load_dataset(DATA)
    scores = 0.5 * ds.labels + np.random.default_rng(0).normal(0, 1, ds.n_docs)
    log = simulate_clicks(ds, "pbm(eta=1)", make_policy(scores, "pl"), 20_000, k=5, seed=1)
    return ds, log


@pytest.mark.parametrize(("bias_loss", "tol"), [("lambda", 0.07), ("logistic", 0.03)])
def test_click_bias_recovers_the_examination_ratios(pbm_world, bias_loss, tol):
    # PBM θ_j = 1/j: t⁺_j should estimate θ_j/θ_1. With the paper's lambda loss the |ΔNDCG|
    # weights differ between positions and the estimate runs about 10 % low here (0.45 for
    # 0.5); the plain logistic loss in the bias step comes within 0.015.
    ds, log = pbm_world
    truth = np.asarray(log.meta["examination"]) / log.meta["examination"][0]
    fit = train_unbiased_lambdamart(
        ds, log, num_boost_round=60, learning_rate=0.05, num_leaves=7, bias_loss=bias_loss
    )
    assert fit.t_plus[0] == 1.0 and fit.t_minus[0] == 1.0
    np.testing.assert_allclose(fit.t_plus, truth, atol=tol)
    assert np.all(np.diff(fit.t_plus) < 0)
    assert len(fit.history) == 60  # after trees 1..59 and after the last
    # the trees rank by relevance on average
    assert np.corrcoef(fit.predict(ds), ds.labels)[0, 1] > 0.3


@pytest.fixture(scope="module")
def small_log(pbm_world):
    _, full = pbm_world
    return full.take(full.session < 3000)


def test_front_door_is_unbiased_lambdamart(pbm_world, small_log):
    ds, _ = pbm_world
    res = fit_clicks(ds, small_log, estimator="pairwise", model="gbdt", rounds=8, lr=0.1, seed=3)
    lib = train_unbiased_lambdamart(
        ds, small_log, num_boost_round=8, learning_rate=0.1, seed=3, num_threads=0
    )
    np.testing.assert_allclose(res.predict(ds), lib.predict(ds), rtol=1e-12)
    np.testing.assert_allclose(res.examination, lib.t_plus)
    np.testing.assert_allclose(res.t_minus, lib.t_minus)
    assert len(res.labels) == 0 and res.result.epochs_run == 8
    with pytest.raises(NdcglabError, match="drop loss"):
        fit_clicks(ds, small_log, estimator="pairwise", model="gbdt", loss="listnet")
    with pytest.raises(NdcglabError, match="LightGBM trees"):
        fit_clicks(ds, small_log, estimator="pairwise", model="gbdt", trees={"engine": "xgboost"})


def test_validation_chooses_the_round(pbm_world, small_log):
    ds, _ = pbm_world
    train, vali = ds.subset(np.arange(150)), ds.subset(np.arange(150, 200))
    log = small_log.take(small_log.query < 150)  # the log's queries are the dataset's
    fit = train_unbiased_lambdamart(
        train, log, num_boost_round=12, learning_rate=0.1, valid=vali, early_stopping_rounds=3
    )
    tr = fit.model.metadata["training"]
    curve = tr["valid_curve"]
    assert len(curve) == tr["rounds_run"] and tr["measure"] == "ndcg@10"
    assert fit.model.best_iteration == int(np.argmax(curve)) + 1
    from ndcglab.measures import MeasureScorer

    want = MeasureScorer("ndcg@10", "letor4").mean(vali.labels, fit.predict(vali), vali.boundaries)
    assert curve[fit.model.best_iteration - 1] == pytest.approx(want, abs=1e-6)


@pytest.mark.slow
def test_command_line(pbm_world, small_log, tmp_path):
    ds, _ = pbm_world
    lib = train_unbiased_lambdamart(ds, small_log, num_boost_round=6, learning_rate=0.1)
    write_log(small_log, tmp_path / "log.npz")
    run = ndcglab("train", DATA, "--clicks", "log.npz", "--estimator", "pairwise", "--model",
                  "gbdt", "--rounds", "6", "--lr", "0.1", "--out", "m.zip", "--quiet",
                  "--format", "json", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    np.testing.assert_allclose(out["clicks"]["examination"], lib.t_plus, rtol=1e-9)
    np.testing.assert_allclose(out["clicks"]["t_minus"], lib.t_minus, rtol=1e-9)
    np.testing.assert_allclose(load_trained(tmp_path / "m.zip").predict(ds), lib.predict(ds))
    # what it trains is said as it is: not the --loss default it does not use
    run = ndcglab("train", DATA, "--clicks", "log.npz", "--estimator", "pairwise", "--model",
                  "gbdt", "--rounds", "2", "--out", "m1.zip", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    first = run.stderr.splitlines()[0]
    assert "debiased lambda loss of unbiased LambdaMART, model gbdt" in first, first
    assert "listnet" not in run.stderr, run.stderr

    from ndcglab.clicks.logs import write_stats

    write_stats(small_log.stats(), tmp_path / "stats.npz")
    bad = [
        (["--clicks", "stats.npz", "--examination", "1,1,1,1,1"], "needs the sessions of a log"),
        (["--clicks", "log.npz", "--loss", "listnet"], "Fix: drop --loss"),
    ]
    for extra, message in bad:
        run = ndcglab("train", DATA, "--estimator", "pairwise", "--model", "gbdt", *extra,
                      "--out", "m2.zip", "--quiet", cwd=tmp_path)  # fmt: skip
        lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
        assert run.returncode != 0 and len(lines) == 1, run.stderr
        assert lines[0].startswith("ndcglab: error:") and message in lines[0], lines[0]
    assert not (tmp_path / "m2.zip").exists()


def test_errors():
    pairs = session_pairs(_tiny_log(), _Docs())
    with pytest.raises(NdcglabError, match="sigma must be positive"):
        UnbiasedLambdaObjective(pairs, sigma=0)
    with pytest.raises(NdcglabError, match="p must be >= 0"):
        UnbiasedLambdaObjective(pairs, p=-1)
    with pytest.raises(NdcglabError, match="bias_every must be at least 1"):
        UnbiasedLambdaObjective(pairs, bias_every=0)
    with pytest.raises(NdcglabError, match="unknown bias_loss"):
        UnbiasedLambdaObjective(pairs, bias_loss="hinge")
    log = _tiny_log()
    import dataclasses

    no_clicks = dataclasses.replace(log, click=np.zeros(len(log), np.int8))
    assert len(session_pairs(no_clicks, _Docs())) == 0
