"""The training tests' seeded ranking data and one-thread torch set-up, shared here."""

from __future__ import annotations

from ..training.conftest import _one_torch_thread, data, make_ranking_data, split

__all__ = ["_one_torch_thread", "data", "make_ranking_data", "split"]
