"""Losses on inputs where a changed operator or constant shows (found by mutation testing, see
CONTRIBUTING.md): dtypes of the pair weights, AdaRank's refusal, by-hand values."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

from ndcglab.losses import NotDifferentiableError, get_loss  # noqa: E402

from .test_oracles import cs_loop  # noqa: E402


@pytest.mark.parametrize("spec", ["ranknet", "ranknet(weight=label)", "lambdarank@2"])
def test_pair_weights_are_in_the_scores_dtype(spec: str) -> None:
    # integer labels and float64 scores: the weights are float64, the pairs with y_i > y_j
    scores = torch.tensor([[0.3, -0.2, 0.9]], dtype=torch.float64)
    labels = torch.tensor([[2, 0, 1]])
    mask = torch.ones(1, 3, dtype=torch.bool)
    loss: Any = get_loss(spec)
    w = loss.pair_weights(scores, labels, mask)
    assert w.dtype == torch.float64 and w.shape == (1, 3, 3)
    nz = {(i, j) for i in range(3) for j in range(3) if w[0, i, j] != 0}
    assert nz == {(0, 1), (0, 2), (2, 1)}
    if spec == "ranknet":
        assert w[0, 0, 1].item() == 1 / 3  # each of the |P| = 3 pairs weighs 1/|P|
    if spec == "ranknet(weight=label)":
        assert w[0, 0, 1].item() == 2 / 3 and w[0, 2, 1].item() == 1 / 3  # (y_i - y_j)/|P|


def test_adarank_refuses_to_be_called_with_the_fix() -> None:
    loss = get_loss("adarank")
    scores = torch.zeros(1, 2)
    labels = torch.tensor([[1.0, 0.0]])
    mask = torch.ones(1, 2, dtype=torch.bool)
    want = (
        "'adarank' is trained by boosting, not by gradient: it has no per-list loss to evaluate "
        "or differentiate. Fix: train it with ndcglab.models.adarank (e.g. "
        "NDCGRanker(loss='adarank')), or pick a differentiable loss "
        "(ndcglab.losses.available_losses(kind='differentiable'))"
    )
    for call in (
        lambda: loss(scores, labels, mask),
        lambda: loss(scores=scores, labels=labels, mask=mask),
        lambda: loss.per_list(scores, labels, mask),
    ):
        with pytest.raises(NotDifferentiableError) as e:
            call()
        assert str(e.value) == want


def test_consistent_norm_is_printed_as_written() -> None:
    # the convention printed in reports: z for the full DCG norm, zK for IDCG@K
    assert get_loss("consistent_listnet").convention["norm"] == "z"
    assert get_loss("consistent_listnet(norm=z3)").convention["norm"] == "z3"


# ------------------------------------------------------- norms and blocked pairs (_ops)
def test_norms_below_one_and_with_one_nonzero_entry_by_hand() -> None:
    from ndcglab.losses import _ops

    # ‖(0.3, 0.4)‖₂ = 0.5 (a norm below 1 is a norm, not "zero"); ‖0‖ is 1 by convention
    n2, pos2 = _ops.norm2(torch.tensor([[0.3, 0.4], [0.0, 0.0]], dtype=torch.float64))
    assert n2.tolist() == pytest.approx([0.5, 1.0], rel=1e-15) and pos2.tolist() == [True, False]
    # one non-zero entry: ‖(0, −3)‖_q = 3 for every q; (1, 1) under q = 2: √2; under q = 1: 2
    s = torch.tensor([[0.0, -3.0], [1.0, 1.0], [1.0, 1.0]], dtype=torch.float64)
    q = torch.tensor([[2.0], [2.0], [1.0]], dtype=torch.float64)
    nq, posq = _ops.norm_q(s, q)
    assert nq.tolist() == pytest.approx([3.0, 2**0.5, 2.0], rel=1e-15)
    assert posq.tolist() == [True, True, True]


def test_cosine_loss_is_scale_invariant_in_the_scores_also_below_norm_one() -> None:
    # cos(s, g) does not change when s is multiplied by c > 0 (the definition), whatever ‖s‖ is
    loss: Any = get_loss("cosine")
    labels = torch.tensor([[2, 0, 1, 1]])
    mask = torch.ones(1, 4, dtype=torch.bool)
    s = torch.tensor([[0.3, -0.2, 0.1, 0.05]], dtype=torch.float64)  # ‖s‖ < 1
    ref = loss(s * 100.0, labels, mask)
    for c in (0.01, 1.0, 3.0):
        assert loss(s * c, labels, mask).item() == pytest.approx(ref.item(), rel=1e-12)


@pytest.mark.parametrize("spec", ["ranknet", "lambdarank"])
def test_blocked_pairs_without_gradients_equal_one_block(spec: str, monkeypatch) -> None:
    # a pair budget of a few entries splits every list into blocks: under no_grad the blocks run
    # directly (no checkpoint), and their sum must be the unblocked value
    from ndcglab.losses import _ops

    g = torch.Generator().manual_seed(3)
    s = torch.randn(2, 7, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (2, 7), generator=g)
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[1, 5:] = False
    loss: Any = get_loss(spec)
    with torch.no_grad():
        whole = loss(s, y, mask)
        monkeypatch.setattr(_ops, "PAIR_BUDGET", 2 * 7)  # one row of pairs per block
        blocked = loss(s, y, mask)
    assert torch.allclose(blocked, whole, rtol=1e-13, atol=0.0)


def test_cs_listmle_constant_per_list_in_a_padded_batch() -> None:
    # C(y) is a property of each list alone: a padded batch gives each list's own constant, and a
    # list without gain (DCG = 0) gives 0 as documented, not 0/0
    from ndcglab.losses.cs_listmle import cs_listmle_constant

    labels = torch.tensor([[2.0, 0.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[True, True, True, False], [True] * 4, [True, True, True, False]])
    for k in (None, 2):
        got = cs_listmle_constant(labels.double(), mask, k=k)
        alone = [
            cs_listmle_constant(torch.tensor([[2.0, 0.0, 1.0]], dtype=torch.float64), k=k),
            cs_listmle_constant(torch.tensor([[1.0, 1.0, 0.0, 0.0]], dtype=torch.float64), k=k),
        ]
        assert got[0].item() == pytest.approx(alone[0].item(), rel=1e-14)
        assert got[1].item() == pytest.approx(alone[1].item(), rel=1e-14)
        assert got[2].item() == 0.0
        assert alone[0].item() != pytest.approx(alone[1].item(), rel=1e-3)  # the lists differ


# a gain table that is not monotone in the label and gives label 1 no gain: documents with
# c(j) = 0 that still have documents below them with c > 0 (never so with 2^y - 1)
_ODD_GAIN = {0.0: 1.0, 1.0: 0.0, 2.0: 3.0}
_ODD_SPEC = "table:0=1;1=0;2=3"
_ODD_LISTS = [
    ([1.0, 0.0, 2.0, 0.0], [0.3, -0.2, 0.1, 0.5]),
    ([1.0, 0.0, 0.0], [1.5, -0.7, 0.2]),
    ([2.0, 1.0, 1.0, 0.0, 0.0], [-1.0, 0.4, 0.9, 2.2, -0.3]),
]


@pytest.mark.parametrize("k", [2, 3])
def test_cs_listmle_with_a_non_monotone_gain_equals_the_loop(k: int) -> None:
    loss = get_loss(f"cs_listmle(gain={_ODD_SPEC})@{k}")
    for y, s in _ODD_LISTS:
        x = torch.tensor([s], dtype=torch.float64, requires_grad=True)
        yt = torch.tensor([y], dtype=torch.float64)
        v = loss(x, yt)
        assert v.item() == pytest.approx(cs_loop(s, y, k, gain=_ODD_GAIN.__getitem__), rel=1e-12)
        (g_auto,) = torch.autograd.grad(v.sum(), x)
        out = loss.grad_hess(x.detach(), yt)
        assert out is not None
        torch.testing.assert_close(out[0], g_auto, rtol=1e-10, atol=1e-12)


def test_cs_listmle_mean_counts_only_lists_with_a_positive_dcg() -> None:
    # list 0: two label levels but every gain 0 (DCG_ĝ@k = 0): no loss, not in the mean
    loss = get_loss("cs_listmle(gain=table:0=0;1=0;2=1)@2")
    y = torch.tensor([[1.0, 0.0, 0.0], [2.0, 0.0, 1.0]], dtype=torch.float64)
    s = torch.tensor([[0.1, 0.9, -0.4], [0.2, 0.5, -1.0]], dtype=torch.float64)
    per_list = loss(s, y, reduction="none")
    assert per_list[0].item() == 0.0 and per_list[1].item() > 0.0
    assert loss(s, y, reduction="mean").item() == pytest.approx(per_list[1].item(), rel=1e-15)


def _spy_checkpoint(monkeypatch) -> list[int]:
    """Count the calls of torch's checkpoint (the memory bound of the pair blocks)."""
    import torch.utils.checkpoint as cp

    calls: list[int] = []
    real = cp.checkpoint

    def spy(fn: Any, *args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(fn, *args, **kw)

    monkeypatch.setattr(cp, "checkpoint", spy)
    return calls


@pytest.mark.parametrize("grad", [False, True])
def test_chunked_rows_splits_by_the_budget_and_checkpoints_only_with_gradients(
    grad: bool, monkeypatch
) -> None:
    from ndcglab.losses._ops import chunked_rows

    calls = _spy_checkpoint(monkeypatch)
    x = torch.arange(5 * 3, dtype=torch.float64).reshape(5, 3).requires_grad_(grad)
    seen: list[int] = []

    def fn(t: Any) -> Any:
        seen.append(t.shape[0])
        return (t * t).sum(dim=-1)

    want = (x.detach() ** 2).sum(dim=-1)
    # M² = 9 pair entries per list, budget 18: two lists per chunk
    out = chunked_rows(fn, x, budget=18)
    assert seen == [2, 2, 1] and torch.equal(out.detach(), want)
    assert len(calls) == (3 if grad else 0)
    if grad:  # the gradient through checkpointed chunks is the plain one
        (g,) = torch.autograd.grad(out.sum(), x)
        assert torch.equal(g, 2 * x.detach())
    seen.clear()
    assert torch.equal(chunked_rows(fn, x, budget=10, per_row=5).detach(), want)
    assert seen == [2, 2, 1]  # per_row entries per list, not M²
    seen.clear()
    calls.clear()
    chunked_rows(fn, x, budget=45)  # 5 lists × 9 = 45 fits: one plain call
    assert seen == [5] and calls == []
    seen.clear()
    chunked_rows(fn, x, budget=4, per_row=1)  # one pair entry per list: four lists a chunk
    assert seen == [4, 1]
    seen.clear()
    calls.clear()
    chunked_rows(fn, x, budget=9)  # exactly one list's pairs: one list a chunk, checkpointed
    assert seen == [1] * 5 and len(calls) == (5 if grad else 0)
    seen.clear()
    calls.clear()
    chunked_rows(fn, x, budget=8)  # one list alone exceeds the budget: one at a time, and
    assert seen == [1] * 5  # not checkpointed here (fn blocks its own pairs)
    assert calls == []


@pytest.mark.parametrize("grad", [False, True])
def test_pair_blocks_split_the_first_pair_axis_by_the_budget(grad: bool, monkeypatch) -> None:
    from ndcglab.losses._ops import pair_blocks

    calls = _spy_checkpoint(monkeypatch)
    x = torch.linspace(-1.0, 1.0, 2 * 7, dtype=torch.float64).reshape(2, 7).requires_grad_(grad)
    blocks: list[tuple[int, int]] = []

    def fn(lo: int, hi: int, t: Any) -> Any:
        blocks.append((lo, hi))
        return t[:, lo:hi].sum(dim=-1)

    # B × (hi − lo) × cols ≤ budget: 2 × step × 4 ≤ 24 → blocks of 3 rows of pairs
    out = pair_blocks(fn, 7, x, cols=4, budget=24)
    assert blocks == [(0, 3), (3, 6), (6, 7)]
    torch.testing.assert_close(out.detach(), x.detach().sum(dim=-1), rtol=1e-15, atol=0.0)
    assert len(calls) == (3 if grad else 0)
    blocks.clear()
    calls.clear()
    pair_blocks(fn, 7, x, cols=4, budget=56)  # 2 × 7 × 4 = 56 fits: one plain block
    assert blocks == [(0, 7)] and calls == []
    blocks.clear()
    pair_blocks(fn, 7, x[:1], cols=1, budget=3)  # one list, one column: three rows a block
    assert blocks == [(0, 3), (3, 6), (6, 7)]
    blocks.clear()
    pair_blocks(fn, 3, x, cols=4, budget=1)  # under one row per block: still one row
    assert blocks == [(0, 1), (1, 2), (2, 3)]


def test_cut_discounts_keep_only_real_positions_within_the_list_and_the_cutoff() -> None:
    import math

    from ndcglab.losses._ops import cut_discounts
    from ndcglab.measures.discounts import get_discount

    log = get_discount("log")
    like = torch.zeros(1, dtype=torch.float64)
    pos = torch.tensor([[1, 3, 4, 2], [2, 0, 1, 5]])  # 0: padding; 5 > M = 4: off the list
    mask = torch.tensor([[True, True, True, False], [True, False, True, True]])
    d = [1.0 / math.log2(1 + r) for r in range(1, 5)]
    got = cut_discounts(log, pos, mask, None, like)
    want = [[d[0], d[2], d[3], 0.0], [d[1], 0.0, d[0], 0.0]]
    # to one unit in the last place: libm's log2 and NumPy's may round 1/log2(3) differently
    torch.testing.assert_close(got, torch.tensor(want, dtype=torch.float64), rtol=4e-16, atol=0)
    got_k = cut_discounts(log, pos, mask, torch.tensor([3, 1]), like)
    want_k = [[d[0], d[2], 0.0, 0.0], [0.0, 0.0, d[0], 0.0]]
    torch.testing.assert_close(got_k, torch.tensor(want_k, dtype=torch.float64), rtol=0, atol=0)
    one = cut_discounts(log, torch.tensor([[1], [2]]), torch.ones(2, 1, dtype=torch.bool), 2, like)
    assert one.tolist() == [[1.0], [0.0]]  # M = 1: position 2 is off the list


@pytest.mark.parametrize("spec", ["ranknet", "lambdarank@2", "cs_listmle@2"])
def test_mean_leaves_out_a_padded_list_of_tied_labels(spec: str) -> None:
    # list 0: two real documents with the same label and one padded entry: no pair, no loss
    y = torch.tensor([[1.0, 1.0, 0.0], [2.0, 0.0, 1.0]], dtype=torch.float64)
    s = torch.tensor([[0.3, -0.1, 0.0], [0.2, 0.5, -1.0]], dtype=torch.float64)
    mask = torch.tensor([[True, True, False], [True, True, True]])
    loss = get_loss(spec)
    per_list = loss(s, y, mask, reduction="none")
    assert per_list[0].item() == 0.0 and per_list[1].item() > 0.0
    assert loss(s, y, mask, reduction="mean").item() == pytest.approx(per_list[1].item(), rel=1e-15)


@pytest.mark.parametrize("spec", ["ranknet", "lambdarank"])
def test_padding_never_pairs_with_negative_labels(spec: str) -> None:
    # padded entries hold label 0, above a real label -1: they must still make no pair
    loss = get_loss(spec)
    y = torch.tensor([[-1.0, 0.0, 1.0]], dtype=torch.float64)
    s = torch.tensor([[0.4, -0.3, 0.1]], dtype=torch.float64)
    alone = loss(s, y)
    pad_y = torch.tensor([[-1.0, 0.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    pad_s = torch.tensor([[0.4, -0.3, 0.1, 2.0, -2.0]], dtype=torch.float64)
    mask = torch.tensor([[True, True, True, False, False]])
    assert loss(pad_s, pad_y, mask).item() == pytest.approx(alone.item(), rel=1e-14)
    w = loss.pair_weights(pad_s, pad_y, mask)
    assert w[0, 3:].abs().sum().item() == 0.0 and w[0, :, 3:].abs().sum().item() == 0.0
    assert w[0, 1, 0].item() > 0.0  # label 0 above label -1 (real documents): a pair


def test_cs_listmle_weights_make_no_pair_with_padding() -> None:
    from ndcglab.losses.cs_listmle import cs_listmle_weights

    y = torch.tensor([[2.0, 1.0, 0.0, 0.0]], dtype=torch.float64)
    mask = torch.tensor([[True, True, True, False]])
    w, beta, _ = cs_listmle_weights(y - 1.0, mask)  # labels 1, 0, -1; padding -1 + 0 = -1
    yy = torch.where(mask, y - 1.0, torch.zeros(()))  # padding read as label 0
    w2, _, _ = cs_listmle_weights(yy, mask)
    assert w2[0, 3].abs().sum().item() == 0.0 and w2[0, :, 3].abs().sum().item() == 0.0
    assert w[0, 3].abs().sum().item() == 0.0 and beta[0, 3].item() == 0.0


def test_ideal_dcg_of_empty_lists_is_one_zero_per_list() -> None:
    from ndcglab.losses._ops import ideal_dcg
    from ndcglab.measures.discounts import get_discount

    z = ideal_dcg(torch.zeros(3, 0), torch.zeros(3, 0, dtype=torch.bool), get_discount("log"))
    assert z.shape == (3,) and z.tolist() == [0.0, 0.0, 0.0]


def test_ranking_keeps_ties_in_input_order_on_long_lists() -> None:
    # (torch's unstable CPU sort reorders ties from about 100 entries on)
    from ndcglab.losses._ops import ranking

    g = torch.Generator().manual_seed(0)
    s = torch.randint(0, 3, (2, 300), generator=g).to(torch.float64)
    mask = torch.ones(2, 300, dtype=torch.bool)
    mask[1, 250:] = False
    order, rank = ranking(s, mask)
    for b in range(2):
        n = int(mask[b].sum())
        want = sorted(range(n), key=lambda i: (-s[b, i].item(), i)) + list(range(n, 300))
        assert order[b].tolist() == want
        assert rank[b][order[b]].tolist() == list(range(300))


def test_a_gain_written_with_numpy_works_in_the_losses_dtype() -> None:
    # a user's gain that returns a NumPy float64 array for a float32 label tensor
    import math

    import numpy as np

    from ndcglab.losses.listwise import ListNet
    from ndcglab.measures.gains import get_gain

    loss = ListNet(gain=get_gain(lambda y: np.asarray(y, dtype=np.float64) ** 2))
    s = torch.tensor([[0.1, 0.2, 0.3]], dtype=torch.float32)
    y = torch.tensor([[2.0, 1.0, 0.0]], dtype=torch.float32)
    v = loss(s, y)
    assert v.dtype == torch.float32
    # ListNet by hand: −Σ p log softmax(s), p = softmax(G) with G = y² = (4, 1, 0)
    z = sum(math.exp(x) for x in (0.1, 0.2, 0.3))
    zg = math.exp(4) + math.exp(1) + 1.0
    want = -sum(math.exp(g) / zg * (x - math.log(z)) for g, x in ((4, 0.1), (1, 0.2), (0, 0.3)))
    assert v.item() == pytest.approx(want, rel=1e-6)
