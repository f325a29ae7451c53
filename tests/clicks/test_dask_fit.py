"""``clicks fit --dask`` and ``train --clicks LOG --dask``: a Parquet log of several row groups is
summed per row group on a local Dask cluster (threads, two workers), and what is fitted from the
sums — PBM and trust click models, swap/harvest propensities, the click labels of naive, ips,
snips, affine and dr — equals what the in-memory path gives on the whole log; what needs sessions
is one error line before any cluster starts."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

from ndcglab.clicks import read_log_stats, write_log
from ndcglab.clicks.click_models import fit_click_model
from ndcglab.clicks.learn import click_labels, click_statistics, statistics_from_counts
from ndcglab.clicks.propensity import estimate_propensities
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.data import load_dataset

from ..test_cli_safety import ndcglab

DATA = "synthetic:default"
K = 5
CHUNK = 500


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=False,
            protocol="tcp://",
            dashboard_address=":0",
        ) as lc,
        Client(lc) as client,
    ):
        yield client, lc.scheduler_address


def _write(ds, tmp, name, policy, model="trust(eta=1,pos=1,neg=0.65)"):
    chunks = [
        simulate_clicks(ds, model, policy, CHUNK, k=K, seed=7, first_session=CHUNK * i)
        for i in range(3)
    ]
    whole = simulate_clicks(ds, model, policy, 3 * CHUNK, k=K, seed=7)
    path = tmp / name
    write_log(iter(chunks), path)
    return path, whole


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    ds = load_dataset(DATA)
    tmp = tmp_path_factory.mktemp("dask_fit")
    noisy = ds.labels + np.random.default_rng(0).normal(0, 1, ds.n_docs)
    pl = _write(ds, tmp, "pl.parquet", make_policy(noisy, "pl"))
    det = _write(ds, tmp, "det.parquet", make_policy(noisy, "deterministic"))
    return ds, pl, det


@pytest.mark.timeout(120)
@pytest.mark.parametrize("spec", ["pbm(iterations=60)", "trust(iterations=60)"])
def test_click_models_fitted_from_dask_sums_equal_the_in_memory_fit(cluster, logs, spec):
    import pyarrow.parquet as pq

    _, (path, whole), _ = logs
    assert pq.ParquetFile(path).num_row_groups == 3
    summed = read_log_stats(path, client=cluster[0])
    got, want = fit_click_model(summed, spec), fit_click_model(whole, spec)
    for name in ("attractiveness", "examination", "trust_pos", "trust_neg"):
        a, b = getattr(got, name), getattr(want, name)
        if b is not None:
            np.testing.assert_array_equal(a, b)
    assert got.log_likelihood == want.log_likelihood
    np.testing.assert_array_equal(got.perplexity, want.perplexity)
    assert got.iterations == want.iterations


@pytest.mark.timeout(120)
@pytest.mark.parametrize("method", ["swap", "harvest"])
def test_propensities_from_dask_sums_equal_the_in_memory_estimate(cluster, logs, method):
    _, (path, whole), _ = logs
    summed = read_log_stats(path, client=cluster[0])
    np.testing.assert_array_equal(
        estimate_propensities(summed, method), estimate_propensities(whole, method)
    )


@pytest.mark.timeout(120)
@pytest.mark.parametrize("estimator", ["naive", "ips", "snips", "affine", "dr"])
def test_click_labels_from_dask_sums(cluster, logs, estimator):
    """Equal to the labels of the whole log's counts; and, under a deterministic logging policy
    (where the observed share I_dj / N_q is the logged propensity, 1), to the labels of the
    in-memory log path, which reads the logged propensities."""
    ds, (pl_path, pl_whole), (det_path, det_whole) = logs
    alpha, beta = np.array(pl_whole.meta["alpha"]), np.array(pl_whole.meta["beta"])
    opts = {
        "estimator": estimator,
        "examination": alpha,
        "trust_offset": beta,
        "features": ds.features,
    }
    for path, whole in ((pl_path, pl_whole), (det_path, det_whole)):
        summed = statistics_from_counts(read_log_stats(path, client=cluster[0]), ds)
        here = statistics_from_counts(whole.stats(), ds)
        np.testing.assert_array_equal(click_labels(summed, **opts), click_labels(here, **opts))
    summed = statistics_from_counts(read_log_stats(det_path, client=cluster[0]), ds)
    np.testing.assert_allclose(
        click_labels(summed, **opts),
        click_labels(click_statistics(det_whole, ds), **opts),
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_command_line_fit_and_train_on_dask_equal_the_in_memory_commands(cluster, logs):
    """``clicks fit LOG --dask`` prints the in-memory fit; ``train --clicks LOG --estimator
    affine --examination FIT.json --dask`` trains the model the library trains on the labels of
    the whole log's counts (as ``train --clicks STATS`` does)."""
    import dataclasses

    from ndcglab.training import fit, load_trained

    ds, (path, whole), _ = logs
    cwd, address = path.parent, cluster[1]
    spec = "trust(iterations=40)"
    there = ndcglab("clicks", "fit", path.name, "--click-model", spec, "--format", "json",
                    "--dask", address, "-q", "--out", "fit.json", cwd=cwd)  # fmt: skip
    assert there.returncode == 0, there.stderr
    b = json.loads(there.stdout)
    want = fit_click_model(whole, spec)
    alpha, beta = want.affine()
    assert b["alpha"] == alpha.tolist() and b["beta"] == beta.tolist()
    assert b["log_likelihood"] == want.log_likelihood and b["sessions"] == whole.n_sessions
    on_dask = ndcglab("train", DATA, "--clicks", path.name, "--dask", address, "--estimator",
                      "affine", "--examination", "fit.json", "--model", "linear", "--loss",
                      "squared", "--epochs", "2", "-q", "--format", "json", "--out", "m.zip",
                      cwd=cwd)  # fmt: skip
    assert on_dask.returncode == 0, on_dask.stderr
    info = json.loads(on_dask.stdout)["clicks"]
    assert info["trust_offset"] == b["beta"] and info["examination"] == b["alpha"]
    labels = click_labels(
        statistics_from_counts(whole.stats(), ds),
        estimator="affine",
        examination=alpha,
        trust_offset=beta,
    )
    lib = fit(dataclasses.replace(ds, labels=labels), loss="squared(gain=linear)", epochs=2)
    np.testing.assert_allclose(
        load_trained(cwd / "m.zip").predict(ds), lib.predict(ds), rtol=1e-6, atol=1e-6
    )


def _one_error(res) -> str:
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("ndcglab: ")]
    assert res.returncode != 0 and len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr
    return lines[0]


@pytest.mark.timeout(120)
def test_what_needs_sessions_is_one_error_line_before_any_cluster(logs):
    """(An address nothing listens on: the command must refuse before it connects.)"""
    _, (path, _), _ = logs
    cwd, nowhere = path.parent, "tcp://127.0.0.1:9"
    line = _one_error(ndcglab("clicks", "fit", path.name, "--click-model", "dbn", "--dask",
                              nowhere, cwd=cwd))  # fmt: skip
    assert "dbn reads whole sessions" in line and "Fix:" in line
    line = _one_error(ndcglab("clicks", "fit", path.name, "--propensity", "randtop", "--dask",
                              nowhere, cwd=cwd))  # fmt: skip
    assert "--propensity randtop reads the logs' rows" in line
    line = _one_error(ndcglab("train", DATA, "--clicks", path.name, "--estimator", "dla",
                              "--dask", nowhere, "--out", "m.json", cwd=cwd))  # fmt: skip
    assert "--estimator dla needs the sessions" in line
    line = _one_error(ndcglab("train", DATA, "--clicks", path.name, "--estimator", "ips",
                              "--dask", nowhere, "--out", "m.json", cwd=cwd))  # fmt: skip
    assert "the examination is needed" in line
    line = _one_error(ndcglab("clicks", "fit", path.name, "--dask", "local:1",
                              "--dask-memory-limit", "1MB", cwd=cwd))  # fmt: skip
    assert "--dask-memory-limit 1MB" in line and "Fix:" in line
