"""Sufficient statistics of a Parquet click log summed per partition (row group) on a local Dask
cluster of 2 workers equal the in-memory statistics of the whole log; a bad row is still one
error naming the file and its row in the whole file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from ndcglab.clicks import read_log_stats, write_log
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.data import load_dataset
from ndcglab.errors import DataFormatError

from ..test_cli_safety import ndcglab

DATA = "synthetic:default"


@pytest.fixture(scope="module")
def client():
    from ndcglab.distributed.cluster import dask_client

    with dask_client("local:2", quiet=True, timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def chunked(tmp_path_factory):
    ds = load_dataset(DATA)
    policy = make_policy(ds.labels + np.random.default_rng(0).normal(0, 1, ds.n_docs), "pl")
    chunks = [
        simulate_clicks(ds, "dbn(gamma=0.9)", policy, 400, k=5, seed=3, first_session=400 * i)
        for i in range(4)
    ]
    whole = simulate_clicks(ds, "dbn(gamma=0.9)", policy, 1600, k=5, seed=3)
    path = tmp_path_factory.mktemp("dask_stats") / "log.parquet"
    write_log(iter(chunks), path)
    return path, whole


@pytest.mark.timeout(120)
def test_partition_sums_on_dask_equal_the_in_memory_statistics(client, chunked):
    path, whole = chunked
    import pyarrow.parquet as pq

    assert pq.ParquetFile(path).num_row_groups == 4  # four partitions, counted on the workers
    got = read_log_stats(path, client=client)
    want = whole.stats()
    for name in ("query", "doc", "position", "impressions", "clicks"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    assert got.k == want.k and list(got.qids) == list(want.qids)


@pytest.mark.timeout(120)
def test_a_bad_row_on_a_worker_is_named_in_the_whole_file(client, chunked, tmp_path: Path):
    _, whole = chunked
    pos = whole.position.copy()
    pos[1600 * 5 // 2] = 9  # a position past k, mid-file (not in the first partition)
    bad = whole.take(np.arange(len(whole)))
    bad = type(bad)(**{**bad.__dict__, "position": pos})
    parts = [bad.take((bad.session >= 400 * i) & (bad.session < 400 * (i + 1))) for i in range(4)]
    write_log(iter(parts), tmp_path / "bad.parquet")
    with pytest.raises(DataFormatError) as dask_err:
        read_log_stats(tmp_path / "bad.parquet", client=client)
    with pytest.raises(DataFormatError) as here_err:
        read_log_stats(tmp_path / "bad.parquet")
    assert str(dask_err.value) == str(here_err.value)
    assert f"row {1600 * 5 // 2 + 1}" in str(here_err.value)


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_command_line_sums_a_log_on_dask_into_a_statistics_file(chunked):
    from ndcglab.clicks import read_stats

    path, whole = chunked
    cwd = path.parent
    run = ndcglab("clicks", "stats", path.name, "--out", "s.npz", "--dask", "local:2", "--quiet",
                  cwd=cwd)  # fmt: skip
    assert run.returncode == 0, run.stderr
    got, want = read_stats(cwd / "s.npz"), whole.stats()
    for name in ("query", "doc", "position", "impressions", "clicks"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    bad = ndcglab("clicks", "stats", path.name, "--out", "t.npz", "--dask", "foo://x", cwd=cwd)
    lines = [ln for ln in bad.stderr.splitlines() if ln.strip()]
    assert bad.returncode != 0 and len(lines) == 1 and "unknown scheme 'foo'" in lines[0]
    assert not (cwd / "t.npz").exists()
