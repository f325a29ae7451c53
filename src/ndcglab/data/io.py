"""One entry point for every dataset spec: :func:`load_dataset`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import SpecError
from .dataset import RankingDataset

__all__ = ["load_dataset"]


def load_dataset(
    spec: str | os.PathLike[str] | RankingDataset, **read_options: Any
) -> RankingDataset:
    """Load a dataset from a spec.

    * ``"synthetic:NAME"`` or ``"synthetic:NAME:SEED"`` - :func:`ndcglab.data.make_synthetic`
      (``NAME`` in ``small``, ``default``, ``web40``, ``mslr30k``; seed 0 by default);
    * a file path - :func:`ndcglab.data.read_letor` (plain or ``.gz``), with ``read_options``
      (``missing=``, ``query_file=``, ``n_features=``, ``split_queries=``, ``cache=``);
    * a :class:`RankingDataset` - returned as it is.
    """
    if isinstance(spec, RankingDataset):
        return spec
    text = os.fspath(spec)
    if text.startswith("synthetic:"):
        from .synthetic import make_synthetic

        parts = text.split(":")
        if len(parts) not in (2, 3) or not parts[1]:
            raise SpecError(
                f"bad synthetic dataset spec {text!r}. Fix: write synthetic:NAME or "
                "synthetic:NAME:SEED, e.g. synthetic:web40:3"
            )
        seed = 0
        if len(parts) == 3:
            if not parts[2].isdigit():
                raise SpecError(
                    f"seed {parts[2]!r} in {text!r} is not a non-negative integer. "
                    "Fix: e.g. synthetic:default:1"
                )
            seed = int(parts[2])
        if read_options:
            raise SpecError(f"read options {sorted(read_options)} do not apply to synthetic data")
        return make_synthetic(parts[1], seed=seed)
    from .letor import read_letor

    return read_letor(Path(text), **read_options)
