"""Clicks: simulated and logged user clicks, click models, propensities, and NDCG from clicks.

Importing :mod:`ndcglab.clicks` is cheap: it loads the log types (:mod:`ndcglab.clicks.logs`,
NumPy only); the simulator, the click models and the estimators are imported on first use of
their names (``ndcglab.clicks.simulate`` ...), so numba, pyarrow or torch load only then.

* :mod:`~ndcglab.clicks.logs` — :class:`ClickLog` (one row per shown document), :class:`ClickStats`
  (impressions and clicks per query × document × position), :func:`read_log`, :func:`write_log`,
  :func:`validate_log`.
* :mod:`~ndcglab.clicks.simulate` — click models (PBM, cascade, DCM, DBN/SDBN, UBM, trust bias)
  and logging policies; :func:`simulate_clicks`.
* :mod:`~ndcglab.clicks.click_models` — click models fitted to logs by EM / maximum likelihood.
* :mod:`~ndcglab.clicks.propensity` — position-bias propensities: from the simulator, result
  randomisation, intervention harvesting, regression EM.
"""

from __future__ import annotations

import importlib
from typing import Any

from .logs import (
    LOG_COLUMNS,
    STATS_COLUMNS,
    ClickLog,
    ClickStats,
    aligned_to,
    concat_logs,
    merge_stats,
    read_log,
    read_log_stats,
    read_stats,
    validate_log,
    write_log,
    write_stats,
)

__all__ = [
    "LOG_COLUMNS",
    "STATS_COLUMNS",
    "ClickLog",
    "ClickStats",
    "aligned_to",
    "concat_logs",
    "merge_stats",
    "read_log",
    "read_log_stats",
    "read_stats",
    "validate_log",
    "write_log",
    "write_stats",
]

#: sub-modules loaded on first access (``ndcglab.clicks.simulate`` ...)
_LAZY_MODULES = frozenset(
    {
        "simulate",
        "click_models",
        "propensity",
        "estimators",
        "learn",
        "pairwise_debias",
        "unbiased_lambdamart",
        "baselines",
        "experiment",
    }
)


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
