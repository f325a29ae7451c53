"""The fingerprint of a training run: which options and data a checkpoint belongs to.

``resume=True`` continues a checkpoint only when the fingerprint matches (see
:mod:`ndcglab.training.checkpoint`). It hashes every training option except those that do not
change the result's course (``epochs``/``max_epochs`` — a resumed run may be given more epochs —,
``device`` and ``num_threads``), plus a digest of the training and validation data: their shape,
labels, boundaries and an evenly spaced sample of at most ~20,000 feature rows. Torch-free.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from ..data.dataset import RankingDataset
from .config import TrainConfig

__all__ = ["FINGERPRINT_SKIPS", "data_digest", "run_fingerprint"]

#: training options left out of the fingerprint (``trees``: not used by gradient models)
FINGERPRINT_SKIPS = ("epochs", "max_epochs", "device", "num_threads", "trees")


def data_digest(ds: RankingDataset | None) -> str:
    """A short hex digest of a dataset (``"none"`` for no dataset); see the module docstring."""
    if ds is None:
        return "none"
    h = hashlib.blake2b(digest_size=12)
    h.update(np.asarray(ds.features.shape, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(ds.labels).tobytes())
    h.update(np.ascontiguousarray(ds.boundaries).tobytes())
    step = max(1, ds.n_docs // 20000)
    h.update(np.ascontiguousarray(ds.features[::step]).tobytes())
    return h.hexdigest()


def run_fingerprint(
    cfg: TrainConfig, train_data: RankingDataset, validation: RankingDataset | None
) -> tuple[str, str]:
    """``(fingerprint, text)``: a hex hash of the run and the JSON text it hashes (shown when a
    checkpoint is refused)."""
    src = {k: v for k, v in cfg.to_dict().items() if k not in FINGERPRINT_SKIPS}
    src["train"] = data_digest(train_data)
    src["validation"] = data_digest(validation)
    text = json.dumps(src, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest(), text
