"""ndcglab — measure and optimise NDCG, with every convention stated.

Light at import: heavy dependencies (torch, lightgbm, matplotlib, dask) load only in the modules
that need them.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .data import RankingDataset
from .errors import (
    ConventionError,
    DataFormatError,
    EmptyQueryError,
    MissingDependencyError,
    ModelMismatchError,
    NdcglabError,
    SpecError,
)

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
