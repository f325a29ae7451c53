"""The discount objects on torch tensors: the NumPy values at whole positions, and at real-valued
positions the closed forms and their derivatives (the ApproxNDCG use)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ndcglab.errors import ConventionError
from ndcglab.measures.discounts import CallableDiscount, get_discount

torch = pytest.importorskip("torch")

#: name -> (D(r, n), dD/dr) written from the formulas of docs/measures.md
CLOSED = {
    "log": (
        lambda r, n: 1.0 / math.log2(1.0 + r),
        lambda r, n: -1.0 / ((1 + r) * math.log(2) * math.log2(1 + r) ** 2),
    ),
    "log:10": (
        lambda r, n: 1.0 / math.log10(1.0 + r),
        lambda r, n: -1.0 / ((1 + r) * math.log(10) * math.log10(1 + r) ** 2),
    ),
    "power:0.5": (lambda r, n: r**-0.5, lambda r, n: -0.5 * r**-1.5),
    "zipf": (lambda r, n: 1.0 / r, lambda r, n: -1.0 / r**2),
    "exp:3": (lambda r, n: 3.0**-r, lambda r, n: -math.log(3.0) * 3.0**-r),
    "linear": (lambda r, n: n - r, lambda r, n: -1.0),
    "letor": (
        lambda r, n: 1.0 if r <= 2 else 1.0 / math.log2(r),
        lambda r, n: 0.0 if r <= 2 else -1.0 / (r * math.log(2) * math.log2(r) ** 2),
    ),
}
POSITIONS = [1.0, 1.25, 1.9, 2.5, 3.0, 7.3, 40.0]


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_a_tensor_gives_the_closed_form_and_its_derivative(name: str) -> None:
    value, slope = CLOSED[name]
    disc = get_discount(name)
    n = 50
    r = torch.tensor(POSITIONS, dtype=torch.float64, requires_grad=True)
    d = disc(r, torch.full((len(POSITIONS),), n))
    assert isinstance(d, torch.Tensor) and d.dtype == torch.float64
    (grad,) = torch.autograd.grad(d.sum(), r)
    d = d.detach()
    for i, p in enumerate(POSITIONS):
        assert float(d[i]) == pytest.approx(value(p, n), rel=1e-14, abs=1e-15)
        assert float(grad[i]) == pytest.approx(slope(p, n), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", sorted(CLOSED))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_tensor_of_whole_positions_gives_the_numpy_table(name: str, dtype: str) -> None:
    disc = get_discount(name)
    m = 30
    table = disc.table(m)
    ranks = torch.arange(1, m + 1, dtype=getattr(torch, dtype))
    got = disc(ranks, m)
    assert got.dtype == ranks.dtype
    tol = 1e-6 if dtype == "float32" else 1e-15
    np.testing.assert_allclose(got.double().numpy(), table, rtol=tol, atol=tol)


def test_a_numpy_callable_has_no_tensor_form() -> None:
    disc = CallableDiscount(fn=lambda r, n: 1.0 / r, name="mine")
    assert not disc.smooth and get_discount("log").smooth
    np.testing.assert_allclose(disc.table(3), [1.0, 0.5, 1.0 / 3.0])
    with pytest.raises(ConventionError, match="no form on torch tensors"):
        disc(torch.ones(3), 3)
