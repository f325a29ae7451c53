"""The surrogates of the last decade against slow references written here from each paper.

Each reference is a plain loop over documents, pairs and positions, in float64, with the paper's
formula (gain 2^y − 1, discount 1/log2(1 + r) unless a test says otherwise); values and
autograd gradients of the registered loss and of the reference are compared and the largest
difference is printed (``pytest -s``).
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from ndcglab.errors import SpecError  # noqa: E402
from ndcglab.losses import get_loss  # noqa: E402

F64 = torch.float64


def _cases(seed: int = 0, count: int = 6):
    g = torch.Generator().manual_seed(seed)
    out = []
    for n in (6, 4, 7, 3, 5, 8)[:count]:
        s = torch.randn(n, generator=g, dtype=F64) * 1.5
        y = torch.randint(0, 4, (n,), generator=g).to(F64)
        y[0], y[-1] = 3.0, 0.0
        out.append((s, y))
    return out


def _gain(y: float) -> float:
    return 2.0**y - 1.0


def _disc(r: float) -> float:
    return 1.0 / math.log2(1.0 + r)


def _idcg(y, k=None):
    gains = sorted((_gain(float(v)) for v in y), reverse=True)
    k = len(gains) if k is None else min(k, len(gains))
    return sum(gains[r] * _disc(r + 1) for r in range(k))


def _ranks(s):
    """1-based positions by scores descending, ties in input order."""
    order = sorted(range(len(s)), key=lambda i: (-float(s[i]), i))
    pos = [0] * len(s)
    for r, i in enumerate(order):
        pos[i] = r + 1
    return pos


def _compare(spec, reference, cases, *, atol=1e-10):
    """Value and gradient of ``spec`` vs ``reference(s, y)`` on each list; returns max diffs."""
    loss = get_loss(spec)
    worst_v = worst_g = 0.0
    for s0, y in cases:
        s1 = s0.clone().requires_grad_(True)
        v = loss(s1[None], y[None])[0]
        (g,) = torch.autograd.grad(v, s1)
        s2 = s0.clone().requires_grad_(True)
        r = reference(s2, y)
        (gr,) = torch.autograd.grad(r, s2)
        worst_v = max(worst_v, abs(float(v.detach()) - float(r.detach())))
        worst_g = max(worst_g, float((g - gr).abs().max()))
    print(f"{spec}: max |Δvalue| = {worst_v:.3e}, max |Δgradient| = {worst_g:.3e}")
    assert worst_v <= atol and worst_g <= atol, (spec, worst_v, worst_g)
    return worst_v, worst_g


# ------------------------------------------------------------------ ApproxNDCG (Qin et al. 2010)
def _approx_ref(alpha):
    def ref(s, y):
        n = len(s)
        dcg = 0.0
        for i in range(n):
            pos = 1.0
            for j in range(n):
                if j != i:
                    pos = pos + 1.0 / (1.0 + torch.exp(-alpha * (s[j] - s[i])))
            dcg = dcg + _gain(float(y[i])) / torch.log2(1.0 + pos)
        return 1.0 - dcg / _idcg(y)

    return ref


@pytest.mark.parametrize("alpha", [1.0, 10.0])
def test_approx_ndcg_matches_the_paper(alpha):
    _compare(f"approx_ndcg(alpha={alpha:g})", _approx_ref(alpha), _cases())


def test_approx_ndcg_tends_to_one_minus_ndcg():
    s = torch.tensor([[3.0, 1.0, 2.0, 0.0]], dtype=F64)
    y = torch.tensor([[0.0, 2.0, 1.0, 0.0]], dtype=F64)
    v = get_loss("approx_ndcg(alpha=200)")(s, y)[0]
    pos = _ranks(s[0])
    ndcg = sum(_gain(float(y[0, i])) * _disc(pos[i]) for i in range(4)) / _idcg(y[0])
    assert abs(float(v) - (1.0 - ndcg)) < 1e-12


def test_approx_ndcg_refuses_a_custom_discount():
    with pytest.raises(SpecError, match="no smooth form"):
        get_loss("approx_ndcg").__class__(discount=lambda r, n: 1.0 / r)


# ---------------------------------------------------------------- Gumbel-ApproxNDCG (Bruch et al.)
def test_gumbel_approx_ndcg_matches_its_definition():
    """Mean over S samples of ApproxNDCG at s + β g, g drawn by the documented rule: one seed
    from the generator, NumPy's default_rng(seed).random((n, S)), g[t, c] = −log(−log u[c, t])."""
    import numpy as np

    samples, beta, alpha = 4, 0.5, 2.0
    loss = get_loss(f"gumbel_approx_ndcg(alpha={alpha:g},beta={beta:g},samples={samples})")
    worst_v = worst_g = 0.0
    for s0, y in _cases(seed=6):
        n = len(s0)
        gen = torch.Generator().manual_seed(21)
        s1 = s0.clone().requires_grad_(True)
        v = loss(s1[None], y[None], generator=gen)[0]
        (g,) = torch.autograd.grad(v, s1)
        gen = torch.Generator().manual_seed(21)
        seed = int(torch.randint(0, 2**62, (1,), generator=gen).item())
        u = np.random.default_rng(seed).random((n, samples)).T
        noise = torch.as_tensor(-np.log(-np.log(u)), dtype=F64)
        s2 = s0.clone().requires_grad_(True)
        ref = sum(_approx_ref(alpha)(s2 + beta * noise[t], y) for t in range(samples)) / samples
        (gr,) = torch.autograd.grad(ref, s2)
        worst_v = max(worst_v, abs(float(v.detach()) - float(ref.detach())))
        worst_g = max(worst_g, float((g - gr).abs().max()))
    print(f"gumbel_approx_ndcg: max |Δvalue| = {worst_v:.3e}, max |Δgradient| = {worst_g:.3e}")
    assert worst_v < 1e-10 and worst_g < 1e-10


def test_gumbel_approx_ndcg_is_reproducible_and_fresh_per_call():
    loss = get_loss("gumbel_approx_ndcg")
    s = torch.randn(2, 6, dtype=F64, generator=torch.Generator().manual_seed(1))
    y = torch.tensor([[3.0, 0, 1, 2, 0, 1], [1.0, 0, 0, 2, 0, 0]], dtype=F64)
    a = loss(s, y, generator=torch.Generator().manual_seed(5))
    b = loss(s, y, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
    gen = torch.Generator().manual_seed(5)
    first, second = loss(s, y, generator=gen), loss(s, y, generator=gen)
    assert not torch.equal(first, second)


# ------------------------------------------------------------------ NeuralNDCG (Pobrotyn et al.)
def _neural_ref(tau, rounds, k=None, transposed=False):
    def ref(s, y):
        n = len(s)
        a = [sum(torch.abs(s[i] - s[j]) for j in range(n)) for i in range(n)]
        p = []
        for r in range(1, n + 1):
            logits = [((n + 1 - 2 * r) * s[i] - a[i]) / tau for i in range(n)]
            z = torch.logsumexp(torch.stack(logits), dim=0)
            p.append([torch.exp(logits[i] - z) for i in range(n)])

        def norm_rows(p):
            return [[p[r][i] / sum(p[r]) for i in range(n)] for r in range(n)]

        def norm_cols(p):
            col = [sum(p[r][i] for r in range(n)) for i in range(n)]
            return [[p[r][i] / col[i] for i in range(n)] for r in range(n)]

        for _ in range(rounds):
            p = norm_cols(norm_rows(p)) if transposed else norm_rows(norm_cols(p))
        kk = n if k is None else min(k, n)
        dcg = 0.0
        for r in range(kk):
            for i in range(n):
                dcg = dcg + _disc(r + 1) * p[r][i] * _gain(float(y[i]))
        return 1.0 - dcg / _idcg(y, kk)

    return ref


@pytest.mark.parametrize(
    ("spec", "tau", "rounds", "k", "transposed"),
    [
        ("neural_ndcg", 1.0, 50, None, False),
        ("neural_ndcg(sinkhorn=0)", 1.0, 0, None, False),
        ("neural_ndcg(sinkhorn=5,tau=0.5)@3", 0.5, 5, 3, False),
        ("neural_ndcg(form=transposed,sinkhorn=5,tau=0.5)@3", 0.5, 5, 3, True),
        ("neural_ndcg(form=transposed)", 1.0, 50, None, True),
    ],
)
def test_neural_ndcg_matches_the_paper(spec, tau, rounds, k, transposed):
    _compare(spec, _neural_ref(tau, rounds, k, transposed), _cases(count=4))


def test_neural_ndcg_forms_agree_when_sinkhorn_converges():
    s = torch.randn(2, 6, dtype=F64, generator=torch.Generator().manual_seed(3))
    y = torch.tensor([[3.0, 0, 1, 2, 0, 1], [1.0, 0, 0, 2, 0, 0]], dtype=F64)
    a = get_loss("neural_ndcg(sinkhorn=300)")(s, y)
    b = get_loss("neural_ndcg(form=transposed,sinkhorn=300)")(s, y)
    assert float((a - b).abs().max()) < 1e-9


# ------------------------------------------------------------------ LambdaLoss (Wang et al. 2018)
def _lambdaloss_ref(scheme, k=None, pairs="either", sigma=1.0, mu=10.0):
    def ref(s, y):
        n = len(s)
        kk = n if k is None else min(k, n)
        pos = _ranks(s.detach())
        z = _idcg(y, kk)
        gb = [_gain(float(v)) / z for v in y]
        total = 0.0
        for i in range(n):
            for j in range(n):
                if i == j:
                    continue
                lo, hi = min(pos[i], pos[j]), max(pos[i], pos[j])
                if k is not None and (hi > kk if pairs == "both" else lo > kk):
                    continue
                if scheme == "ndcg1":
                    w = gb[i] * _disc(pos[i])
                else:
                    if not float(y[i]) > float(y[j]):
                        continue
                    gap = abs(pos[i] - pos[j])
                    delta = abs(_disc(gap) - _disc(gap + 1))
                    w = delta * abs(gb[i] - gb[j])
                    if scheme == "ndcg2pp":
                        rho = abs(_disc(pos[i]) - _disc(pos[j]))
                        w = (mu * delta + rho) * abs(gb[i] - gb[j])
                # −log2 of the pair's probability raised to the weight
                prob = 1.0 / (1.0 + torch.exp(-sigma * (s[i] - s[j])))
                total = total - w * torch.log2(prob)
        return total

    return ref


@pytest.mark.parametrize("scheme", ["ndcg1", "ndcg2", "ndcg2pp"])
@pytest.mark.parametrize(("k", "pairs"), [(None, "either"), (3, "either"), (3, "both")])
def test_lambdaloss_matches_the_paper(scheme, k, pairs):
    cut = "" if k is None else f"@{k}"
    spec = f"lambdaloss(pairs={pairs},scheme={scheme}){cut}"
    _compare(spec, _lambdaloss_ref(scheme, k, pairs), _cases())


def test_lambdaloss_sigma_and_mu():
    _compare(
        "lambdaloss(mu=2,scheme=ndcg2pp,sigma=2)@4",
        _lambdaloss_ref("ndcg2pp", 4, "either", sigma=2.0, mu=2.0),
        _cases(seed=4),
    )


def test_lambdaloss_allrank_transcription():
    """allRank's ``lambdaLoss`` (sort by predictions, pairs of sorted positions, both in the
    top k, sum, log2), transcribed in vectorised form: equal to ``pairs=both``."""
    for scheme in ("ndcg2", "ndcg2pp"):
        for s0, y in _cases(seed=2):
            k = 4
            s = s0.clone().requires_grad_(True)
            sp, idx = s.sort(descending=True, stable=True)
            ts = y[idx]
            n = len(y)
            d = torch.log2(1.0 + torch.arange(1, n + 1, dtype=F64))[None, :]
            maxdcg = ((2 ** y.sort(descending=True).values - 1) / d[0])[:k].sum()
            gg = (2**ts - 1) / maxdcg
            pidx = torch.arange(1, n + 1)
            didx = (pidx[:, None] - pidx[None, :]).abs()
            dfull = torch.log2(1.0 + torch.arange(0, n + 1, dtype=F64))
            inv = torch.where(dfull > 0, 1.0 / dfull, torch.zeros_like(dfull))
            deltas = (inv[didx] - inv[(didx + 1).clamp(max=n)]).abs()
            deltas.fill_diagonal_(0.0)
            w = deltas * (gg[:, None] - gg[None, :]).abs()
            if scheme == "ndcg2pp":
                w = (
                    10.0 * w
                    + (1 / d[0][:, None] - 1 / d[0][None, :]).abs()
                    * (gg[:, None] - gg[None, :]).abs()
                )
            use = (ts[:, None] - ts[None, :]) > 0
            top = torch.zeros(n, n, dtype=torch.bool)
            top[:k, :k] = True
            probs = torch.sigmoid(sp[:, None] - sp[None, :]) ** w
            ref = -torch.log2(probs)[use & top].sum()
            (gr,) = torch.autograd.grad(ref, s)
            x = s0.clone().requires_grad_(True)
            v = get_loss(f"lambdaloss(pairs=both,scheme={scheme})@{k}")(x[None], y[None])[0]
            (g,) = torch.autograd.grad(v, x)
            assert abs(float((v - ref).detach())) < 1e-10 and float((g - gr).abs().max()) < 1e-10


# ------------------------------------------------------------------ pointwise
def _sigmoid_ce_ref(threshold):
    def ref(s, y):
        total = 0.0
        for i in range(len(s)):
            t = 1.0 if float(y[i]) >= threshold else 0.0
            p = 1.0 / (1.0 + torch.exp(-s[i]))
            total = total - t * torch.log(p) - (1.0 - t) * torch.log(1.0 - p)
        return total

    return ref


@pytest.mark.parametrize("threshold", [1.0, 2.0])
def test_sigmoid_ce_matches_its_formula(threshold):
    _compare(f"sigmoid_ce(threshold={threshold:g})", _sigmoid_ce_ref(threshold), _cases())


def _ordinal_ref(levels):
    def cdf(c, s):  # P(y ≤ c) = σ(θ_c − s), θ_c = c + ½
        if c < 0:
            return 0.0
        if c >= levels - 1:
            return 1.0
        return 1.0 / (1.0 + torch.exp(-(c + 0.5 - s)))

    def ref(s, y):
        total = 0.0
        for i in range(len(s)):
            c = min(max(math.floor(float(y[i])), 0), levels - 1)
            total = total - torch.log(cdf(c, s[i]) - cdf(c - 1, s[i]))
        return total

    return ref


@pytest.mark.parametrize("levels", [5, 3])
def test_ordinal_matches_the_cumulative_logit_likelihood(levels):
    _compare(f"ordinal(levels={levels})", _ordinal_ref(levels), _cases())


def test_squared_error_on_labels_is_squared_linear():
    s = torch.randn(1, 5, dtype=F64)
    y = torch.tensor([[2.0, 0, 1, 0, 3]], dtype=F64)
    v = get_loss("squared(gain=linear)")(s, y)[0]
    assert abs(float(v) - float(((s - y) ** 2).sum())) < 1e-12


# ------------------------------------------------------------------ softmax targets
def _softmax_ref(target):
    def ref(s, y):
        n = len(s)
        if target == "label":
            w = [float(v) for v in y]
        elif target == "gain":
            w = [_gain(float(v)) for v in y]
        else:
            w = [math.exp(float(v)) for v in y]
        tot = sum(w)
        z = torch.logsumexp(s, dim=0)
        return -sum(w[i] / tot * (s[i] - z) for i in range(n))

    return ref


@pytest.mark.parametrize(
    ("spec", "target"),
    [
        ("softmax_ce", "label"),
        ("softmax_ce(gain=exp2,target=gain)", "gain"),
        ("softmax_ce(target=softmax)", "softmax"),
    ],
)
def test_softmax_targets(spec, target):
    _compare(spec, _softmax_ref(target), _cases())


def test_softmax_target_softmax_is_listnet():
    s = torch.randn(3, 6, dtype=F64)
    y = torch.randint(0, 3, (3, 6)).to(F64)
    a = get_loss("softmax_ce(target=softmax)")(s, y)
    b = get_loss("listnet")(s, y)
    assert torch.equal(a, b)
