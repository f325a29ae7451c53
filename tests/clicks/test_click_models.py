"""Click models fitted to logs against slow reference implementations written here: the EM of
PBM and UBM looping over every shown document, the DBN's EM with the posterior found by
enumerating every way a session can end (how far the user examined, whether the last click
satisfied), and the counting estimators of cascade, DCM and SDBN in plain loops; the log-
likelihood and perplexity of PBM from their definitions; and recovery of the simulator's truth."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ndcglab.clicks.click_models import fit_click_model
from ndcglab.clicks.simulate import attractiveness, make_policy, simulate_clicks
from ndcglab.data import RankingDataset
from ndcglab.errors import SpecError

K = 5


def _data(n_queries: int = 4, n_docs: int = 7, seed: int = 0) -> RankingDataset:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, size=n_queries * n_docs).astype(float)
    return RankingDataset(
        features=rng.normal(size=(len(labels), 2)).astype(np.float32),
        labels=labels,
        boundaries=np.arange(0, len(labels) + 1, n_docs),
        query_ids=np.array([f"q{i}" for i in range(n_queries)]),
    )


def _log(model: str, n: int = 3000, seed: int = 1):
    ds = _data()
    pol = make_policy(np.random.default_rng(5).normal(size=len(ds.labels)), "pl(temperature=1)")
    return ds, simulate_clicks(ds, model, pol, n, k=K, seed=seed)


def _sessions(log):
    starts = log.session_starts()
    for a, b in itertools.pairwise(starts):
        yield list(log.doc[a:b]), list(log.click[a:b])


def _ref_position_em(log, ubm: bool, iterations: int):
    """EM of PBM (cell = position) or UBM (cell = position, last click above) row by row."""
    a: dict[int, float] = {}
    th: dict[tuple[int, int], float] = {}
    rows = []
    for docs, clicks in _sessions(log):
        last = 0
        for r, (d, c) in enumerate(zip(docs, clicks), start=1):
            cell = (r, last if ubm else 0)
            rows.append((int(d), cell, int(c)))
            a.setdefault(int(d), 0.5)
            th.setdefault(cell, 0.5)
            if c and ubm:
                last = r
    for _ in range(iterations):
        a_num = dict.fromkeys(a, 0.0)
        a_den = dict.fromkeys(a, 0.0)
        t_num = dict.fromkeys(th, 0.0)
        t_den = dict.fromkeys(th, 0.0)
        for d, cell, c in rows:
            if c:
                pa = pe = 1.0
            else:
                p_no = 1 - th[cell] * a[d]
                pa = a[d] * (1 - th[cell]) / p_no  # attractive but not examined
                pe = th[cell] * (1 - a[d]) / p_no  # examined but not attractive
            a_num[d] += pa
            a_den[d] += 1
            t_num[cell] += pe
            t_den[cell] += 1
        a = {d: a_num[d] / a_den[d] for d in a}
        th = {cl: t_num[cl] / t_den[cl] for cl in th}
    return a, th


@pytest.mark.parametrize("name", ["pbm", "ubm"])
def test_position_em_equals_the_reference_em(name):
    _, log = _log("ubm(eta=1,beta=0.7)" if name == "ubm" else "pbm(eta=1)", n=2000)
    fitted = fit_click_model(log, f"{name}(iterations=15,tol=0)")
    assert fitted.iterations == 15
    a, th = _ref_position_em(log, name == "ubm", 15)
    for d, v in a.items():
        assert math.isclose(fitted.attractiveness[d], v, rel_tol=1e-9), d
    for (r, last), v in th.items():
        got = fitted.examination[r - 1] if name == "pbm" else fitted.examination[r - 1, last]
        assert math.isclose(got, v, rel_tol=1e-9), (r, last)


def _ref_dbn_em(log, iterations: int, gamma_fixed=None):
    """DBN EM: for each session enumerate (e = last examined position, S at e) with their joint
    probability given the clicks, and take expected counts."""
    sess = list(_sessions(log))
    docs_all = sorted({int(d) for docs, _ in sess for d in docs})
    a = dict.fromkeys(docs_all, 0.5)
    s = dict.fromkeys(docs_all, 0.5)
    g = 0.5 if gamma_fixed is None else gamma_fixed
    for _ in range(iterations):
        a_num = dict.fromkeys(docs_all, 0.0)
        a_den = dict.fromkeys(docs_all, 0.0)
        s_num = dict.fromkeys(docs_all, 0.0)
        s_den = dict.fromkeys(docs_all, 0.0)
        g_num = g_den = 0.0
        for docs, clicks in sess:
            m = len(docs)
            last = max([r + 1 for r, c in enumerate(clicks) if c], default=0)
            outcomes = []  # (weight, e, satisfied at e)
            for e in range(max(last, 1), m + 1):
                w = 1.0
                for r in range(1, e + 1):
                    ar = a[docs[r - 1]]
                    w *= ar if clicks[r - 1] else 1 - ar
                    if r < e:  # went on from r
                        w *= g * ((1 - s[docs[r - 1]]) if clicks[r - 1] else 1.0)
                if e == m:
                    if clicks[e - 1]:
                        outcomes += [(w * s[docs[e - 1]], e, True),
                                     (w * (1 - s[docs[e - 1]]), e, False)]  # fmt: skip
                    else:
                        outcomes.append((w, e, False))
                elif clicks[e - 1]:
                    outcomes += [(w * s[docs[e - 1]], e, True),
                                 (w * (1 - s[docs[e - 1]]) * (1 - g), e, False)]  # fmt: skip
                else:
                    outcomes.append((w * (1 - g), e, False))
            total = sum(w for w, _, _ in outcomes)
            for w, e, sat in outcomes:
                p = w / total
                for r in range(1, e + 1):
                    a_den[docs[r - 1]] += p
                if sat:
                    s_num[docs[e - 1]] += p
                g_num += p * (e - 1)
                g_den += p * ((e - 1) + (1 if (e < m and not sat) else 0))
            for r in range(m):
                if clicks[r]:
                    a_num[docs[r]] += 1
                    s_den[docs[r]] += 1
        a = {d: a_num[d] / a_den[d] if a_den[d] > 0 else 0.5 for d in docs_all}
        s = {d: s_num[d] / s_den[d] if s_den[d] > 0 else 0.5 for d in docs_all}
        if gamma_fixed is None:
            g = g_num / g_den
    return a, s, g


@pytest.mark.parametrize("gamma", [None, 0.85])
def test_dbn_em_equals_the_enumerating_reference(gamma):
    _, log = _log("dbn(gamma=0.8)", n=800)
    spec = "dbn(iterations=8,tol=0)" if gamma is None else f"dbn(iterations=8,tol=0,gamma={gamma})"
    fitted = fit_click_model(log, spec)
    a, s, g = _ref_dbn_em(log, 8, gamma)
    assert math.isclose(fitted.gamma, g, rel_tol=1e-9)
    for d, v in a.items():
        assert math.isclose(fitted.attractiveness[d], v, rel_tol=1e-9), d
    for d, v in s.items():
        if not np.isnan(fitted.satisfaction[d]):
            assert math.isclose(fitted.satisfaction[d], v, rel_tol=1e-9), d


def test_counting_models_equal_loops():
    _, log = _log("dcm(lam=0.5)", n=1500)
    cas = fit_click_model(log, "cascade")
    dcm = fit_click_model(log, "dcm")
    sdbn = fit_click_model(log, "sdbn")
    num = {"cascade": {}, "dcm": {}}
    den = {"cascade": {}, "dcm": {}}
    clicks_at, last_at = np.zeros(K), np.zeros(K)
    s_num: dict[int, int] = {}
    for docs, clicks in _sessions(log):
        m = len(docs)
        first = next((r + 1 for r, c in enumerate(clicks) if c), None)
        last = max([r + 1 for r, c in enumerate(clicks) if c], default=None)
        for name, stop in (("cascade", first), ("dcm", last)):
            for r in range(1, (stop or m) + 1):
                d = int(docs[r - 1])
                num[name][d] = num[name].get(d, 0) + int(clicks[r - 1])
                den[name][d] = den[name].get(d, 0) + 1
        for r, c in enumerate(clicks):
            clicks_at[r] += c
        if last:
            last_at[last - 1] += 1
            s_num[int(docs[last - 1])] = s_num.get(int(docs[last - 1]), 0) + 1
    for name, fitted in (("cascade", cas), ("dcm", dcm)):
        for d in den[name]:
            assert math.isclose(fitted.attractiveness[d], num[name][d] / den[name][d]), (name, d)
    assert np.allclose(dcm.continuation, 1 - last_at / clicks_at)
    for d in den["dcm"]:
        assert math.isclose(sdbn.attractiveness[d], num["dcm"][d] / den["dcm"][d])
        if num["dcm"][d]:
            assert math.isclose(sdbn.satisfaction[d], s_num.get(d, 0) / num["dcm"][d])


def test_pbm_log_likelihood_and_perplexity_from_their_definitions():
    _, log = _log("pbm(eta=1)", n=1000)
    fitted = fit_click_model(log, "pbm(iterations=20)")
    ll = 0.0
    bits = np.zeros(K)
    count = np.zeros(K)
    for d, r, c in zip(log.doc, log.position, log.click):
        p = fitted.examination[r - 1] * fitted.attractiveness[d]
        ll += math.log(p if c else 1 - p)
        bits[r - 1] += math.log2(p if c else 1 - p)
        count[r - 1] += 1
    assert math.isclose(fitted.log_likelihood, ll, rel_tol=1e-9)
    assert np.allclose(fitted.perplexity, 2 ** (-bits / count))
    assert (fitted.perplexity > 1).all() and (fitted.perplexity < 2).all()


@pytest.mark.parametrize(
    ("sim", "fit", "tol"),
    [("pbm(eta=1)", "pbm", 0.05), ("dbn(gamma=0.7)", "dbn", 0.06), ("cascade", "cascade", 0.05)],
)
def test_fits_recover_the_simulators_attractiveness(sim, fit, tol):
    ds, log = _log(sim, n=60000, seed=3)
    fitted = fit_click_model(log, fit)
    true = attractiveness(ds.labels, 0.1, 2.0)
    seen = np.isfinite(fitted.attractiveness)
    # documents shown often enough for the tolerance (at least 500 examinations' worth)
    often = np.bincount(log.doc, minlength=len(true)) >= 2000
    assert (seen & often).sum() >= 10
    assert (np.abs(fitted.attractiveness - true)[seen & often] < tol).all()
    if fit == "dbn":
        assert abs(fitted.gamma - 0.7) < 0.03
    if fit == "pbm":
        theta = fitted.examination / fitted.examination[0]
        assert np.allclose(theta, 1 / np.arange(1, K + 1), atol=0.05)


@pytest.mark.parametrize("spec", ["pbn", "pbm(gamma=1)", "dbn(gamma=2)", "pbm(iterations=0)"])
def test_bad_fit_specs(spec):
    _, log = _log("pbm", n=10)
    with pytest.raises(SpecError, match="Fix"):
        fit_click_model(log, spec)


def _session_probability(name, fitted, docs, clicks):
    """P(the session's clicks) from the model's story, written out per model."""
    a = [fitted.attractiveness[d] for d in docs]
    m = len(docs)
    clicked = [r for r in range(m) if clicks[r]]
    if name == "ubm":
        p, last = 1.0, 0
        for r in range(m):
            q = fitted.examination[r, last] * a[r]
            p *= q if clicks[r] else 1 - q
            last = r + 1 if clicks[r] else last
        return p
    if name == "cascade":
        stop = clicked[0] if clicked else m
        p = math.prod(1 - a[r] for r in range(stop))
        return p * a[stop] if clicked else p
    if name == "dcm":
        lam = fitted.continuation
        last = clicked[-1] if clicked else -1
        p = 1.0
        for r in range(last + 1):
            p *= a[r] if clicks[r] else 1 - a[r]
            if clicks[r] and r < last:
                p *= lam[r]
        rest = math.prod(1 - a[r] for r in range(last + 1, m))
        return p * rest if last < 0 else p * ((1 - lam[last]) + lam[last] * rest)
    # dbn: sum over how far the user read (e) and whether the last click satisfied
    s = [fitted.satisfaction[d] for d in docs]
    g = fitted.gamma
    last = clicked[-1] + 1 if clicked else 0
    total = 0.0
    for e in range(max(last, 1), m + 1):
        w = 1.0
        for r in range(1, e + 1):
            w *= a[r - 1] if clicks[r - 1] else 1 - a[r - 1]
            if r < e:
                w *= g * ((1 - s[r - 1]) if clicks[r - 1] else 1.0)
        if e < m:
            w *= s[e - 1] + (1 - s[e - 1]) * (1 - g) if clicks[e - 1] else 1 - g
        total += w
    return total


def _click_marginals(name, fitted, docs):
    """P(C_r = 1) for r = 1..m from the ranking alone."""
    a = [fitted.attractiveness[d] for d in docs]
    m = len(docs)
    out = []
    if name == "ubm":
        p_last = {0: 1.0}
        for r in range(1, m + 1):
            new: dict[int, float] = {}
            tot = 0.0
            for last, pr in p_last.items():
                pc = pr * fitted.examination[r - 1, last] * a[r - 1]
                tot += pc
                new[last] = new.get(last, 0.0) + pr - pc
                new[r] = new.get(r, 0.0) + pc
            out.append(tot)
            p_last = new
        return out
    e = 1.0
    for r in range(m):
        out.append(e * a[r])
        if name == "cascade":
            e *= 1 - a[r]
        elif name == "dcm":
            e *= 1 - a[r] + a[r] * fitted.continuation[r]
        else:
            e *= fitted.gamma * (1 - a[r] * fitted.satisfaction[docs[r]])
    return out


@pytest.mark.parametrize(
    ("sim", "name"),
    [("ubm", "ubm"), ("cascade", "cascade"), ("dcm(lam=0.5)", "dcm"), ("dbn(gamma=0.8)", "dbn")],
)
def test_log_likelihood_and_perplexity_from_each_models_story(sim, name):
    _, log = _log(sim, n=600)
    fitted = fit_click_model(log, name)
    if name == "dbn":  # a document never clicked has no fitted satisfaction: 0.5 on both sides
        fitted.satisfaction = np.where(np.isnan(fitted.satisfaction), 0.5, fitted.satisfaction)
    ll = 0.0
    bits = np.zeros(K)
    count = np.zeros(K)
    for docs, clicks in _sessions(log):
        ll += math.log(_session_probability(name, fitted, docs, clicks))
        for r, p in enumerate(_click_marginals(name, fitted, docs)):
            bits[r] += math.log2(p if clicks[r] else 1 - p)
            count[r] += 1
    got_ll, got_perplexity = fitted.evaluate(log)
    assert math.isclose(got_ll, ll, rel_tol=1e-9)
    assert np.allclose(got_perplexity, 2 ** (-bits / count), rtol=1e-9)


# --------------------------------------------------------------------------- the trust model


def _ref_trust_em(log, iterations: int):
    """TrustPBM's EM row by row: the posterior of (examined E, relevant R) of every shown
    document by enumerating the four cases, P(E) P(R) P(click | E, R) with P(click | E=0) = 0,
    P(click | E=1, R=1) = eps+, P(click | E=1, R=0) = eps-; expected counts, then ratios."""
    g: dict[int, float] = {}
    th = [0.5] * K
    tp = [0.75] * K
    tn = [0.25] * K
    rows = [(int(d), int(r) - 1, int(c)) for d, r, c in zip(log.doc, log.position, log.click)]
    for d, _, _ in rows:
        g.setdefault(d, 0.5)
    for _ in range(iterations):
        g_num = dict.fromkeys(g, 0.0)
        g_den = dict.fromkeys(g, 0.0)
        e_num, n_r = [0.0] * K, [0.0] * K
        p_num, p_den, n_num, n_den = [0.0] * K, [0.0] * K, [0.0] * K, [0.0] * K
        for d, r, c in rows:
            joint = {}
            for e, rel in itertools.product((0, 1), (0, 1)):
                pc = 0.0 if not e else (tp[r] if rel else tn[r])
                joint[e, rel] = (
                    (th[r] if e else 1 - th[r])
                    * (g[d] if rel else 1 - g[d])
                    * (pc if c else 1 - pc)
                )
            total = sum(joint.values())
            post = {key: v / total for key, v in joint.items()}
            g_num[d] += post[0, 1] + post[1, 1]
            g_den[d] += 1
            e_num[r] += post[1, 0] + post[1, 1]
            n_r[r] += 1
            p_den[r] += post[1, 1]
            n_den[r] += post[1, 0]
            if c:
                p_num[r] += post[1, 1]
                n_num[r] += post[1, 0]
        g = {d: g_num[d] / g_den[d] for d in g}
        th = [e_num[r] / n_r[r] for r in range(K)]
        tp = [p_num[r] / p_den[r] for r in range(K)]
        tn = [n_num[r] / n_den[r] for r in range(K)]
    return g, th, tp, tn


def test_trust_em_equals_the_enumerating_reference():
    _, log = _log("trust(eta=1,pos=0.9,neg=0.5)", n=1500)
    fitted = fit_click_model(log, "trust(iterations=12,tol=0)")
    assert fitted.iterations == 12
    g, th, tp, tn = _ref_trust_em(log, 12)
    for d, v in g.items():
        assert math.isclose(fitted.attractiveness[d], v, rel_tol=1e-9), d
    assert np.allclose(fitted.examination, th, rtol=1e-9, atol=0)
    assert np.allclose(fitted.trust_pos, tp, rtol=1e-9, atol=0)
    assert np.allclose(fitted.trust_neg, tn, rtol=1e-9, atol=0)


def _trust_data(n_queries: int = 20, n_docs: int = 10) -> RankingDataset:
    return _data(n_queries, n_docs, seed=0)


def test_trust_fit_recovers_the_simulators_affine_terms():
    """On 100 000 sessions of trust bias under a Plackett-Luce logger (every document seen at
    every position), the fitted alpha_r, beta_r equal the simulator's closed form
    alpha_r = theta_r (eps+ - eps-_r), beta_r = theta_r eps-_r (theta_r = 1/r, eps+ = 1,
    eps-_r = 0.65 / r) within 0.03, both on the top position's scale (alpha_1 = 1, beta_1 = 0):
    the clicks fix (alpha, beta) only up to an affine change of the relevance scale."""
    from ndcglab.clicks.click_models import normalised_affine

    ds = _trust_data()
    pol = make_policy(np.random.default_rng(5).normal(size=len(ds.labels)), "pl(temperature=1)")
    log = simulate_clicks(ds, "trust(eta=1,pos=1,neg=0.65)", pol, 100_000, k=K, seed=1)
    r = np.arange(1, K + 1)
    alpha, beta = (1 / r) * (1 - 0.65 / r), (1 / r) * 0.65 / r  # the closed form, by hand
    want_a, want_b = alpha / alpha[0], beta - alpha / alpha[0] * beta[0]
    fitted = fit_click_model(log, "trust(iterations=1000)")
    assert fitted.converged
    got_a, got_b = fitted.affine()
    assert got_a[0] == 1 and got_b[0] == 0
    assert np.abs(got_a - want_a).max() < 0.03, (got_a, want_a)
    assert np.abs(got_b - want_b).max() < 0.03, (got_b, want_b)
    # the normalisation is the same for any (alpha, beta) of the family: an affine change of
    # scale of the truth gives the same normalised terms
    a2, b2 = normalised_affine(alpha / 0.8, beta - alpha * 0.1 / 0.8)
    assert np.allclose(a2, want_a) and np.allclose(b2, want_b)
    # and the PBM, blind to trust bias, does not find them: its beta is 0 and its alpha is off
    pbm_a, pbm_b = fit_click_model(log, "pbm(iterations=1000)").affine()
    assert (pbm_b == 0).all() and np.abs(pbm_a - want_a).max() > 0.1


def test_trust_log_likelihood_from_its_definition():
    _, log = _log("trust", n=800)
    fitted = fit_click_model(log, "trust(iterations=30)")
    ll = 0.0
    bits = np.zeros(K)
    count = np.zeros(K)
    for d, r, c in zip(log.doc, log.position, log.click):
        th, tp, tn = fitted.examination[r - 1], fitted.trust_pos[r - 1], fitted.trust_neg[r - 1]
        g = fitted.attractiveness[d]
        p = th * (tp * g + tn * (1 - g))
        ll += math.log(p if c else 1 - p)
        bits[r - 1] += math.log2(p if c else 1 - p)
        count[r - 1] += 1
    assert math.isclose(fitted.log_likelihood, ll, rel_tol=1e-9)
    assert np.allclose(fitted.perplexity, 2 ** (-bits / count), rtol=1e-9)
    # the session-based evaluation gives the same numbers
    got_ll, got_per = fitted.evaluate(log)
    assert math.isclose(got_ll, ll, rel_tol=1e-9)
    assert np.allclose(got_per, fitted.perplexity, rtol=1e-9)


@pytest.mark.parametrize("name", ["pbm", "trust"])
def test_count_models_fit_the_same_from_the_statistics(name):
    _, log = _log("trust", n=1000)
    from_log = fit_click_model(log, f"{name}(iterations=40)")
    from_stats = fit_click_model(log.stats(), f"{name}(iterations=40)")
    np.testing.assert_array_equal(from_log.attractiveness, from_stats.attractiveness)
    np.testing.assert_array_equal(from_log.examination, from_stats.examination)
    assert from_log.log_likelihood == from_stats.log_likelihood


@pytest.mark.parametrize("name", ["ubm", "dbn", "cascade", "dcm", "sdbn"])
def test_session_models_refuse_counts(name):
    _, log = _log("pbm", n=20)
    with pytest.raises(SpecError, match=r"reads whole sessions.*Fix"):
        fit_click_model(log.stats(), name)


def test_affine_terms_of_a_session_model_are_refused():
    _, log = _log("pbm", n=50)
    with pytest.raises(SpecError, match="no affine click terms"):
        fit_click_model(log, "cascade").affine()


def test_normalised_affine_without_a_scale_is_nan():
    from ndcglab.clicks.click_models import normalised_affine

    a, b = normalised_affine(np.array([0.0, 0.5]), np.array([1.0, 0.2]))
    assert np.isnan(a).all() and np.isnan(b).all()
    a, b = normalised_affine(np.array([0.5, 0.25]), np.array([0.25, 0.5]))
    assert a.tolist() == [1.0, 0.5] and b.tolist() == [0.0, 0.375]


def test_read_affine_terms_of_each_kind_of_fit(tmp_path):
    import json

    from ndcglab.clicks.click_models import read_affine_terms
    from ndcglab.errors import DataFormatError

    cases = {
        "trust": (
            {"click_model": "trust", "alpha": [1, 0.5], "beta": [0, -0.2]},
            [1, 0.5],
            [0, -0.2],
        ),
        "pbm": ({"click_model": "pbm", "examination": [0.8, 0.4]}, [1, 0.5], None),
        "prop": ({"click_model": "dbn", "propensity": [1, 0.25]}, [1, 0.25], None),
        "swap": (
            {
                "click_model": "trust",
                "alpha": [1, 9],
                "beta": [0, 9],
                "propensity": [1, 0.5],
                "propensity_offset": [0, -0.25],
            },
            [1, 0.5],
            [0, -0.25],
        ),
    }
    for name, (content, alpha, beta) in cases.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(content))
        a, b = read_affine_terms(str(tmp_path / f"{name}.json"))
        assert a.tolist() == alpha and (b is None if beta is None else b.tolist() == beta)
    (tmp_path / "zero.json").write_text('{"click_model": "pbm", "examination": [0, 0.4]}')
    with pytest.raises(DataFormatError, match="no scale"):
        read_affine_terms(str(tmp_path / "zero.json"))
    for content, expected in [
        ("{not json", "cannot be read as JSON"),
        ('{"alpha": [1, "x"], "beta": [0, 0]}', "'alpha' is not a list of finite numbers"),
        ('{"alpha": [1, NaN], "beta": [0, 0]}', "'alpha' is not a list of finite numbers"),
    ]:
        (tmp_path / "bad.json").write_text(content)
        with pytest.raises(DataFormatError, match=expected) as err:
            read_affine_terms(str(tmp_path / "bad.json"))
        assert "bad.json" in str(err.value) and "Fix" in str(err.value)
