"""The LightGBM objective: gradients equal autograd of the loss (summed over lists), Hessian
diagonals equal the exact one where closed-form/exact, and the Hutchinson estimate stays within
its stated bound. Oracles: per-list autograd and ``torch.autograd.functional.hessian``
(tests/gbdt/oracle_losses.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ndcglab.errors import SpecError  # noqa: E402
from ndcglab.gbdt import LossObjective  # noqa: E402
from ndcglab.gbdt._buckets import BucketIndex  # noqa: E402

from . import oracle_losses as S  # noqa: E402

FLOOR = 1e-6


def _registry():
    try:
        from ndcglab.losses import available_losses, get_loss
    except ImportError:
        return None, None
    return available_losses, get_loss


AVAILABLE, GET_LOSS = _registry()

#: registered specs exercised here (those whose name is registered)
REGISTERED_SPECS = [
    "listnet",
    "listnet(gain=exp2)",
    "consistent_listnet",
    "consistent_listnet(norm=z10)",
    "squared",
    "consistent_squared",
    "cosine",
    "consistent_cosine(norm=z10)",
    "qnorm",
    "listmle",
    "cs_listmle@10",
    "ranknet",
    "lambdarank@10",
]
CLOSED_SPECS = [
    "listnet",
    "listnet(gain=exp2)",
    "consistent_listnet",
    "consistent_listnet(norm=z10)",
    "squared",
    "consistent_squared",
    "ranknet",
    "ranknet(sigma=2,weight=gain)",
    "ranknet(weight=label)",
    "lambdarank@10",
    "lambdarank(discount=zipf,gain=linear)",
    "cs_listmle@10",
    "cs_listmle@3",
    "cs_listmle@0.5n",
]


def _registered(spec: str) -> bool:
    if AVAILABLE is None:
        return False
    try:
        names = AVAILABLE(kind="differentiable")
    except TypeError:
        names = AVAILABLE()
    return spec.split("(")[0].split("@")[0] in names


def _reg(spec):
    if not _registered(spec):
        pytest.skip(f"loss {spec} not registered (yet)")
    return GET_LOSS(spec)


def _distinct_labels(seed=3, n_queries=12, max_len=9):
    """Random lists whose labels are all distinct within a list (ListMLE's ties never matter)."""
    y, s, b = S.random_lists(seed, n_queries=n_queries, max_len=max_len)
    rng = np.random.default_rng(seed + 1)
    for q in range(len(b) - 1):
        n = b[q + 1] - b[q]
        y[b[q] : b[q + 1]] = rng.permutation(n) * (4.0 / max(n - 1, 1))
    return y, s, b


# ----------------------------------------------------------------------------- buckets
def test_buckets_gather_scatter_round_trip_and_padding_bound():
    _, s, b = S.random_lists(0, n_queries=200, max_len=300)
    idx = BucketIndex(b, growth=1.5)
    padded = idx.gather(s, fill=np.nan)
    assert np.allclose(idx.scatter(padded), s)
    for bk, p in zip(idx, padded):
        lens = bk.mask.sum(1)
        assert lens.max() <= 1.5 * lens.min()  # lists in one bucket differ by ≤ growth
        assert np.isnan(p[~bk.mask]).all() and not np.isnan(p[bk.mask]).any()
    assert sorted(np.concatenate([bk.queries for bk in idx]).tolist()) == list(range(200))


def test_buckets_respect_cost_cap():
    _, _, b = S.random_lists(1, n_queries=300, max_len=50)
    idx = BucketIndex(b, growth=100.0, max_elements=2000, quadratic=True)
    for bk in idx:
        bsz, m = bk.shape
        assert bsz * m * m <= 2000 or bsz == 1


def test_padding_never_changes_gradient_or_hessian():
    y, s, b = S.random_lists(2, n_queries=40, max_len=40)
    out = []
    for growth in (1.01, 1.5, 1000.0):
        obj = LossObjective(S.ListNet(), hessian="exact")
        bound = obj.bind(y, b)
        bound.buckets = BucketIndex(b, growth=growth)
        bound.states = (
            obj.bind(y, b).states if growth == 1.5 else _states_for(obj, y, bound.buckets)
        )
        out.append(bound.grad_hess(s))
    for g, h in out[1:]:
        np.testing.assert_allclose(g, out[0][0], atol=1e-12)
        np.testing.assert_allclose(h, out[0][1], atol=1e-12)


def _states_for(obj, y, buckets):
    from ndcglab.gbdt.objective import _BucketState

    states = []
    for bk, yp in zip(buckets, buckets.gather(y)):
        states.append(
            _BucketState(
                labels=torch.from_numpy(yp),
                mask=torch.from_numpy(bk.mask),
                active=torch.ones(bk.shape[0], dtype=torch.bool),
                mode="exact",
            )
        )
    return states


# ----------------------------------------------------------------------------- stand-in losses
STANDINS = [S.ListNet(), S.ConsistentListNet(), S.ConsistentSquared(), S.Cosine(), S.RankNet()]


@pytest.mark.parametrize("loss", STANDINS, ids=lambda x: x.name)
@pytest.mark.parametrize("mode", ["auto", "exact"])
def test_standin_gradient_and_exact_hessian(loss, mode):
    y, s, b = S.random_lists(4, n_queries=25, max_len=20)
    g, h = LossObjective(loss, hessian=mode).bind(y, b).grad_hess(s)
    g_ref, h_ref, _ = S.reference_grad_hess(loss, y, s, b)
    np.testing.assert_allclose(g, g_ref, atol=1e-10)
    np.testing.assert_allclose(h, np.maximum(h_ref, FLOOR), atol=1e-10)


@pytest.mark.parametrize(
    "loss", [S.ListNet(), S.ConsistentListNet(), S.ConsistentSquared()], ids=lambda x: x.name
)
def test_standin_closed_forms_are_used_and_exact(loss):
    y, s, b = S.random_lists(5, n_queries=30, max_len=30)
    y[b[3] : b[4]] = 0.0  # a list without relevant documents
    bound = LossObjective(loss).bind(y, b)
    assert bound.modes == {"closed": len(y)}
    g, h = bound.grad_hess(s)
    g_ref, h_ref, _ = S.reference_grad_hess(loss, y, s, b)
    np.testing.assert_allclose(g, g_ref, atol=1e-10)
    np.testing.assert_allclose(h, np.maximum(h_ref, FLOOR), atol=1e-10)


def _hutchinson_check(loss, y, s, b, samples=32):
    obj = LossObjective(loss, hessian="hutchinson", hutchinson_samples=samples, seed=11)
    g, h = obj.bind(y, b).grad_hess(s)
    g_ref, h_ref, hs = S.reference_grad_hess(loss, y, s, b)
    np.testing.assert_allclose(g, g_ref, atol=1e-10)
    # stated bound: sd of the estimate of H_ii is sqrt(Σ_{j≠i} H_ij² / S); allow 5 sd
    off = [np.clip((H**2).sum(1) - np.diag(H) ** 2, 0.0, None) for H in hs]
    sd = np.sqrt(np.concatenate(off)) / np.sqrt(samples)
    err = np.abs(h - np.maximum(h_ref, FLOOR))  # clamping is 1-Lipschitz
    assert (err <= 5.0 * sd + 1e-9).all(), float((err - 5 * sd).max())
    return err, sd


@pytest.mark.parametrize("loss", [S.ListNet(), S.Cosine(), S.RankNet()], ids=lambda x: x.name)
def test_hutchinson_within_stated_bound(loss):
    y, s, b = S.random_lists(6, n_queries=20, max_len=25)
    _, sd = _hutchinson_check(loss, y, s, b)
    assert sd.max() > 0  # the test is not vacuous


def test_auto_mixes_exact_and_hutchinson_by_length():
    y, _, b = S.random_lists(7, n_queries=30, max_len=40)
    obj = LossObjective(S.Cosine(), exact_max_len=16)
    bound = obj.bind(y, b)
    assert set(bound.modes) == {"exact", "hutchinson"}
    assert sum(bound.modes.values()) == len(y)


def test_hessian_is_floored_and_constant_mode():
    y, s, b = S.random_lists(8)
    _, h = LossObjective(S.Cosine(), hessian="exact", hess_floor=1e-3).bind(y, b).grad_hess(s)
    assert (h >= 1e-3).all()
    g, h = LossObjective(S.ListNet(), hessian="constant").bind(y, b).grad_hess(s)
    assert np.all(h == 1.0)
    np.testing.assert_allclose(g, S.reference_grad_hess(S.ListNet(), y, s, b)[0], atol=1e-10)


def test_closed_form_mismatch_falls_back_to_autograd():
    y, s, b = S.random_lists(9)
    impostor = S.Named(S.Cosine(), "listnet")  # says listnet, is not of the softmax form
    with pytest.warns(RuntimeWarning, match="falling back"):
        bound = LossObjective(impostor).bind(y, b)
    assert "closed" not in bound.modes
    g, h = bound.grad_hess(s)
    g_ref, h_ref, _ = S.reference_grad_hess(S.Cosine(), y, s, b)
    np.testing.assert_allclose(g, g_ref, atol=1e-10)
    np.testing.assert_allclose(h, np.maximum(h_ref, FLOOR), atol=1e-10)


def test_constant_lists_skip():
    y, s, b = S.random_lists(10, n_queries=10)
    y[b[2] : b[3]] = 1.0
    g_keep, _ = LossObjective(S.ListNet()).bind(y, b).grad_hess(s)
    g_skip, h_skip = LossObjective(S.ListNet(), constant_lists="skip").bind(y, b).grad_hess(s)
    assert np.all(g_skip[b[2] : b[3]] == 0) and np.all(h_skip[b[2] : b[3]] == FLOOR)
    rest = np.ones(len(y), bool)
    rest[b[2] : b[3]] = False
    const = np.array([np.ptp(y[b[q] : b[q + 1]]) == 0 for q in range(len(b) - 1)])
    for q in np.flatnonzero(const):
        rest[b[q] : b[q + 1]] = False
    np.testing.assert_allclose(g_skip[rest], g_keep[rest])


def test_lightgbm_and_sklearn_signatures():
    lgb = pytest.importorskip("lightgbm")
    y, s, b = S.random_lists(11)
    obj = LossObjective(S.ListNet())
    ds = lgb.Dataset(np.zeros((len(y), 1)), label=y, group=np.diff(b)).construct()
    g1, h1 = obj(s, ds)
    g2, h2 = obj.sklearn_objective()(y, s, None, np.diff(b))
    g3, h3 = obj.bind(y, b).grad_hess(s)
    np.testing.assert_array_equal(g1, g3)
    np.testing.assert_array_equal(g2, g3)
    np.testing.assert_array_equal(h1, h3)
    assert h2.shape == h3.shape


def test_bad_options_are_rejected():
    with pytest.raises(SpecError, match="unknown hessian"):
        LossObjective(S.ListNet(), hessian="newton")
    with pytest.raises(SpecError, match="hess_floor"):
        LossObjective(S.ListNet(), hess_floor=0)
    with pytest.raises(SpecError, match="no closed-form"):
        LossObjective(S.Cosine(), hessian="closed")
    y, s, b = S.random_lists(12)
    with pytest.raises(SpecError, match="scores for an objective"):
        LossObjective(S.ListNet()).bind(y, b).grad_hess(s[:-1])


# ----------------------------------------------------------------------------- registered losses
@pytest.mark.parametrize("spec", REGISTERED_SPECS)
def test_gradient_equals_autograd_of_registered_loss(spec):
    loss = _reg(spec)
    y, s, b = _distinct_labels(13)
    g, _ = LossObjective(spec, verify=True).bind(y, b).grad_hess(s)
    g_ref, _, _ = S.reference_grad_hess(loss, y, s, b, generator_seed=0)
    np.testing.assert_allclose(g, g_ref, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("spec", REGISTERED_SPECS)
def test_exact_hessian_of_registered_loss(spec):
    loss = _reg(spec)
    y, s, b = _distinct_labels(14, n_queries=8, max_len=8)
    bound = LossObjective(spec, hessian="exact").bind(y, b)
    _, h = bound.grad_hess(s)
    _, h_ref, _ = S.reference_grad_hess(loss, y, s, b, generator_seed=0)
    # stated rule: a non-finite second derivative from autograd is replaced by the floor
    # (cs_listmle's double backward can give NaN) and counted
    nan = ~np.isfinite(h_ref)
    assert bound.nonfinite_hessians == int(nan.sum())
    np.testing.assert_allclose(
        h, np.where(nan, FLOOR, np.maximum(h_ref, FLOOR)), atol=1e-9, rtol=1e-9
    )


@pytest.mark.parametrize("spec", CLOSED_SPECS)
def test_registered_closed_forms_with_tied_labels(spec):
    loss = _reg(spec)
    small = spec.startswith("cs_listmle")  # its oracle (finite differences) is slow
    y, s, b = S.random_lists(15, n_queries=10 if small else 30, max_len=14 if small else 30)
    y[b[0] : b[1]] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the closed form must verify
        bound = LossObjective(spec).bind(y, b)
    assert bound.modes == {"closed": len(y)}
    g, h = bound.grad_hess(s)
    g_ref, h_ref, _ = S.reference_grad_hess(loss, y, s, b)
    np.testing.assert_allclose(g, g_ref, atol=1e-9, rtol=1e-9)
    if spec.startswith("cs_listmle"):
        # the registered loss's second-order autograd can be NaN (logcumsumexp with fill
        # values); check against central differences of its first-order gradient instead
        h_ref = S.fd_hessian_diag(loss, y, s, b)
        np.testing.assert_allclose(h, np.maximum(h_ref, FLOOR), atol=1e-6, rtol=1e-5)
    else:
        np.testing.assert_allclose(h, np.maximum(h_ref, FLOOR), atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize("spec", ["lambdarank@10", "qnorm", "consistent_cosine(norm=z10)"])
def test_registered_hutchinson_within_bound(spec):
    loss = _reg(spec)
    y, s, b = _distinct_labels(16, n_queries=10, max_len=12)
    _hutchinson_check(loss, y, s, b)


def test_listmle_closed_form_with_tied_labels_same_draw():
    loss = _reg("listmle")
    y, s, b = S.random_lists(17, n_queries=20, max_len=15)
    bound = LossObjective("listmle").bind(y, b)
    assert bound.modes == {"closed": len(y)}
    for st, sp in zip(bound.states, bound.buckets.gather(s)):
        x = torch.from_numpy(sp)
        g, h = st.closed.grad_hess(x, torch.Generator().manual_seed(3))

        def f(v, st=st):
            return loss(v, st.labels, st.mask, generator=torch.Generator().manual_seed(3)).sum()

        v = x.clone().requires_grad_(True)
        (g_ref,) = torch.autograd.grad(f(v), v)
        hfull = torch.autograd.functional.hessian(f, x)
        bsz, m = x.shape
        h_ref = hfull.reshape(bsz * m, bsz * m).diagonal().reshape(bsz, m)
        np.testing.assert_allclose(g.numpy(), g_ref.numpy(), atol=1e-10)
        np.testing.assert_allclose(h.numpy(), (h_ref * st.mask).numpy(), atol=1e-10)


# ------------------------------------------------------------------- CS-ListMLE, independent
def _cs_weights_by_hand(y, k):
    """Lu et al.'s pair weights written out from docs/losses.md ("cs_listmle@k"), one list, plain
    Python: a(i) = 2^y − 1, ĝ(i) = 1 + #{t: y_t > y_i}, |b'(j)| = ln2 / ((1 + j) ln(1 + j)²) for
    j ≤ k (else 0), c(i) = a(i)|b'(ĝ(i))|, w_jt = c(j) + c(t) for y_j > y_t, β_j = Σ_t w_jt and
    DCG_ĝ@k = Σ_{ĝ(i) ≤ k} a(i) / log2(1 + ĝ(i)). Nothing of ndcglab is used."""
    import math

    n = len(y)
    a = [2.0**v - 1.0 for v in y]
    gh = [1 + sum(1 for u in y if u > v) for v in y]
    bp = [math.log(2) / ((1 + j) * math.log(1 + j) ** 2) if j <= k else 0.0 for j in gh]
    c = [a[i] * bp[i] for i in range(n)]
    w = [[c[j] + c[t] if y[j] > y[t] else 0.0 for t in range(n)] for j in range(n)]
    beta = [sum(row) for row in w]
    dcg = sum(a[i] / math.log2(1 + gh[i]) for i in range(n) if gh[i] <= k)
    return w, beta, dcg


def _cs_loss_by_hand(x, y, k):
    """L_CS of one list (a 1-D float64 tensor ``x``) from the hand-built weights."""
    w, beta, dcg = _cs_weights_by_hand(y, k)
    total = x.new_zeros(())
    for j in range(len(y)):
        if beta[j] > 0:
            inner = sum(
                w[j][t] / beta[j] * torch.exp(x[t] - x[j]) for t in range(len(y)) if w[j][t]
            )
            total = total + beta[j] * torch.log2(1 + inner)
    return total / dcg if dcg > 0 else total * 0.0


@pytest.mark.parametrize("spec", ["cs_listmle@3", "cs_listmle@10", "cs_listmle@0.5n"])
def test_cs_listmle_closed_form_against_independent_weights(spec):
    """The tree objective's CS-ListMLE closed form and the loss both build their weights with
    ``cs_listmle_weights``; here the weights, the gradient and the exact Hessian diagonal are
    checked against weights built by hand (tied labels included)."""
    import math

    from ndcglab.losses import cs_listmle_weights

    y, s, b = S.random_lists(21, n_queries=10, max_len=11, levels=4)
    g, h = LossObjective(spec).bind(y, b).grad_hess(s)
    for q in range(len(b) - 1):
        lo, hi = b[q], b[q + 1]
        yq = [float(v) for v in y[lo:hi]]
        n = hi - lo
        k = math.ceil(0.5 * n) if spec.endswith("n") else int(spec.split("@")[1])
        w_ref, beta_ref, dcg_ref = _cs_weights_by_hand(yq, min(k, n))
        w, beta, dcg = cs_listmle_weights(torch.tensor([yq], dtype=torch.float64), k=k)
        np.testing.assert_allclose(w[0].numpy(), np.array(w_ref), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(beta[0].numpy(), np.array(beta_ref), rtol=1e-12, atol=1e-15)
        assert dcg.item() == pytest.approx(dcg_ref, rel=1e-12, abs=1e-15)
        x = torch.tensor(s[lo:hi], dtype=torch.float64)

        def f(v, yq=yq, k=k):
            return _cs_loss_by_hand(v, yq, k)

        xg = x.clone().requires_grad_(True)
        value = f(xg)
        g_ref = torch.autograd.grad(value, xg)[0].numpy() if value.requires_grad else np.zeros(n)
        h_ref = torch.autograd.functional.hessian(f, x).diagonal().numpy()
        np.testing.assert_allclose(g[lo:hi], g_ref, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(h[lo:hi], np.maximum(h_ref, FLOOR), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("spec", ["cs_listmle@3", "cs_listmle@10", "cs_listmle"])
def test_cs_listmle_factorised_form_equals_autograd_and_binds_labels_once(spec, monkeypatch):
    """CS-ListMLE's objective uses the factorised (prefix/suffix-sum) gradient and Hessian
    diagonal, no pair matrix: on padded buckets with tied labels they equal autograd (first
    order: of the registered loss; second order: of its pair-matrix definition) to 1e-10, and
    the label-only parts are built when the objective is bound, never in a round."""
    import ndcglab.losses.cs_listmle as cs

    loss = _reg(spec)
    y, s, b = S.random_lists(33, n_queries=25, max_len=40, levels=3)
    bound = LossObjective(spec).bind(y, b)
    assert bound.modes == {"closed": len(y)}
    assert all(not st.closed.pairs for st in bound.states)
    calls = []
    real = cs._parts
    monkeypatch.setattr(cs, "_parts", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(cs, "cs_listmle_weights", None)  # no (B, M, M) weights per round
    g, _ = bound.grad_hess(s)
    bound.grad_hess(s * 0.5)
    assert calls == []
    monkeypatch.undo()
    g_ref, _, _ = S.reference_grad_hess(loss, y, s, b)
    np.testing.assert_allclose(g, g_ref, atol=1e-10, rtol=1e-10)
    from ndcglab.losses import cs_listmle_weights

    for st, sp in zip(bound.states, bound.buckets.gather(s), strict=True):
        x = torch.from_numpy(sp) * st.mask
        gf, hf = st.closed.grad_hess(x)
        w, beta, dcg = cs_listmle_weights(st.labels, st.mask, k=loss.cutoff)

        def definition(v, w=w, beta=beta, dcg=dcg):
            pos = w > 0
            z = torch.where(pos, torch.log(torch.where(pos, w, 1.0)), -1e4)
            z = z + v.unsqueeze(-2) - v.unsqueeze(-1)
            has = beta > 0
            inner = torch.logsumexp(z, dim=-1) - torch.log(torch.where(has, beta, 1.0))
            terms = torch.where(has, beta * torch.nn.functional.softplus(inner), 0.0)
            ok = dcg > 0
            return (terms.sum(-1) * torch.where(ok, 1 / (np.log(2.0) * dcg), 0.0)).sum()

        xg = x.clone().requires_grad_(True)
        (ga,) = torch.autograd.grad(definition(xg), xg, create_graph=True)
        ha = torch.zeros_like(x)
        for j in range(x.shape[1]):
            (col,) = torch.autograd.grad(ga[:, j].sum(), xg, retain_graph=True)
            ha[:, j] = col[:, j]
        torch.testing.assert_close(gf, ga.detach() * st.mask, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(hf, ha.detach() * st.mask, rtol=1e-10, atol=1e-10)


# ----------------------------------------------------------------------------- non-convex losses
def test_abs_mode_is_the_absolute_exact_diagonal():
    y, s, b = S.random_lists(21)
    bound = LossObjective(S.Cosine(), hessian="abs").bind(y, b)
    assert set(bound.modes) == {"abs-exact"}
    g, h = bound.grad_hess(s)
    g_ref, h_ref, _ = S.reference_grad_hess(S.Cosine(), y, s, b)
    assert (h_ref < -1e-8).any()  # cosine's diagonal has negative entries here
    np.testing.assert_allclose(g, g_ref, atol=1e-10)
    np.testing.assert_allclose(h, np.maximum(np.abs(h_ref), FLOOR), atol=1e-10)
    long = LossObjective(S.Cosine(), hessian="abs", exact_max_len=4).bind(y, b)
    assert set(long.modes) <= {"abs-exact", "abs-hutchinson"} and "abs-hutchinson" in long.modes
    _, h_long = long.grad_hess(s)
    assert (h_long >= FLOOR).all()


def test_approx_ndcg_diagonal_is_negative_at_ties_and_auto_takes_its_absolute_value():
    """At tied scores (where boosting starts) ApproxNDCG's Hessian diagonal is ≤ 0 for every
    document (docs/gbdt.md, "Non-convex losses"): the floored diagonal would be the floor
    everywhere; ``auto`` uses |diag| (the loss's ``hessian_rule``), checked against the oracle."""
    loss = _reg("approx_ndcg")
    y, _, b = S.random_lists(22, n_queries=10, max_len=9)
    s = np.zeros_like(y)
    _, h_ref, _ = S.reference_grad_hess(loss, y, s, b)
    has_gain = np.repeat([np.ptp(y[b[q] : b[q + 1]]) > 0 for q in range(len(b) - 1)], np.diff(b))
    assert (h_ref[has_gain] < 0).all() and (h_ref <= 1e-15).all()
    assert loss.hessian_rule == "abs"
    bound = LossObjective("approx_ndcg").bind(y, b)
    assert set(bound.modes) == {"abs-exact"}
    _, h = bound.grad_hess(s)
    np.testing.assert_allclose(h, np.maximum(np.abs(h_ref), FLOOR), atol=1e-12)
    _, h_floor = LossObjective("approx_ndcg", hessian="exact").bind(y, b).grad_hess(s)
    assert np.all(h_floor == FLOOR)
