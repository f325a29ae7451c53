"""Loss-specific oracles: closed forms and worked examples from the papers, hand-computed values
and slow loop transcriptions of the formulas (never numbers taken from the code under test)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

torch = pytest.importorskip("torch")

from ndcglab.losses import (  # noqa: E402
    cs_listmle_constant,
    cs_listmle_weights,
    get_loss,
    get_potential,
    lambdarank_delta,
    listmle_order,
    normalised_gains,
)

F64 = torch.float64
LOG2_3 = math.log2(3.0)


def t(rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=F64)


# ---------------------------------------------------------------- slow reference measures
# Gains and discounts written out here from their definitions (docs/measures.md), never taken
# from ndcglab: a wrong gain or discount in the library must not also change the reference.
GAINS = {
    "exp2": lambda y: 2.0**y - 1.0,
    "linear": lambda y: float(y),
    "letor": lambda y: {0.0: 0.0, 1.0: 1.0, 2.0: 3.0}.get(float(y), 0.0),
}
DISCOUNTS = {
    "log": lambda r, n: 1.0 / math.log2(1.0 + r),
    "zipf": lambda r, n: 1.0 / r,
    "letor": lambda r, n: 1.0 if r <= 2 else 1.0 / math.log2(r),
    "linear": lambda r, n: float(n - r),
}


def dcg_at_k(scores, labels, k, gain="exp2", discount="log"):
    """DCG@k of the ranking by scores (descending, ties in input order), by a plain loop."""
    g, d = GAINS[gain], DISCOUNTS[discount]
    n = len(labels)
    order = sorted(range(n), key=lambda i: -scores[i])  # stable: ties keep input order
    kk = n if k is None else min(k, n)
    return sum(g(float(labels[order[r]])) * d(r + 1, n) for r in range(kk))


def ndcg_at_k(scores, labels, k, gain="exp2", discount="log"):
    ideal = dcg_at_k(sorted(labels, reverse=True), sorted(labels, reverse=True), k, gain, discount)
    return dcg_at_k(scores, labels, k, gain, discount) / ideal if ideal > 0 else 0.0


# ------------------------------------ Ravikumar et al. §3.2.1 worked example (docs/losses.md)
LABELS_EX = t([[5.0, 4.0], [1.0, 3.0]])
PROB_EX = t([0.3, 0.7])
CONSISTENT = [
    "consistent_squared",
    "consistent_cosine",
    "consistent_listnet",
    "bregman",
    "bregman(h=exp)",
    "bregman(outer=square)",
    "bregman(outer=exp)",
    "qnorm",
    "qnorm(form=penalised)",
    "qnorm(q=2)",
]


def expected_u_by_hand():
    z1 = 31.0 + 15.0 / LOG2_3  # labels (5, 4): G = (31, 15), ideal order as given
    z2 = 7.0 + 1.0 / LOG2_3  # labels (1, 3): G = (1, 7), ideal order puts doc 2 first
    return [0.3 * 31.0 / z1 + 0.7 * 1.0 / z2, 0.3 * 15.0 / z1 + 0.7 * 7.0 / z2]


def minimise_expected(spec: str, start=(0.1, -0.1)) -> torch.Tensor:
    loss = get_loss(spec)
    s = torch.tensor(start, dtype=F64, requires_grad=True)
    opt = torch.optim.LBFGS(
        [s],
        lr=1.0,
        max_iter=500,
        tolerance_grad=1e-12,
        tolerance_change=1e-15,
        line_search_fn="strong_wolfe",
    )

    def closure():
        opt.zero_grad()
        value = (PROB_EX * loss(s.expand(2, 2), LABELS_EX)).sum()
        value.backward()
        return value

    for _ in range(3):
        opt.step(closure)
    return s.detach()


def test_expected_normalised_gains_match_the_paper():
    u, ok = normalised_gains(LABELS_EX, torch.ones(2, 2, dtype=torch.bool))
    assert ok.all()
    eu = (PROB_EX[:, None] * u).sum(0)
    assert [round(x, 4) for x in eu.tolist()] == [0.3216, 0.7533]  # Ravikumar et al. §3.2.1
    torch.testing.assert_close(eu, t(expected_u_by_hand()), rtol=1e-14, atol=1e-14)
    eg = (PROB_EX[:, None] * (2.0**LABELS_EX - 1)).sum(0)
    torch.testing.assert_close(eg, t([10.0, 9.4]))


def test_original_squared_ranks_document_one_first():
    s = minimise_expected("squared")
    torch.testing.assert_close(s, t([10.0, 9.4]), rtol=1e-7, atol=1e-7)  # s* = E[G]
    assert s[0] > s[1]


@pytest.mark.parametrize("spec", CONSISTENT)
def test_consistent_losses_rank_document_two_first(spec):
    s = minimise_expected(spec)
    assert s[1] > s[0] + 1e-3, (spec, s)


def test_consistent_minimisers_in_closed_form():
    eu = t(expected_u_by_hand())
    torch.testing.assert_close(minimise_expected("consistent_squared"), eu, rtol=1e-7, atol=1e-8)
    torch.testing.assert_close(
        minimise_expected("consistent_listnet"), eu.log(), rtol=1e-6, atol=1e-7
    )
    torch.testing.assert_close(minimise_expected("bregman(h=exp)"), eu.log(), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(minimise_expected("bregman"), eu / 2, rtol=1e-7, atol=1e-8)
    # outer=square: ∇ψ*(s) = 4‖s‖² s = E[u]
    s = minimise_expected("bregman(outer=square)")
    torch.testing.assert_close(4 * (s @ s) * s, eu, rtol=1e-6, atol=1e-7)
    # scale-invariant losses: the direction of E[u] (cosine), of E[u]^{p-1} (q-norm, Hölder)
    c = minimise_expected("consistent_cosine")
    torch.testing.assert_close(c / c.norm(), eu / eu.norm(), rtol=1e-6, atol=1e-6)
    q = math.log(2) + 2
    p = q / (q - 1)
    w = minimise_expected("qnorm")
    target = eu ** (p - 1)
    torch.testing.assert_close(w / w.norm(), target / target.norm(), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- hand-computed small values
S3 = [0.5, -1.0, 2.0]
Y3 = [2.0, 0.0, 1.0]  # G = (3, 0, 1)
Z3 = 3.0 + 1.0 / LOG2_3  # ideal: gains 3, 1, 0 at positions 1, 2, 3


def value(spec, s=S3, y=Y3):
    return get_loss(spec)(t([s]), t([y]))[0].item()


def test_hand_values_original_losses():
    assert value("squared") == pytest.approx(2.5**2 + 1.0 + 1.0, abs=1e-12)
    assert value("squared(gain=linear)") == pytest.approx(1.5**2 + 1.0 + 1.0, abs=1e-12)
    dot = 0.5 * 3 + 2.0 * 1
    assert value("cosine") == pytest.approx(1 - dot / math.sqrt(5.25 * 10.0), abs=1e-12)
    pairs = [(0, 1), (0, 2), (2, 1)]  # y_i > y_j
    rn = sum(math.log1p(math.exp(-(S3[i] - S3[j]))) for i, j in pairs) / 3
    assert value("ranknet") == pytest.approx(rn, abs=1e-12)
    rn2 = sum((Y3[i] - Y3[j]) * math.log1p(math.exp(-2 * (S3[i] - S3[j]))) for i, j in pairs) / 3
    assert value("ranknet(sigma=2,weight=label)") == pytest.approx(rn2, abs=1e-12)
    sv = sum(max(0.0, 1 - (S3[i] - S3[j])) for i, j in pairs) / 3
    assert value("ranksvm") == pytest.approx(sv, abs=1e-12)  # = (0 + 2.5 + 0) / 3


def test_hand_values_consistent_losses():
    u = [3 / Z3, 0.0, 1 / Z3]
    assert value("consistent_squared") == pytest.approx(
        sum((a - b) ** 2 for a, b in zip(S3, u)), abs=1e-12
    )
    dot = sum(a * b for a, b in zip(S3, u))
    assert value("consistent_cosine") == pytest.approx(1 - dot / math.sqrt(5.25), abs=1e-12)
    kl = sum((b * math.log(b) if b > 0 else 0.0) - b * a - b + math.exp(a) for a, b in zip(S3, u))
    assert value("consistent_listnet") == pytest.approx(kl, abs=1e-12)
    assert value("bregman(h=exp)") == pytest.approx(kl, abs=1e-12)
    # Z_1 = 3: u = (1, 0, 1/3)
    u1 = [1.0, 0.0, 1 / 3]
    assert value("consistent_squared(norm=z1)") == pytest.approx(
        sum((a - b) ** 2 for a, b in zip(S3, u1)), abs=1e-12
    )
    # linear gain and Zipf discount: G = y = (2, 0, 1), Z = 2 + 1/2
    ul = [2 / 2.5, 0.0, 1 / 2.5]
    assert value("consistent_squared(discount=zipf,gain=linear)") == pytest.approx(
        sum((a - b) ** 2 for a, b in zip(S3, ul)), abs=1e-12
    )
    # q-norm with q = ln 3 + 2 (auto, 3 documents)
    q = math.log(3) + 2
    nq = sum(abs(a) ** q for a in S3) ** (1 / q)
    assert value("qnorm") == pytest.approx(-dot / nq, abs=1e-12)
    assert value("qnorm(form=penalised)") == pytest.approx(nq**2 - 2 * dot, abs=1e-12)
    uu = sum(b * b for b in u)
    assert value("qnorm(form=penalised,q=2)") + uu == pytest.approx(
        value("consistent_squared"), abs=1e-12
    )
    assert value("qnorm(q=2)") + 1 == pytest.approx(value("consistent_cosine"), abs=1e-12)
    # a one-document list: u = 1 (log discount), loss (s − 1)²
    assert value("consistent_squared", [0.25], [2.0]) == pytest.approx(0.75**2)


def test_bregman_square_is_rescaled_consistent_squared():
    g = torch.Generator().manual_seed(3)
    s = torch.randn(4, 6, generator=g, dtype=F64)
    y = torch.randint(0, 4, (4, 6), generator=g).to(F64)
    mask = torch.rand(4, 6, generator=g) < 0.8
    for norm in ("z", "z1", "z10"):
        breg = get_loss(f"bregman(norm={norm})")(s, y, mask)
        sq = get_loss(f"consistent_squared(norm={norm})")(2 * s, y, mask)
        torch.testing.assert_close(breg, sq / 4)  # ‖s − u/2‖² = ¼‖2s − u‖²
        kl = get_loss(f"consistent_listnet(norm={norm})")(s, y, mask)
        torch.testing.assert_close(get_loss(f"bregman(h=exp,norm={norm})")(s, y, mask), kl)


def _psi_numeric(outer: str, unorm: float) -> float:
    """ψ(u) = sup_s ⟨u, s⟩ − ψ*(s), reduced to s = λ u/‖u‖: a 1-D maximisation (golden section)."""
    f = (
        (lambda lam: lam * unorm - lam**4)
        if outer == "square"
        else (lambda lam: lam * unorm - math.exp(lam * lam))
    )
    lo, hi = 0.0, 5.0
    for _ in range(200):
        a, b = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        if f(a) < f(b):
            lo = a
        else:
            hi = b
    return f(0.5 * (lo + hi))


@pytest.mark.parametrize("outer", ["square", "exp"])
def test_bregman_outer_members_against_fenchel_young(outer):
    g = torch.Generator().manual_seed(8)
    s = torch.randn(3, 4, generator=g, dtype=F64) * 0.7
    y = t([[2.0, 1.0, 0.0, 1.0], [0.0, 3.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
    loss = get_loss(f"bregman(outer={outer})")
    got = loss(s, y)
    u, _ = normalised_gains(y, torch.ones(3, 4, dtype=torch.bool))
    for i in range(3):
        sq = float(s[i] @ s[i])
        conj = sq * sq if outer == "square" else math.exp(sq)
        expect = _psi_numeric(outer, float(u[i].norm())) + conj - float(s[i] @ u[i])
        assert got[i].item() == pytest.approx(expect, abs=1e-9)
        assert got[i].item() >= 0
    # zero exactly where ∇ψ*(s) = u: s = u / (4‖s‖²) with ‖s‖ = (‖u‖/4)^{1/3} for outer=square
    if outer == "square":
        r = (u.norm(dim=1, keepdim=True) / 4) ** (1 / 3)
        star = u / (4 * r * r)
        torch.testing.assert_close(loss(star, y), torch.zeros(3, dtype=F64), atol=1e-12, rtol=0)


@pytest.mark.parametrize(
    ("h", "outer"),
    [("square", "identity"), ("exp", "identity"), ("square", "square"), ("square", "exp")],
)
def test_potentials_are_conjugate_pairs(h, outer):
    """b = ∇ψ*(s) (autograd of ψ*), ψ(b) = ⟨s, b⟩ − ψ*(s) (Fenchel), and the closed-form (or
    numeric) ψ agrees at b."""
    pot = get_potential(h, outer)
    s = torch.randn(3, 4, generator=torch.Generator().manual_seed(2), dtype=F64) * 0.6
    mask = torch.ones(3, 4, dtype=torch.bool)
    x = s.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(pot.conj(x, mask).sum(), x)
    b = pot.b(s, mask)
    torch.testing.assert_close(b, grad)
    torch.testing.assert_close(pot.psi_b(s, mask), (s * b).sum(-1) - pot.conj(s, mask))
    torch.testing.assert_close(pot.psi(b, mask), pot.psi_b(s, mask), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- ListNet and ListMLE loops
def listnet_loop(s, y, gain=lambda v: v):
    zy = sum(math.exp(gain(v)) for v in y)
    zs = sum(math.exp(v) for v in s)
    return -sum(math.exp(gain(b)) / zy * math.log(math.exp(a) / zs) for a, b in zip(s, y))


def listmle_loop(s, order):
    total = 0.0
    for i in range(len(order)):
        num = math.exp(s[order[i]])
        den = sum(math.exp(s[order[j]]) for j in range(i, len(order)))
        total -= math.log(num / den)
    return total


def test_listnet_equals_loop():
    rng = random.Random(0)
    for _ in range(20):
        n = rng.randint(1, 9)
        s = [rng.gauss(0, 2) for _ in range(n)]
        y = [float(rng.randint(0, 4)) for _ in range(n)]
        assert value("listnet", s, y) == pytest.approx(listnet_loop(s, y), abs=1e-10)
        assert value("listnet(gain=exp2)", s, y) == pytest.approx(
            listnet_loop(s, y, lambda v: 2**v - 1), abs=1e-10
        )
        # Ravikumar et al.'s KL form differs by the entropy of the target, a constant in s
        p = [math.exp(v) / sum(math.exp(w) for w in y) for v in y]
        zs = sum(math.exp(v) for v in s)
        kl = sum(pi * math.log(pi / (math.exp(a) / zs)) for pi, a in zip(p, s))
        entropy = -sum(pi * math.log(pi) for pi in p)
        assert value("listnet", s, y) == pytest.approx(kl + entropy, abs=1e-10)


def test_listmle_equals_loop_without_ties():
    rng = random.Random(1)
    for _ in range(20):
        n = rng.randint(1, 9)
        s = [rng.gauss(0, 3) for _ in range(n)]
        y = rng.sample(range(20), n)
        order = sorted(range(n), key=lambda i: -y[i])
        assert value("listmle", s, [float(v) for v in y]) == pytest.approx(
            listmle_loop(s, order), abs=1e-10
        )


def test_listmle_with_ties_is_the_loss_of_one_label_order():
    s = [0.3, -1.2, 2.0, 0.7, 0.1, -0.4]
    y = [1.0, 2.0, 1.0, 0.0, 2.0, 1.0]
    admissible = {}
    for perm in itertools.permutations(range(6)):
        if all(y[perm[i]] >= y[perm[i + 1]] for i in range(5)):
            admissible[perm] = listmle_loop(s, perm)
    assert len(admissible) == 2 * 6 * 1  # 2! · 3! · 1!
    seen = set()
    for seed in range(40):
        gen = torch.Generator().manual_seed(seed)
        got = get_loss("listmle")(t([s]), t([y]), generator=gen)[0].item()
        order = tuple(
            listmle_order(
                t([y]), torch.ones(1, 6, dtype=torch.bool), torch.Generator().manual_seed(seed)
            )[0].tolist()
        )
        assert order in admissible
        assert got == pytest.approx(admissible[order], abs=1e-10)
        seen.add(order)
    assert len(seen) >= 6  # the tie orders vary


def test_listmle_is_stable_for_large_scores():
    s = [800.0, -900.0, 0.0]
    got = value("listmle", s, [0.0, 1.0, 2.0])
    # order by label: docs 2, 1, 0: (logsumexp(0, -900, 800) - 0) + (logsumexp(-900, 800) + 900)
    expect = 800.0 + (800.0 + 900.0)
    assert got == pytest.approx(expect, rel=1e-12)


# ---------------------------------------------------------------- CS-ListMLE
def test_cs_listmle_pair_weights_by_hand():
    # labels (2, 1, 0, 0), k = 2. a = (3, 1, 0, 0); ĝ = (1, 2, 3, 3).
    # |b'(1)| = ln2 / (2 ln(2)²) = 1/(2 ln 2) = 0.72134752; |b'(2)| = ln2 / (3 ln(3)²) = 0.19143234
    # |b'(3)| = 0 (3 > k).  c = a·|b'(ĝ)| = (2.16404256, 0.19143234, 0, 0)
    b1 = 1 / (2 * math.log(2))
    b2 = math.log(2) / (3 * math.log(3) ** 2)
    assert b1 == pytest.approx(0.7213475204, abs=1e-10)
    assert b2 == pytest.approx(0.19143234, abs=1e-8)
    c1, c2 = 3 * b1, 1 * b2
    w_expect = [
        [0.0, c1 + c2, c1, c1],  # w_12 = 2.35547490, w_13 = w_14 = 2.16404256
        [0.0, 0.0, c2, c2],  # w_23 = w_24 = 0.19143234
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ]
    dcg_expect = 3.0 + 1.0 / LOG2_3  # 3/log2(2) + 1/log2(3) = 3.63092975
    w, beta, dcg = cs_listmle_weights(t([[2.0, 1.0, 0.0, 0.0]]), k=2)
    torch.testing.assert_close(w[0], t(w_expect), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(beta[0], t([c1 + c2 + 2 * c1, 2 * c2, 0.0, 0.0]))
    assert dcg.item() == pytest.approx(dcg_expect, abs=1e-12)
    assert c1 + c2 == pytest.approx(2.35547490, abs=1e-8)
    # loss at s = 0: each log2(1 + Σ α) = log2 2 = 1, so L = (β_1 + β_2) / DCG
    b_1, b_2 = 3 * c1 + c2, 2 * c2
    assert value("cs_listmle@2", [0.0] * 4, [2.0, 1.0, 0.0, 0.0]) == pytest.approx(
        (b_1 + b_2) / dcg_expect, abs=1e-12
    )
    assert (b_1 + b_2) / dcg_expect == pytest.approx(1.94617499, abs=1e-8)
    # at s = (1, 0, -1, 2)
    s = [1.0, 0.0, -1.0, 2.0]
    t1 = b_1 * math.log2(
        1 + ((c1 + c2) * math.exp(0 - 1) + c1 * math.exp(-1 - 1) + c1 * math.exp(2 - 1)) / b_1
    )
    t2 = b_2 * math.log2(1 + 0.5 * math.exp(-1 - 0) + 0.5 * math.exp(2 - 0))
    assert value("cs_listmle@2", s, [2.0, 1.0, 0.0, 0.0]) == pytest.approx(
        (t1 + t2) / dcg_expect, abs=1e-12
    )


def cs_loop(s, y, k, gain=lambda v: 2.0**v - 1):
    """L_CS by a direct loop over the formulas of docs/losses.md ("cs_listmle@k"); ``gain``
    a(i) = G(y_i), 2^y − 1 unless given."""
    n = len(y)
    k = n if k is None else k
    a = [gain(v) for v in y]
    gh = [1 + sum(1 for u in y if u > v) for v in y]

    def bp(j):
        return math.log(2) / ((1 + j) * math.log(1 + j) ** 2) if j <= k else 0.0

    dcg = sum(a[i] / math.log2(1 + gh[i]) for i in range(n) if gh[i] <= k)
    if dcg <= 0:
        return 0.0
    total = 0.0
    for j in range(n):
        w = {t_: a[j] * bp(gh[j]) + a[t_] * bp(gh[t_]) for t_ in range(n) if y[t_] < y[j]}
        beta = sum(w.values())
        if beta > 0:
            total += beta * math.log2(1 + sum(w[t_] / beta * math.exp(s[t_] - s[j]) for t_ in w))
    return total / dcg


def cs_constant_loop(y, k):
    n = len(y)
    k = n if k is None else k
    a = [2.0**v - 1 for v in y]
    gh = [1 + sum(1 for u in y if u > v) for v in y]

    def bp(j):
        return math.log(2) / ((1 + j) * math.log(1 + j) ** 2) if j <= k else 0.0

    dcg = sum(a[i] / math.log2(1 + gh[i]) for i in range(n) if gh[i] <= k)
    c1 = sum(a) / math.log2(1 + k)
    c2 = sum(a[i] * bp(gh[i]) * (sum(1 for u in y if u == y[i]) - 1) for i in range(n))
    return (c1 + c2) / dcg if dcg > 0 else 0.0


def cs_lemma_pairs(s, y, k):
    """(1/DCG_ĝ@k) Σ_{y_j > y_t} w_jt · I[t ranked before j] (ties in scores: input order)."""
    n = len(y)
    a = [2.0**v - 1 for v in y]
    gh = [1 + sum(1 for u in y if u > v) for v in y]

    def bp(j):
        return math.log(2) / ((1 + j) * math.log(1 + j) ** 2) if j <= k else 0.0

    dcg = sum(a[i] / math.log2(1 + gh[i]) for i in range(n) if gh[i] <= k)
    order = sorted(range(n), key=lambda i: -s[i])
    pos = {d: r for r, d in enumerate(order)}
    total = sum(
        a[j] * bp(gh[j]) + a[t_] * bp(gh[t_])
        for j in range(n)
        for t_ in range(n)
        if y[j] > y[t_] and pos[t_] < pos[j]
    )
    return total / dcg


def _random_lists(seed, count, nmax=12, levels=5, ties_in_scores=False):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(1, nmax)
        y = [float(rng.randint(0, levels - 1)) for _ in range(n)]
        s = [rng.gauss(0, 2) for _ in range(n)]
        if ties_in_scores:
            s = [round(v) for v in s]
        out.append((s, y))
    return out


@pytest.mark.parametrize("k", [1, 3, 5, 10, None])
def test_cs_listmle_equals_loop(k):
    spec = "cs_listmle" if k is None else f"cs_listmle@{k}"
    for s, y in _random_lists(k or 0, 25):
        assert value(spec, s, y) == pytest.approx(cs_loop(s, y, k), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_cs_listmle_bounds_ndcg_loss(k, ties):
    """1 − NDCG@k ≤ L_CS + C with C = C2 of Lu et al.'s Lemma 1 (cs_listmle module docstring)."""
    tight = 0.0
    for s, y in _random_lists(100 + k, 200, ties_in_scores=ties):
        if max(y) == 0:
            continue
        c = cs_constant_loop(y, k)
        got_c = cs_listmle_constant(t([y]), k=k)[0].item()
        assert got_c == pytest.approx(c, rel=1e-12, abs=1e-12)
        lcs = value(f"cs_listmle@{k}", s, y)
        gap = lcs + c - (1 - ndcg_at_k(s, y, k))
        assert gap >= -1e-9, (s, y, k, lcs, c)
        # the sharper Lemma 1: weighted mis-ordered pairs (t ranked before j although y_j > y_t)
        lemma = cs_lemma_pairs(s, y, k) + c
        assert 1 - ndcg_at_k(s, y, k) <= lemma + 1e-9
        assert lemma <= lcs + c + 1e-9
        tight = max(tight, 1 - ndcg_at_k(s, y, k))
    assert tight > 0.5  # the random rankings do lose NDCG: the bound is exercised


def test_cs_listmle_is_convex_along_random_directions():
    gen = torch.Generator().manual_seed(0)
    for k in (1, 3, 10):
        loss = get_loss(f"cs_listmle@{k}")
        for s, y in _random_lists(7 + k, 30):
            st = t([s])
            yt = t([y])
            for _ in range(4):
                d = torch.randn(st.shape, generator=gen, dtype=F64)
                for h in (1e-2, 0.3, 2.0):
                    second = loss(st + h * d, yt) - 2 * loss(st, yt) + loss(st - h * d, yt)
                    assert second.item() >= -1e-9


def test_cs_listmle_undefined_lists():
    loss = get_loss("cs_listmle@3")
    s = t([[0.2, 1.0, -1.0], [0.2, 1.0, -1.0], [5.0, 0.0, 0.0]]).requires_grad_(True)
    y = t([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    values, has = loss.per_list(s, y)
    values.sum().backward()
    assert has.tolist() == [False, False, True]
    assert values[:2].tolist() == [0.0, 0.0]
    assert (s.grad[:2] == 0).all()


def test_cs_listmle_fractional_cutoff():
    # n = 6 and @0.5n: k = 3 for that list; n = 3: k = ceil(1.5) = 2
    s6, y6 = [0.1, 0.4, -0.3, 1.0, 0.0, 0.5], [2.0, 0.0, 1.0, 1.0, 0.0, 3.0]
    s3, y3 = [0.2, -0.7, 0.4], [1.0, 2.0, 0.0]
    assert value("cs_listmle@0.5n", s6, y6) == pytest.approx(cs_loop(s6, y6, 3), rel=1e-12)
    assert value("cs_listmle@0.5n", s3, y3) == pytest.approx(cs_loop(s3, y3, 2), rel=1e-12)


# ---------------------------------------------------------------- LambdaRank
@pytest.mark.parametrize(
    ("k", "gain", "discount"),
    [
        (None, "exp2", "log"),
        (3, "exp2", "log"),
        (2, "linear", "zipf"),
        (4, "letor", "letor"),
        (None, "exp2", "linear"),
    ],
)
def test_lambdarank_delta_is_the_measured_swap_difference(k, gain, discount):
    rng = random.Random(3)
    for _ in range(8):
        n = rng.randint(2, 7)
        s = [rng.gauss(0, 1) for _ in range(n)]
        y = [float(rng.randint(0, 2)) for _ in range(n)]
        delta = lambdarank_delta(t([s]), t([y]), k=k, gain=gain, discount=discount)[0]
        base = ndcg_at_k(s, y, k, gain, discount)
        for i in range(n):
            for j in range(n):
                swapped = list(s)
                swapped[i], swapped[j] = s[j], s[i]
                expect = abs(ndcg_at_k(swapped, y, k, gain, discount) - base)
                assert delta[i, j].item() == pytest.approx(expect, abs=1e-12)


def test_lambdarank_delta_accepts_the_loss_cutoff():
    s = t([[0.3, -0.2, 1.0, 0.0, 0.5, 0.1]])
    y = t([[2.0, 0.0, 1.0, 0.0, 1.0, 2.0]])
    loss = get_loss("lambdarank@0.5n")  # n = 6: k = 3
    torch.testing.assert_close(lambdarank_delta(s, y, k=loss.cutoff), lambdarank_delta(s, y, k=3))
    torch.testing.assert_close(
        lambdarank_delta(s, y, k=torch.tensor([3])), lambdarank_delta(s, y, k=3)
    )


def test_lambdarank_value_equals_loop():
    rng = random.Random(4)
    for _ in range(10):
        n = rng.randint(2, 8)
        s = [rng.gauss(0, 1) for _ in range(n)]
        y = [float(rng.randint(0, 3)) for _ in range(n)]
        base = ndcg_at_k(s, y, 3)
        total = 0.0
        for i in range(n):
            for j in range(n):
                if y[i] > y[j]:
                    swapped = list(s)
                    swapped[i], swapped[j] = s[j], s[i]
                    d = abs(ndcg_at_k(swapped, y, 3) - base)
                    total += d * math.log1p(math.exp(-(s[i] - s[j])))
        assert value("lambdarank@3", s, y) == pytest.approx(total, abs=1e-12)


def test_lambdarank_weights_are_constants():
    s = t([[0.3, -0.2, 1.0, 0.0]]).requires_grad_(True)
    y = t([[2.0, 0.0, 1.0, 0.0]])
    get_loss("lambdarank@2")(s, y).sum().backward()
    delta = lambdarank_delta(s.detach(), y, k=2)[0]
    expect = torch.zeros(4, dtype=F64)
    for i in range(4):
        for j in range(4):
            if y[0, i] > y[0, j]:
                sig = torch.sigmoid(-(s[0, i] - s[0, j])).detach()
                expect[i] -= delta[i, j] * sig
                expect[j] += delta[i, j] * sig
    torch.testing.assert_close(s.grad[0], expect)


def cs_pairs_torch(s, y, k):
    """L_CS with explicit pair weights (a loop) and autograd: an independent reference."""
    n = len(y)
    k = n if k is None else k
    a = [2.0**v - 1 for v in y]
    gh = [1 + sum(1 for u in y if u > v) for v in y]

    def bp(j):
        return math.log(2) / ((1 + j) * math.log(1 + j) ** 2) if j <= k else 0.0

    dcg = sum(a[i] / math.log2(1 + gh[i]) for i in range(n) if gh[i] <= k)
    total = s.new_zeros(())
    for j in range(n):
        w = {t_: a[j] * bp(gh[j]) + a[t_] * bp(gh[t_]) for t_ in range(n) if y[t_] < y[j]}
        beta = sum(w.values())
        if beta > 0:
            inner = sum(w[t_] / beta * torch.exp(s[t_] - s[j]) for t_ in w)
            total = total + beta * torch.log2(1 + inner)
    return total / dcg


@pytest.mark.parametrize("k", [1, 3, None])
def test_cs_listmle_gradient_equals_pair_reference(k):
    spec = "cs_listmle" if k is None else f"cs_listmle@{k}"
    for s, y in _random_lists(40 + (k or 0), 15, nmax=9):
        if max(y) == min(y):
            continue
        x = t(s).requires_grad_(True)
        (g_ref,) = torch.autograd.grad(cs_pairs_torch(x, y, k), x)
        x2 = t([s]).requires_grad_(True)
        (g,) = torch.autograd.grad(get_loss(spec)(x2, t([y])).sum(), x2)
        torch.testing.assert_close(g[0], g_ref, rtol=1e-10, atol=1e-12)


def test_norm_helpers_on_lists_without_documents():
    from ndcglab.losses import _ops

    for s in (torch.zeros(3, 0, dtype=F64), torch.zeros(2, 4, 0, dtype=F64)):
        norm, pos = _ops.norm_q(s, torch.full((*s.shape[:-1], 1), 3.0, dtype=F64))
        assert norm.shape == pos.shape == s.shape[:-1]
        assert pos.dtype == torch.bool and not pos.any() and (norm == 1).all()
