"""The contract every registered differentiable loss keeps (padding, masking, order, edge cases,
gradients, names), run over representative specs of every loss in the registry."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from ndcglab.errors import ConventionError, NdcglabError, SpecError  # noqa: E402
from ndcglab.losses import (  # noqa: E402
    LossInputError,
    NotDifferentiableError,
    _ops,
    available_losses,
    describe_losses,
    get_loss,
)

from .conftest import REPRESENTATIVES, differentiable_specs  # noqa: E402

SPECS = differentiable_specs()
F64 = torch.float64


def _gen(seed: int = 7) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _value_and_grad(loss, s, y, mask, seed=7):
    s = s.detach().clone().requires_grad_(True)
    v = loss(s, y, mask, generator=_gen(seed))
    (g,) = torch.autograd.grad(v.sum(), s, allow_unused=True)
    g = torch.zeros_like(s) if g is None else g
    return v.detach(), g


def _lists(seed: int = 0):
    """A few lists of different lengths with graded labels (ties included), float64."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for n in (5, 3, 8, 2, 6):
        s = torch.randn(n, generator=g, dtype=F64)
        y = torch.randint(0, 4, (n,), generator=g).to(F64)
        y[0] = 3.0  # at least one relevant document and two levels
        y[-1] = 0.0
        out.append((s, y))
    return out


def _pad(lists, m, *, junk_seed=1, interleave=False):
    """Pad lists into a (B, m) batch with junk scores/labels (incl. NaN, inf) in padded slots.

    ``interleave``: real documents are spread over the row (padding between them), keeping
    their order."""
    g = torch.Generator().manual_seed(junk_seed)
    b = len(lists)
    s = torch.randn(b, m, generator=g, dtype=F64) * 50.0
    y = torch.randint(-3, 9, (b, m), generator=g).to(F64)
    s[:, -1] = float("nan")
    y[:, -2] = float("nan")
    s[:, 0] = float("inf") if m > 1 else s[:, 0]
    mask = torch.zeros(b, m, dtype=torch.bool)
    slots = []
    for i, (si, yi) in enumerate(lists):
        n = si.numel()
        if interleave:
            idx = torch.linspace(1, m - 3, n).round().long() if n > 1 else torch.tensor([1])
            idx = torch.unique(idx)
            assert idx.numel() == n
        else:
            idx = torch.arange(n)
        s[i, idx] = si
        y[i, idx] = yi
        mask[i, idx] = True
        slots.append(idx)
    return s, y, mask, slots


def test_every_loss_has_representatives():
    assert set(available_losses(kind="differentiable")) <= set(REPRESENTATIVES)


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("interleave", [False, True])
def test_padding_and_batch_do_not_change_value_or_gradient(spec, interleave):
    loss = get_loss(spec)
    lists = _lists()
    s, y, mask, slots = _pad(lists, 14, interleave=interleave)
    v, g = _value_and_grad(loss, s, y, mask)
    assert torch.isfinite(v).all() and torch.isfinite(g).all()
    assert (g[~mask] == 0).all()
    for i, (si, yi) in enumerate(lists):
        alone = torch.ones(1, si.numel(), dtype=torch.bool)
        v1, g1 = _value_and_grad(loss, si[None], yi[None], alone)
        torch.testing.assert_close(v[i], v1[0], rtol=1e-10, atol=1e-12)
        torch.testing.assert_close(g[i, slots[i]], g1[0], rtol=1e-10, atol=1e-12)
        # mask=None means every entry is real
        v2, _ = _value_and_grad(loss, si[None], yi[None], None)
        torch.testing.assert_close(v2, v1, rtol=0, atol=0)


def _bound_value_and_grad(bound, s, seed=7):
    s = s.detach().clone().requires_grad_(True)
    v = bound(s, generator=_gen(seed))
    (g,) = torch.autograd.grad(v.sum(), s, allow_unused=True)
    g = torch.zeros_like(s) if g is None else g
    return v.detach(), g


def _integer_batch(seed: int, m: int = 12, b: int = 6):
    """Whole-number labels (ties), real documents first, junk in the padding."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(0, m + 1, (b,), generator=g)
    lengths[0] = m
    mask = torch.arange(m)[None, :] < lengths[:, None]
    y = torch.randint(0, 4, (b, m), generator=g).to(F64)
    y = torch.where(mask, y, torch.tensor(float("nan"), dtype=F64))
    s = torch.randn(b, m, generator=g, dtype=F64) * 3
    return s, y, mask


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("layout", ["integer labels, padding last", "padding between", "edge"])
def test_bound_loss_equals_the_loss_exactly(spec, layout):
    """``loss.bind(y, m)(s, generator=g)`` is ``loss(s, y, m, generator=g)``, values and
    gradients bit for bit, over several calls with new scores (the label-only work is reused)
    and the same generator draws; also in float32, where the bound loss prepares again."""
    loss = get_loss(spec)
    if layout == "edge":
        s0, y, mask = _edge_batch()
    elif layout == "padding between":
        s0, y, mask, _ = _pad(_lists(5), 14, interleave=True)
    else:
        s0, y, mask = _integer_batch(5)
    if "outer=exp" in spec:
        s0 = s0.clamp(-3, 3)
    bound = loss.bind(y, mask)
    for dtype in (F64, torch.float32, F64):
        for call in range(3):
            s = (s0 * (1.0 + 0.25 * call)).to(dtype)
            if "outer=exp" in spec:
                s = s.clamp(-3, 3)
            v, g = _value_and_grad(loss, s, y, mask, seed=call)
            vb, gb = _bound_value_and_grad(bound, s, seed=call)
            assert vb.dtype == v.dtype
            torch.testing.assert_close(vb, v, rtol=0, atol=0, equal_nan=True)
            torch.testing.assert_close(gb, g, rtol=0, atol=0, equal_nan=True)
    for reduction in ("mean", "sum"):
        torch.testing.assert_close(
            bound(s0, generator=_gen(), reduction=reduction),
            loss(s0, y, mask, generator=_gen(), reduction=reduction),
            rtol=0,
            atol=0,
        )


def test_bound_loss_sees_labels_changed_in_place():
    """A bound loss prepares again when its labels or mask are modified in place (torch's
    version counter), so it never uses stale label work."""
    for spec in ("listmle", "listnet", "lambdarank@5", "squared"):
        loss = get_loss(spec)
        s, y, mask = _integer_batch(2)
        bound = loss.bind(y, mask)
        bound(s, generator=_gen())
        y[0, :3] = torch.tensor([3.0, 0.0, 2.0], dtype=F64)
        mask[1, 0] = not bool(mask[1, 0])
        torch.testing.assert_close(
            bound(s, generator=_gen()), loss(s, y, mask, generator=_gen()), rtol=0, atol=0
        )


def test_bound_loss_input_errors():
    """Bad scores given to a bound loss raise the loss's own input errors."""
    bound = get_loss("listmle").bind(torch.zeros(2, 3), torch.ones(2, 3, dtype=torch.bool))
    with pytest.raises(LossInputError, match="scores must be a torch tensor"):
        bound([[0.0, 1.0, 2.0]] * 2)
    with pytest.raises(LossInputError, match="differs from scores shape"):
        bound(torch.zeros(2, 4))
    with pytest.raises(LossInputError, match="floating point"):
        bound(torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ConventionError, match="unknown reduction"):
        bound(torch.zeros(2, 3), reduction="avg")
    with pytest.raises(NotDifferentiableError, match="boosting"):
        get_loss("adarank").bind(torch.zeros(1, 3))


@pytest.mark.parametrize("spec", SPECS)
def test_batch_order_invariance(spec):
    loss = get_loss(spec)
    s, y, mask, _ = _pad(_lists(3), 9)
    perm = torch.tensor([3, 0, 4, 2, 1])
    v, g = _value_and_grad(loss, s, y, mask)
    vp, gp = _value_and_grad(loss, s[perm], y[perm], mask[perm])
    torch.testing.assert_close(vp, v[perm], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(gp, g[perm], rtol=1e-12, atol=1e-12)


def _edge_batch():
    m = 5
    s = torch.randn(7, m, generator=_gen(3), dtype=F64)
    y = torch.randint(0, 3, (7, m), generator=_gen(4)).to(F64)
    mask = torch.ones(7, m, dtype=torch.bool)
    mask[0, 1:] = False  # one document
    y[1] = 2.0  # all labels equal
    y[2] = 0.0  # no relevant document
    mask[3] = False  # fully masked
    s[4] = 0.0  # zero scores
    y[4] = torch.tensor([2.0, 0.0, 1.0, 0.0, 0.0])
    y[5] = torch.tensor([0.0, 3.0, 0.0, 0.0, 0.0])  # one relevant document
    s[5] = torch.tensor([60.0, -60.0, 0.0, 5.0, -5.0])  # large score gaps
    y[6] = torch.tensor([1.0, 1.0, 0.0, 0.0, 0.0])
    y[~mask] = float("nan")
    return s, y, mask


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("spec", SPECS)
def test_edge_lists_give_finite_values_and_gradients(spec, dtype):
    loss = get_loss(spec)
    s, y, mask = _edge_batch()
    s = s.to(dtype)
    if "outer=exp" in spec:
        s = s.clamp(-3, 3)  # e^{‖s‖²} overflows for large scores, by design
    x = s.clone().requires_grad_(True)
    values, has = loss.per_list(x, y, mask, generator=_gen())
    assert values.dtype == dtype and values.shape == (7,)
    (g,) = torch.autograd.grad(values.sum(), x, allow_unused=True)
    g = torch.zeros_like(x) if g is None else g
    assert torch.isfinite(values).all(), values
    assert torch.isfinite(g).all(), g
    assert (g[~mask] == 0).all()
    # where a list has no loss its value and gradient are 0
    assert (values[~has] == 0).all()
    assert (g[~has] == 0).all()
    assert not has[3]  # a fully masked list never has a loss


@pytest.mark.parametrize("spec", SPECS)
def test_gradcheck_float64(spec):
    loss = get_loss(spec)
    g = torch.Generator().manual_seed(11)
    s = torch.randn(3, 5, generator=g, dtype=F64)
    y = torch.tensor(
        [[2.0, 0.0, 1.0, 3.0, 0.0], [1.0, 0.0, 1.0, 0.0, 2.0], [0.0, 1.0, 0.0, 0.0, 0.0]], dtype=F64
    )
    mask = torch.ones(3, 5, dtype=torch.bool)
    mask[1, 4] = False
    mask[2, 3:] = False
    if "outer=exp" in spec:
        s = s * 0.3

    def f(x):
        return loss(x, y, mask, generator=_gen(5))

    assert torch.autograd.gradcheck(f, (s.requires_grad_(True),), eps=1e-6, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("spec", SPECS)
def test_reductions(spec):
    loss = get_loss(spec)
    s, y, mask = _edge_batch()
    if "outer=exp" in spec:
        s = s.clamp(-3, 3)
    values, has = loss.per_list(s, y, mask, generator=_gen())
    mean = loss(s, y, mask, generator=_gen(), reduction="mean")
    total = loss(s, y, mask, generator=_gen(), reduction="sum")
    torch.testing.assert_close(total, values.sum())
    torch.testing.assert_close(mean, values[has].sum() / max(int(has.sum()), 1))
    empty = torch.zeros(2, 4, dtype=torch.bool)
    z = loss(s[:2, :4].clone().requires_grad_(True), y[:2, :4], empty, reduction="mean")
    assert z.item() == 0.0


@pytest.mark.parametrize("spec", SPECS)
def test_empty_batches(spec):
    loss = get_loss(spec)
    for b, m in ((0, 5), (3, 0), (0, 0)):
        s = torch.zeros(b, m, dtype=F64, requires_grad=True)
        values = loss(s, torch.zeros(b, m), torch.zeros(b, m, dtype=torch.bool))
        assert values.shape == (b,) and (values == 0).all()
        mean = loss(s, torch.zeros(b, m), torch.zeros(b, m, dtype=torch.bool), reduction="mean")
        mean.backward()
        assert mean.item() == 0.0


@pytest.mark.parametrize("spec", SPECS)
def test_names_round_trip(spec):
    loss = get_loss(spec)
    again = get_loss(loss.name)
    assert again == loss and again.name == loss.name and hash(again) == hash(loss)
    assert get_loss(loss) is loss
    assert dict(again.params).keys() == dict(loss.params).keys()
    assert set(loss.convention) >= {p.name for p in loss.parameters}
    # every default written out parses to the same loss
    full = ",".join(f"{k}={v}" for k, v in loss.convention.items() if k != "cutoff")
    cut = f"@{loss.cutoff}" if loss.cutoff is not None else ""
    spelled = f"{loss.key}({full}){cut}" if full else f"{loss.key}{cut}"
    assert get_loss(spelled) == loss
    assert get_loss(spelled.upper().replace("(", " ( ")) == loss
    assert loss.kind == "differentiable"
    assert type(loss).__doc__ and len(type(loss).__doc__) > 100


@pytest.mark.parametrize("spec", SPECS)
def test_pair_chunking_is_exact(spec, monkeypatch):
    loss = get_loss(spec)
    s, y, mask, _ = _pad(_lists(5), 9)
    v, g = _value_and_grad(loss, s, y, mask)
    monkeypatch.setattr(_ops, "PAIR_BUDGET", 81)  # one list per chunk, checkpointed
    vc, gc = _value_and_grad(loss, s, y, mask)
    torch.testing.assert_close(vc, v, rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(gc, g, rtol=1e-13, atol=1e-13)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("spec", SPECS)
def test_cuda_matches_cpu(spec):  # pragma: no cover - needs a GPU
    loss = get_loss(spec)
    s, y, mask, _ = _pad(_lists(), 10)
    v, g = _value_and_grad(loss, s, y, mask)
    x = s.cuda().requires_grad_(True)
    gen = torch.Generator(device="cuda").manual_seed(7)
    vc = loss(x, y.cuda(), mask.cuda(), generator=gen)
    assert vc.device.type == "cuda"
    (gc,) = torch.autograd.grad(vc.sum(), x)
    if loss.key in ("listmle", "gumbel_approx_ndcg"):
        # their randomness (tie order, Gumbel noise) starts from a seed drawn from the CUDA
        # generator, another stream than the CPU one: finite values, nothing on padding
        assert torch.isfinite(vc).all() and torch.isfinite(gc).all()
        assert (gc.cpu()[~mask] == 0).all()
    else:
        torch.testing.assert_close(vc.cpu(), v, rtol=1e-9, atol=1e-9)
        torch.testing.assert_close(gc.cpu(), g, rtol=1e-9, atol=1e-9)


# ------------------------------------------------------------------ registry and errors
def test_registry_lists_and_describes_every_loss():
    names = available_losses()
    assert names == sorted(names)
    assert set(describe_losses()) == set(names)
    assert all(isinstance(v, str) and v and "\n" not in v for v in describe_losses().values())
    assert available_losses(kind="boosting") == ["adarank"]
    expected = {
        "squared",
        "cosine",
        "listnet",
        "listmle",
        "consistent_squared",
        "consistent_cosine",
        "consistent_listnet",
        "bregman",
        "qnorm",
        "cs_listmle",
        "ranknet",
        "ranksvm",
        "lambdarank",
        "adarank",
    }
    assert expected <= set(names)
    with pytest.raises(ConventionError):
        available_losses(kind="tree")


def test_docs_page_covers_every_loss():
    page = Path(__file__).resolve().parents[2] / "docs" / "losses.md"
    text = page.read_text(encoding="utf-8")
    for name in available_losses():
        assert f"`{name}" in text, name


def test_canonical_names():
    assert get_loss("listnet").name == "listnet"
    assert get_loss("listnet(gain=linear)").name == "listnet"
    assert get_loss("CS_ListMLE @ 10").name == "cs_listmle@10"
    assert get_loss("consistent_listnet(norm=z10)").name == "consistent_listnet(norm=z10)"
    assert get_loss("qnorm(q=auto,form=normalised)").name == "qnorm"
    assert get_loss("qnorm(form=penalised,q=3.0)").name == "qnorm(form=penalised,q=3)"
    assert get_loss("bregman(h=exp,outer=identity)").name == "bregman(h=exp)"
    assert get_loss("lambdarank@10").name == "lambdarank@10"
    assert get_loss("cs_listmle@0.2n").name == "cs_listmle@0.2n"
    assert get_loss("ranksvm").params["l2"] == 0.001
    assert get_loss("consistent_cosine(norm=z)").name == "consistent_cosine"
    assert get_loss("qnorm").convention["q"] == "auto"


@pytest.mark.parametrize(
    ("spec", "needles"),
    [
        ("lisnet", ["unknown loss 'lisnet'", "known:", "listnet"]),
        ("listnet(temperature=2)", ["no parameter 'temperature'", "allowed: gain"]),
        ("qnorm(q=0.5)", ["invalid value '0.5'", "'q'", "auto or a number > 1"]),
        ("qnorm(q=abc)", ["invalid value 'abc'"]),
        ("consistent_listnet(norm=k10)", ["'norm'", "zK"]),
        ("consistent_listnet(norm=z0)", ["'norm'"]),
        ("listnet@10", ["takes no @cutoff"]),
        ("consistent_squared@10", ["takes no @cutoff", "norm=zK"]),
        ("bregman(h=exp,outer=square)", ["unsupported Bregman potential", "h=square,outer=exp"]),
        ("squared(gain=cubic)", ["'gain'", "exp2"]),
        ("lambdarank(discount=fast)", ["'discount'", "zipf"]),
        ("ranknet(weight=size)", ["'weight'", "none, label, gain"]),
        ("adarank(rounds=0)", ["'rounds'", "whole number"]),
        ("listnet(", ["cannot read"]),
    ],
)
def test_spec_errors_say_what_and_how(spec, needles):
    with pytest.raises(SpecError) as info:
        get_loss(spec)
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))


def test_adarank_is_a_boosting_placeholder():
    loss = get_loss("adarank@10")
    assert loss.kind == "boosting" and loss.name == "adarank@10"
    assert loss.params["measure"] == "ndcg" and loss.params["rounds"] == 100
    s = torch.zeros(1, 3)
    with pytest.raises(NotDifferentiableError, match="boosting"):
        loss(s, s, None)
    with pytest.raises(NdcglabError):
        loss.per_list(s, s)


def test_input_errors():
    loss = get_loss("listnet")
    s = torch.zeros(2, 3)
    with pytest.raises(LossInputError, match=r"scores\[None\]"):
        loss(torch.zeros(3), torch.zeros(3))
    with pytest.raises(LossInputError, match="floating"):
        loss(torch.zeros(2, 3, dtype=torch.long), s)
    with pytest.raises(LossInputError, match="labels shape"):
        loss(s, torch.zeros(2, 4))
    with pytest.raises(LossInputError, match="bool"):
        loss(s, s, torch.ones(2, 3))
    with pytest.raises(LossInputError, match="torch tensor"):
        loss([[0.0]], [[0.0]])
    with pytest.raises(ConventionError, match="reduction"):
        loss(s, s, reduction="avg")
    # labels as a list of lists and integer labels are accepted
    out = loss(s, [[0, 1, 2], [1, 1, 0]])
    assert out.dtype == torch.float32 and out.shape == (2,)


def test_float32_output_dtype_and_no_nan_from_padding():
    for spec in SPECS:
        loss = get_loss(spec)
        s, y, mask, _ = _pad(_lists(), 10)
        v = loss(s.float(), y, mask, generator=_gen())
        assert v.dtype == torch.float32 and torch.isfinite(v).all(), spec


def test_listmle_ties_random_per_generator_and_reproducible():
    loss = get_loss("listmle")
    s = torch.randn(1, 8, generator=_gen(2), dtype=F64)
    y = torch.tensor([[1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]], dtype=F64)
    same = {loss(s, y, None, generator=_gen(9)).item() for _ in range(3)}
    assert len(same) == 1
    gen = _gen(1)
    seen = {round(loss(s, y, None, generator=gen).item(), 12) for _ in range(30)}
    assert len(seen) > 5  # a fresh tie order per call (e.g. per epoch)
    # the global generator is used when none is passed
    torch.manual_seed(4)
    a = loss(s, y).item()
    torch.manual_seed(4)
    assert loss(s, y).item() == a


def test_describe_is_light():
    import subprocess
    import sys

    code = (
        "import sys, ndcglab.losses as L; L.describe_losses(); L.get_loss('cs_listmle@10'); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------------ closed forms
def _has_closed_form(spec: str) -> bool:
    one = torch.ones(1, 1, dtype=torch.bool)
    return get_loss(spec).closed_form(torch.zeros(1, 1, dtype=F64), one) is not None


CLOSED_SPECS = [spec for spec in SPECS if _has_closed_form(spec)]


def _cs_definition(loss):
    """L_CS written from its definition with pair matrices (w, β, DCG_ĝ@k from the loss's own
    ``cs_listmle_weights``): twice differentiable by autograd, which the registered loss's
    O(M log M) evaluation is not (torch's second derivative of ``logcumsumexp`` over the padding
    fill values gives NaN and wrong values)."""
    from ndcglab.losses import cs_listmle_weights

    def fn(s, y, mask, generator=None):
        s = torch.where(mask, s, torch.zeros_like(s))
        y = torch.where(mask, y, torch.zeros_like(y))
        w, beta, dcg = cs_listmle_weights(y, mask, k=loss.cutoff, gain=loss.params["gain"])
        pos = w > 0
        z = torch.where(pos, torch.log(torch.where(pos, w, 1.0)), -1e4)
        z = z + s.unsqueeze(-2) - s.unsqueeze(-1)  # log(w_jt e^{s_t − s_j})
        has = beta > 0
        inner = torch.logsumexp(z, dim=-1) - torch.log(torch.where(has, beta, 1.0))
        terms = torch.where(has, beta * torch.nn.functional.softplus(inner), 0.0)
        ok = dcg > 0
        scale = torch.where(ok, 1.0 / (math.log(2.0) * torch.where(ok, dcg, 1.0)), 0.0)
        return terms.sum(dim=-1) * scale

    return fn


def _autograd_grad_hess(fn, s, y, mask, seed):
    """Gradient and exact Hessian diagonal of Σ fn(s) by double backward, column by column."""
    x = s.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fn(x, y, mask, generator=_gen(seed)).sum(), x, create_graph=True)
    h = torch.zeros_like(s)
    for j in range(s.shape[1]):
        (col,) = torch.autograd.grad(g[:, j].sum(), x, retain_graph=True, allow_unused=True)
        if col is not None:
            h[:, j] = col[:, j].detach()
    zero = torch.zeros_like(s)
    return torch.where(mask, g.detach(), zero), torch.where(mask, h, zero)


def test_closed_forms_cover_the_expected_losses():
    keys = {get_loss(spec).key for spec in CLOSED_SPECS}
    expected = {"squared", "listnet", "listmle", "consistent_squared", "consistent_listnet"}
    assert expected | {"cs_listmle", "ranknet", "lambdarank"} <= keys
    assert get_loss("cosine").grad_hess(torch.zeros(1, 2), torch.zeros(1, 2)) is None


@pytest.mark.parametrize("spec", CLOSED_SPECS)
@pytest.mark.parametrize("batch", ["padded", "edge"])
def test_closed_form_equals_autograd(spec, batch):
    """The closed-form gradient equals the loss's autograd gradient, and the closed-form Hessian
    diagonal equals autograd's double backward (of the definition for CS-ListMLE), to 1e-10."""
    loss = get_loss(spec)
    if batch == "padded":
        s, y, mask, _ = _pad(_lists(9), 12, interleave=True)
    else:
        s, y, mask = _edge_batch()
    got = loss.grad_hess(s, y, mask, generator=_gen(3))
    assert got is not None
    g, h = got
    assert g.shape == h.shape == s.shape and g.dtype == h.dtype == F64
    assert (g[~mask] == 0).all() and (h[~mask] == 0).all()
    g_ref, _ = _autograd_grad_hess(loss, s, y, mask, seed=3)
    torch.testing.assert_close(g, g_ref, rtol=1e-10, atol=1e-10)
    oracle = _cs_definition(loss) if loss.key == "cs_listmle" else loss
    if loss.key == "cs_listmle":  # the oracle is the same loss
        v = oracle(s, y, mask)
        torch.testing.assert_close(v, loss(s, y, mask), rtol=1e-10, atol=1e-10)
    g_def, h_ref = _autograd_grad_hess(oracle, s, y, mask, seed=3)
    torch.testing.assert_close(g_def, g_ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(h, h_ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("spec", CLOSED_SPECS)
def test_closed_form_subset_and_float32(spec):
    loss = get_loss(spec)
    s, y, mask, _ = _pad(_lists(4), 9)
    form = loss.closed_form(torch.where(mask, y, 0.0), mask)
    g, h = form.grad_hess(torch.where(mask, s, 0.0), _gen(1))
    g2, h2 = form.subset(2).grad_hess(torch.where(mask, s, 0.0)[:2], _gen(1))
    # (ListMLE: the same generator seed gives the same tie order, whatever the batch's height)
    torch.testing.assert_close(g2, g[:2], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(h2, h[:2], rtol=1e-12, atol=1e-12)
    g32, h32 = loss.grad_hess(s.float(), y, mask, generator=_gen(1))
    assert g32.dtype == h32.dtype == torch.float32
    assert torch.isfinite(g32).all() and torch.isfinite(h32).all()


@pytest.mark.parametrize(
    "spec", ["ranknet", "ranknet(weight=gain)", "ranksvm", "lambdarank", "lambdarank@7"]
)
def test_pair_blocks_within_one_list_are_exact(spec, monkeypatch):
    """A list whose pairs alone exceed the pair budget is split into checkpointed blocks of pair
    rows: same value and gradient (up to summation order), for one list and a padded batch."""
    loss = get_loss(spec)
    g = torch.Generator().manual_seed(11)
    s = torch.randn(3, 60, generator=g, dtype=F64)
    y = torch.randint(0, 4, (3, 60), generator=g).to(F64)
    mask = torch.ones(3, 60, dtype=torch.bool)
    mask[1, 45:] = False
    mask[2, 30:] = False
    for rows in (slice(0, 1), slice(0, 3)):
        v, gr = _value_and_grad(loss, s[rows], y[rows], mask[rows])
        monkeypatch.setattr(_ops, "PAIR_BUDGET", 700)  # blocks of ≤ 11 rows of a 60-doc list
        vb, gb = _value_and_grad(loss, s[rows], y[rows], mask[rows])
        monkeypatch.undo()
        torch.testing.assert_close(vb, v, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(gb, gr, rtol=1e-12, atol=1e-12)
