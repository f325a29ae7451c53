"""Fixtures of the boosting tests: one local Dask cluster per module that asks for it."""

from __future__ import annotations

import warnings

import pytest


@pytest.fixture(scope="module")
def client():
    """A ``distributed.Client`` on a local cluster of 2 single-thread worker processes, closed
    with the module (skips where Dask's ``distributed`` is not installed)."""
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        )
        c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()
