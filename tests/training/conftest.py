"""Fixtures for the training tests: small seeded ranking data where a linear model can learn."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.data import RankingDataset


def make_ranking_data(
    n_queries: int = 60,
    n_features: int = 6,
    *,
    seed: int = 0,
    min_len: int = 5,
    max_len: int = 25,
    noise: float = 0.5,
) -> RankingDataset:
    """Queries of varied length; labels 0..2 from a hidden linear score plus noise."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_len, max_len + 1, size=n_queries)
    n = int(lengths.sum())
    x = rng.normal(size=(n, n_features)).astype(np.float32)
    w = np.linspace(1.0, -0.5, n_features)
    latent = x @ w + noise * rng.normal(size=n)
    labels = np.digitize(latent, [0.5, 1.5]).astype(np.float64)
    return RankingDataset.from_arrays(x, labels, group=lengths)


@pytest.fixture(scope="session")
def data() -> RankingDataset:
    return make_ranking_data()


@pytest.fixture(scope="session")
def split(data: RankingDataset) -> tuple[RankingDataset, RankingDataset]:
    """(train, validation) halves of ``data``."""
    q = data.n_queries
    return data.subset(np.arange(q // 2)), data.subset(np.arange(q // 2, q))


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """Tiny tensors: one thread avoids oversubscribing small machines."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
