"""ndcglab — measure and optimise NDCG, with every convention stated.

Light at import: heavy dependencies (torch, lightgbm, matplotlib, dask) load only in the modules
that need them, and NumPy only when :class:`RankingDataset` is first used
(``ndcglab.RankingDataset`` is looked up on first access), so ``ndcglab --version`` and
``--help`` start in the time of Python itself.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import (
    ConventionError,
    DataFormatError,
    EmptyQueryError,
    MissingDependencyError,
    ModelMismatchError,
    NdcglabError,
    SpecError,
)

# no typing at run time: ``ndcglab --version`` imports this package (a few ms of start-up)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .data import RankingDataset


def __getattr__(name: str) -> Any:
    """``ndcglab.RankingDataset``: imported (with NumPy) on first access."""
    if name == "RankingDataset":
        from .data import RankingDataset

        return RankingDataset
    raise AttributeError(f"module 'ndcglab' has no attribute {name!r}")


__all__ = [
    "ConventionError",
    "DataFormatError",
    "EmptyQueryError",
    "MissingDependencyError",
    "ModelMismatchError",
    "NdcglabError",
    "RankingDataset",
    "SpecError",
    "__version__",
]
