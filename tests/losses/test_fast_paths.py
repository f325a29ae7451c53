"""The losses' fast paths give the values of their plain forms.

* :func:`ndcglab.losses.listwise.listmle_order` takes a shortcut when the real documents come
  first (one column permutation and one sort); with either layout its order must be the
  documented one — label descending, then the random key κ_t of the t-th real
  document, then position, padding last — checked against a Python sort of those tuples.
* :func:`ndcglab.losses._ops.masked_logcumsumexp` shifts by the row maximum and takes
  ``cumsum(exp)``; values and gradients must equal ``torch.logcumsumexp`` with padding at the
  fill value, also where the shifted sums underflow (it must then switch to the stable form).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ndcglab.losses import _ops, get_loss  # noqa: E402
from ndcglab.losses.listwise import listmle_order  # noqa: E402


def reference_order(y: torch.Tensor, mask: torch.Tensor, seed: int) -> list[list[int]]:
    """The documented order, by a Python sort: draws the keys from a generator seeded with
    ``seed`` exactly as the docstring of listmle_order says."""
    g = torch.Generator().manual_seed(seed)
    keys = torch.rand(y.shape[1], generator=g, dtype=torch.float64).tolist()
    out = []
    for row_y, row_m in zip(y.tolist(), mask.tolist(), strict=True):
        real = [i for i, m in enumerate(row_m) if m]
        kappa = {i: keys[t] for t, i in enumerate(real)}
        ordered = sorted(real, key=lambda i: (-row_y[i], kappa[i], i))
        out.append(ordered + [i for i, m in enumerate(row_m) if not m])
    return out


@pytest.mark.parametrize("layout", ["real documents first", "scattered padding"])
@pytest.mark.parametrize("labels", ["integer", "large integer", "fractional", "negative"])
def test_listmle_order_is_the_documented_order(labels: str, layout: str) -> None:
    rng = np.random.default_rng(7)
    for trial in range(60):
        b, m = int(rng.integers(1, 5)), int(rng.integers(1, 40))
        y = rng.integers(0, 4, size=(b, m)).astype(np.float64)
        if labels == "large integer":
            y *= 1e6
        elif labels == "fractional":
            y = y / 2.0
        elif labels == "negative":
            y -= 2.0
        if layout == "scattered padding":
            mask = rng.random((b, m)) < 0.75
        else:
            mask = np.arange(m)[None, :] < rng.integers(0, m + 1, size=(b, 1))
        yt, mt = torch.as_tensor(y), torch.as_tensor(mask)
        got = listmle_order(yt, mt, torch.Generator().manual_seed(trial)).tolist()
        assert got == reference_order(yt, mt, trial), (labels, trial)


def test_listmle_tie_keys_do_not_depend_on_the_padded_width() -> None:
    """κ_t is the t-th double torch draws, whatever the width M: a list's tie order is the same
    alone and padded into a wider batch (the keys of a narrow call are a prefix of a wide
    one's), on the global generator too; and the draw moves the generator on."""
    from ndcglab.losses.listwise import _tie_keys

    for m, wide in ((1, 5), (7, 40), (30, 3000)):
        narrow = _tie_keys(m, torch.Generator().manual_seed(3))
        assert np.array_equal(narrow, _tie_keys(wide, torch.Generator().manual_seed(3))[:m])
        torch.manual_seed(3)
        assert np.array_equal(narrow, _tie_keys(m, None))
    g = torch.Generator().manual_seed(3)
    assert not np.array_equal(_tie_keys(5, g), _tie_keys(5, g))
    y = torch.tensor([[1.0, 1.0, 1.0, 0.0, 1.0]])
    alone = listmle_order(y, y >= 0, torch.Generator().manual_seed(9))
    wide = torch.cat([y, torch.zeros(1, 20)], dim=1)
    padded = listmle_order(wide, torch.arange(25)[None, :] < 5, torch.Generator().manual_seed(9))
    assert torch.equal(padded[:, :5], alone)


def test_listmle_order_of_an_empty_batch() -> None:
    y = torch.zeros((0, 3), dtype=torch.float64)
    assert listmle_order(y, y > 0).shape == (0, 3)


def _reference_lcse(x: torch.Tensor, mask: torch.Tensor, reverse: bool) -> torch.Tensor:
    z = torch.where(mask, x, torch.tensor(_ops.fill_value(x.dtype), dtype=x.dtype))
    if reverse:
        return torch.logcumsumexp(z.flip(-1), dim=-1).flip(-1)
    return torch.logcumsumexp(z, dim=-1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("spread", [1.0, 30.0, 2000.0])
def test_masked_logcumsumexp_equals_logcumsumexp(dtype: str, reverse: bool, spread: float) -> None:
    dt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(3)
    tol = 8 * torch.finfo(dt).eps
    for _ in range(20):
        x = (torch.randn(4, 25, generator=gen, dtype=torch.float64) * spread).to(dt)
        x.requires_grad_(True)
        mask = torch.rand(4, 25, generator=gen) < 0.7
        mask[0] = False  # an empty list
        weights = torch.randn(4, 25, generator=gen, dtype=dt)
        ref = _reference_lcse(x, mask, reverse)
        got = _ops.masked_logcumsumexp(x, mask, reverse=reverse)
        nonempty = mask.flip(-1).cummax(-1).values.flip(-1) if reverse else mask.cummax(-1).values
        # where no real entry is summed both are the fill value (to rounding)
        assert torch.allclose(got[~nonempty], ref[~nonempty], rtol=1e-6)
        # log(cumsum) + shift is exact to a few ulps of the row's largest |score| (the scores'
        # own rounding), which in float32 is coarser than logcumsumexp's per-entry rounding
        r, o = ref[nonempty].detach(), got[nonempty].detach()
        scale = 1 + x.detach().abs().amax()
        assert torch.all((r - o).abs() <= tol * scale), (r - o).abs().max()
        (g_ref,) = torch.autograd.grad((torch.where(nonempty, ref, 0) * weights).sum(), x)
        (g_got,) = torch.autograd.grad((torch.where(nonempty, got, 0) * weights).sum(), x)
        assert torch.all(torch.isfinite(g_got))
        assert torch.allclose(g_got, g_ref, atol=10 * tol * scale, rtol=10 * tol)


def test_masked_logcumsumexp_keeps_far_scores_exact() -> None:
    # exp(-800) underflows in float64: the shifted sum would lose the second entry entirely
    x = torch.tensor([[0.0, -800.0, -801.0]], dtype=torch.float64)
    mask = torch.ones_like(x, dtype=torch.bool)
    got = _ops.masked_logcumsumexp(x, mask, reverse=True)
    expect = [
        float(np.logaddexp.reduce([0.0, -800.0, -801.0])),
        -800 + np.log1p(np.exp(-1.0)),
        -801.0,
    ]
    assert got[0].tolist() == pytest.approx(expect, rel=1e-14)


def test_listmle_keeps_scores_far_apart_exact() -> None:
    # labels order the documents 2, 1, 0; the loss is Σ_i (logsumexp_{j≥i} s_j − s_i)
    s = torch.tensor([[800.0, -900.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([[0.0, 1.0, 2.0]], dtype=torch.float64)
    got = get_loss("listmle")(s, y)[0].item()
    assert got == pytest.approx(800.0 + (800.0 + 900.0), rel=1e-12)
    s32 = torch.tensor([[80.0, -90.0, 0.0]], dtype=torch.float32)
    got32 = get_loss("listmle")(s32, y.float())[0].item()
    assert got32 == pytest.approx(80.0 + (80.0 + 90.0), rel=1e-6)


def test_listmle_order_of_lists_without_documents_is_an_index_tensor() -> None:
    y = torch.zeros((2, 0), dtype=torch.float64)
    order = listmle_order(y, y > 0)
    assert order.shape == (2, 0) and order.dtype == torch.long


@pytest.mark.parametrize("shape", [(3, 0), (0, 4)])
def test_masked_logcumsumexp_of_empty_batches(shape: tuple[int, int]) -> None:
    x = torch.zeros(shape, dtype=torch.float64)
    out = _ops.masked_logcumsumexp(x, x > 0)
    assert out.shape == shape and out.dtype == torch.float64


def _rows_far_apart(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    # rows whose scores lie hundreds apart (float64) or tens apart (float32), though never so
    # far that a shifted sum underflows: each row must be exact to its own largest |score|,
    # whatever the other rows hold; padding at the end of one list and the start of another
    gen = torch.Generator().manual_seed(5)
    base = torch.tensor(
        [[500.0], [0.0], [-150.0]] if dtype == torch.float64 else [[40.0], [0.0], [-20.0]]
    )
    x = (base + torch.randn(3, 12, generator=gen, dtype=torch.float64)).to(dtype)
    mask = torch.ones(3, 12, dtype=torch.bool)
    mask[1, 9:] = False
    mask[2, :3] = False
    return x, mask


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reverse", [False, True])
def test_masked_logcumsumexp_is_exact_per_list(dtype: str, reverse: bool) -> None:
    dt = getattr(torch, dtype)
    x, mask = _rows_far_apart(dt)
    got = (
        _ops.masked_logcumsumexp(x, mask, reverse=reverse)
        if reverse
        else (
            _ops.masked_logcumsumexp(x, mask)  # the default is the prefix direction
        )
    )
    ref = _reference_lcse(x.double(), mask, reverse)
    for row in range(3):
        m = mask[row]
        tol = 8 * torch.finfo(dt).eps * (1 + x[row, m].abs().max().item())
        err = (got[row, m].double() - ref[row, m]).abs().max().item()
        assert err <= tol, (row, err, tol)


@pytest.mark.parametrize("reverse", [False, True])
def test_masked_logcumsumexp_takes_the_cumsum_path_without_underflow(
    monkeypatch: pytest.MonkeyPatch, reverse: bool
) -> None:
    # the documented fast path: no logcumsumexp call unless a sum would underflow; padding at
    # either end of a list does not count as underflow
    x, mask = _rows_far_apart(torch.float64)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("logcumsumexp called although no sum underflows")

    # the helpers reach torch through ndcglab.losses._ops.torch, which keeps the functions it
    # has looked up: patch it there
    monkeypatch.setattr(_ops.torch, "logcumsumexp", refuse)
    out = _ops.masked_logcumsumexp(x, mask, reverse=reverse)
    assert torch.isfinite(out[mask]).all()


def test_listmle_order_sorts_once_when_real_documents_come_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the documented short cuts: with whole-number labels on the CPU, NumPy and no torch
    # sort; otherwise one sort with the usual padding, two with any other padding
    calls = []
    argsort = _ops.torch.argsort

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return argsort(*args, **kwargs)

    monkeypatch.setattr(_ops.torch, "argsort", counting)
    prefix = torch.tensor([[True, True, True, False], [True, True, False, False]])
    whole = torch.tensor([[2.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    listmle_order(whole, prefix, torch.Generator().manual_seed(0))
    assert not calls
    y = whole * 0.5  # labels 0.5: the torch path
    listmle_order(y, prefix, torch.Generator().manual_seed(0))
    assert len(calls) == 1
    calls.clear()
    listmle_order(y, ~prefix, torch.Generator().manual_seed(0))
    assert len(calls) == 2


def _suffix_case(device: str, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(6, 9, generator=g, dtype=torch.float64) * 4).to(dtype)
    mask = torch.rand(6, 9, generator=g) < 0.7
    mask[0] = False  # an empty list
    x[~mask] = float("nan")  # junk in the padding
    return x.to(device), mask.to(device)


def test_suffix_logsumexp_is_masked_logcumsumexp_on_the_cpu() -> None:
    x, mask = _suffix_case("cpu", torch.float64)
    got = _ops.masked_suffix_logsumexp(x, mask)
    want = _ops.masked_logcumsumexp(x, mask, reverse=True)
    assert torch.equal(got, want)


def _check_suffix_form(device: str, dtype: torch.dtype, form) -> None:
    """``form`` on ``device`` against the CPU's masked form: the same values and gradients
    wherever a suffix holds a real document, to the dtype's rounding; no gradient to padding."""
    x, mask = _suffix_case("cpu", dtype)
    xc = x.to(device).requires_grad_(True)
    xs = x.clone().requires_grad_(True)
    got = form(xc, mask.to(device))
    want = _ops.masked_logcumsumexp(xs, mask, reverse=True)
    nonempty = mask.flip(-1).cummax(dim=-1).values.flip(-1)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    torch.testing.assert_close(got.cpu()[nonempty], want[nonempty], rtol=tol, atol=tol)
    w = torch.where(nonempty, torch.rand(x.shape, generator=torch.Generator().manual_seed(1)), 0)
    (gc,) = torch.autograd.grad((got * w.to(dtype).to(device)).sum(), xc)
    (gx,) = torch.autograd.grad((want * w.to(dtype)).sum(), xs)
    torch.testing.assert_close(gc.cpu(), gx, rtol=tol, atol=tol)
    assert (gc.cpu()[~mask] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_padded_suffix_form_matches_the_masked_form(dtype: torch.dtype) -> None:
    """The form used off the CPU, checked on the CPU (where no GPU is at hand)."""
    _check_suffix_form("cpu", dtype, _ops.padded_suffix_logsumexp)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_suffix_logsumexp_on_cuda_matches_the_cpu(dtype: torch.dtype) -> None:  # pragma: no cover
    """On a GPU it is logcumsumexp of the padded row: the same values and gradients as the
    CPU's form wherever a suffix holds a real document, to the dtype's rounding."""
    _check_suffix_form("cuda", dtype, _ops.masked_suffix_logsumexp)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_lambdarank_delta_without_a_mask_on_cuda() -> None:  # pragma: no cover
    """The default mask (every document real) is made on the scores' device."""
    from ndcglab.losses.pairwise import lambdarank_delta

    g = torch.Generator().manual_seed(5)
    s = torch.randn(3, 6, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (3, 6), generator=g).double()
    got = lambdarank_delta(s.cuda(), y.cuda(), k=3)
    assert got.device.type == "cuda"
    torch.testing.assert_close(got.cpu(), lambdarank_delta(s, y, k=3), rtol=1e-12, atol=0)


# ------------------------------------------------------------------ ListMLE on the CPU
def _listmle_case(dtype: torch.dtype, spread: float = 4.0):
    g = torch.Generator().manual_seed(11)
    s = (torch.randn(7, 12, generator=g, dtype=torch.float64) * spread).to(dtype)
    y = torch.randint(0, 4, (7, 12), generator=g).to(dtype)
    lengths = torch.tensor([12, 9, 5, 1, 0, 12, 3])  # a one-document and an empty list
    mask = torch.arange(12) < lengths[:, None]
    s = torch.where(mask, s, torch.tensor(float("nan"), dtype=dtype))  # junk in the padding
    return s, y, mask


def _listmle_by_logcumsumexp(s: torch.Tensor, y: torch.Tensor, mask: torch.Tensor, seed: int):
    """ListMLE written independently: the documented order, then ``torch.logcumsumexp`` of the
    padded row (the form used off the CPU), by autograd."""
    order = listmle_order(y, mask, torch.Generator().manual_seed(seed))
    m = mask.gather(-1, order)
    ss = s.gather(-1, order)
    suffix = _ops.padded_suffix_logsumexp(ss, m)
    return torch.where(mask.any(-1), torch.where(m, suffix - ss, 0.0).sum(-1), 0.0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_listmle_closed_form_gradient_matches_autograd_of_logcumsumexp(dtype) -> None:
    """On the CPU ListMLE's value and gradient come from :mod:`._plackett_luce` (a closed-form
    backward); both must equal autograd of the logcumsumexp form to the dtype's rounding, with
    no gradient reaching the padding, and its second derivative (a Hessian-vector product
    through ``create_graph=True``) must match too."""

    s, y, mask = _listmle_case(dtype)
    loss = get_loss("listmle")
    a = s.clone().requires_grad_(True)
    b = s.clone().requires_grad_(True)
    got = loss(a, y, mask, generator=torch.Generator().manual_seed(5))
    want = _listmle_by_logcumsumexp(b, y, mask, 5)
    node = got.grad_fn.next_functions[0][0]  # where(has, value, 0) <- the ListMLE value
    assert type(node).__name__ == "_SortedNLLBackward"
    tol = 1e-12 if dtype == torch.float64 else 2e-5
    torch.testing.assert_close(got, want, rtol=tol, atol=tol)
    w = torch.rand(7, generator=torch.Generator().manual_seed(2), dtype=torch.float64).to(dtype)
    (ga,) = torch.autograd.grad((got * w).sum(), a, create_graph=True)
    (gb,) = torch.autograd.grad((want * w).sum(), b, create_graph=True)
    torch.testing.assert_close(ga, gb, rtol=tol, atol=tol)
    assert (ga[~mask] == 0).all() and torch.isfinite(ga).all()
    v = torch.randn(7, 12, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    v = v.to(dtype)
    (ha,) = torch.autograd.grad((ga * v).sum(), a)
    (hb,) = torch.autograd.grad((gb * v).sum(), b)
    torch.testing.assert_close(ha, hb, rtol=10 * tol, atol=10 * tol)
    assert (ha[~mask] == 0).all()


@pytest.mark.parametrize(("dtype", "spread"), [(torch.float64, 400.0), (torch.float32, 40.0)])
def test_listmle_wide_score_range_takes_the_stable_form(dtype, spread: float) -> None:
    """Scores far apart underflow the shifted sums: :func:`sorted_nll` declines and the loss is
    computed with logcumsumexp, so values and gradients stay finite and exact."""
    from ndcglab.losses import _plackett_luce

    s, y, mask = _listmle_case(dtype, spread)
    order = listmle_order(y, mask, torch.Generator().manual_seed(5))
    assert _plackett_luce.sorted_nll(s.gather(-1, order), mask.gather(-1, order)) is None
    a = s.clone().requires_grad_(True)
    b = s.clone().requires_grad_(True)
    got = get_loss("listmle")(a, y, mask, generator=torch.Generator().manual_seed(5))
    want = _listmle_by_logcumsumexp(b, y, mask, 5)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    (ga,) = torch.autograd.grad(got.sum(), a)
    (gb,) = torch.autograd.grad(want.sum(), b)
    torch.testing.assert_close(ga, gb, rtol=1e-6, atol=1e-6)
    assert torch.isfinite(got).all() and torch.isfinite(ga).all()


def test_sorted_nll_declines_a_nan_score() -> None:
    from ndcglab.losses import _plackett_luce

    s = torch.tensor([[0.5, float("nan"), -1.0]], dtype=torch.float64)
    assert _plackett_luce.sorted_nll(s, torch.ones(1, 3, dtype=torch.bool)) is None
    assert _plackett_luce.sorted_nll(s[:, :0], torch.ones(1, 0, dtype=torch.bool)) is None


def test_listmle_order_numpy_path_equals_the_torch_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The NumPy order (whole-number labels, real documents first, on the CPU) against the torch
    path on 400 random batches of both layouts and both label kinds, labels up to the limit."""
    import ndcglab.losses.listwise as lw

    rng = np.random.default_rng(0)
    taken = 0
    for trial in range(400):
        b, m = int(rng.integers(1, 6)), int(rng.integers(1, 25))
        lengths = rng.integers(0, m + 1, b)
        mask = torch.as_tensor(np.arange(m)[None, :] < lengths[:, None])
        if trial % 5 == 0:
            mask = torch.as_tensor(rng.random((b, m)) < 0.6)
        top = [2, 5, 2**31 - 1, 2**31][trial % 4]
        y = torch.as_tensor(rng.integers(0, top + 1, (b, m))).to(torch.float64)
        if trial % 7 == 0:
            y = y * 0.5
        junk = torch.as_tensor(rng.integers(-3, 9, (b, m))).to(y.dtype)
        y = torch.where(mask, y, junk).to([torch.float32, torch.float64][trial % 2])
        fast = lw._IntegerKeys.build(y, mask)
        taken += fast is not None
        got = listmle_order(y, mask, torch.Generator().manual_seed(trial))
        with monkeypatch.context() as mp:
            mp.setattr(lw._IntegerKeys, "build", classmethod(lambda cls, *args: None))
            want = listmle_order(y, mask, torch.Generator().manual_seed(trial))
        assert torch.equal(got, want), trial
    assert taken > 150


def test_listmle_order_numpy_keys_that_would_not_fit_take_the_torch_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The NumPy keys pack label, tie rank and position into 63 bits: a long list with labels
    near 2^31 does not fit and goes to the torch path; a long list with small labels fits.
    Both give the documented order."""
    import ndcglab.losses.listwise as lw

    m = (1 << 16) + 1  # 17 bits per position
    rng = np.random.default_rng(1)
    for top, fits in ((3, True), (2**31 - 1, False)):
        y = torch.as_tensor(rng.integers(0, top + 1, (2, m))).to(torch.float64)
        mask = torch.as_tensor(np.arange(m)[None, :] < np.array([[m], [m // 3]]))
        assert (lw._IntegerKeys.build(y, mask) is not None) == fits
        got = listmle_order(y, mask, torch.Generator().manual_seed(4))
        with monkeypatch.context() as mp:
            mp.setattr(lw._IntegerKeys, "build", classmethod(lambda cls, *args: None))
            want = listmle_order(y, mask, torch.Generator().manual_seed(4))
        assert torch.equal(got, want)


def test_sorted_nll_with_padding_between_real_documents() -> None:
    """:func:`sorted_nll` takes any mask (ListMLE's own rows have their padding last): value,
    gradient and a Hessian-vector product against autograd of the masked form, all finite."""
    from ndcglab.losses import _plackett_luce

    g = torch.Generator().manual_seed(8)
    s = torch.randn(4, 10, generator=g, dtype=torch.float64) * 3
    m = torch.rand(4, 10, generator=g) < 0.6
    m[:, 0] = False  # padding before every list's real documents
    m[:, -1] = True
    s = torch.where(m, s, torch.tensor(float("nan"), dtype=s.dtype))
    a = s.clone().requires_grad_(True)
    b = s.clone().requires_grad_(True)
    got = _plackett_luce.sorted_nll(a, m)
    assert got is not None
    suffix = _ops.masked_logcumsumexp(b, m, reverse=True)
    want = torch.where(m, suffix - b, 0.0).sum(-1)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    (ga,) = torch.autograd.grad(got.sum(), a, create_graph=True)
    (gb,) = torch.autograd.grad(want.sum(), b, create_graph=True)
    torch.testing.assert_close(ga, gb, rtol=1e-12, atol=1e-12)
    v = torch.randn(4, 10, generator=g, dtype=torch.float64)
    (ha,) = torch.autograd.grad((ga * v).sum(), a)
    (hb,) = torch.autograd.grad((gb * v).sum(), b)
    assert torch.isfinite(ha).all()
    torch.testing.assert_close(ha, hb, rtol=1e-10, atol=1e-10)
    assert (ga[~m] == 0).all() and (ha[~m] == 0).all()


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_listmle_with_half_precision_labels_and_scores(dtype: torch.dtype) -> None:
    """Half-precision batches (no NumPy view for bfloat16) take the torch order: the loss is
    finite and its tie order is the documented one."""
    y = torch.tensor([[2.0, 0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 0.0]], dtype=dtype)
    mask = torch.tensor([[True, True, True, False], [True, True, True, True]])
    got = listmle_order(y, mask, torch.Generator().manual_seed(4))
    assert got.tolist() == reference_order(y.float(), mask, 4)
    s = torch.randn(2, 4).to(dtype).requires_grad_(True)
    value = get_loss("listmle")(s, y, mask, generator=torch.Generator().manual_seed(4))
    value.sum().backward()
    assert torch.isfinite(value).all() and torch.isfinite(s.grad).all()
