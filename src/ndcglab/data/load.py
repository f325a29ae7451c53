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
    if text.startswith("synthetic:"):  # synthetic.SYNTHETIC_PREFIX; the module loads on use
        from .synthetic import make_synthetic, parse_synthetic_spec

        name, seed = parse_synthetic_spec(text)
        if read_options:
            raise SpecError(
                f"read options {sorted(read_options)} do not apply to synthetic data. "
                "Fix: drop them, or give a data file"
            )
        return make_synthetic(name, seed=seed)
    from .letor import read_letor

    return read_letor(Path(text), **read_options)
