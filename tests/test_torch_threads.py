"""``ndcglab._compat.torch_threads``: torch's intra-op thread count set for a block and put
back, also when blocks nest or the block raises."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ndcglab._compat import torch_threads  # noqa: E402


@pytest.fixture(autouse=True)
def three_threads() -> object:
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield
    torch.set_num_threads(before)


def test_a_block_sets_the_number_and_puts_it_back() -> None:
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 3
    with torch_threads(None):
        assert torch.get_num_threads() == 3
    with pytest.raises(RuntimeError), torch_threads(2):
        raise RuntimeError("inside")
    assert torch.get_num_threads() == 3


def test_a_block_within_another_gives_the_outer_one_its_number_back() -> None:
    with torch_threads(2):  # e.g. training
        with torch_threads(1):  # e.g. scoring the validation set
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == 3
