"""Dask paths on a local cluster of two worker processes: out-of-core evaluation equals the
single-process numbers on MQ2008 (1e-9), and distributed GBDT training matches single-process
quality. Skips cleanly without dask/distributed or the real data."""

from __future__ import annotations

import gzip
import itertools
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pytest.importorskip("lightgbm")
pytest.importorskip("torch")

from ndcglab.distributed.evaluate import evaluate_letor_dask, evaluate_trec_dask  # noqa: E402
from ndcglab.distributed.train import partition_queries, train_gbdt_dask  # noqa: E402
from ndcglab.gbdt import LossObjective, train_gbdt  # noqa: E402

from . import oracle_losses as S  # noqa: E402

pytestmark = pytest.mark.slow

#: ../shared/data, as tests/conftest.py finds it (module-scoped fixtures cannot use its fixtures)
SHARED_DATA = Path(
    os.environ.get(
        "NDCGLAB_SHARED_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data"
    )
)


@pytest.fixture(scope="module")
def mq2008_all(tmp_path_factory):
    """All of MQ2008 (the five folds' test files = every query once) as one plain LETOR file."""
    src = SHARED_DATA / "MQ2008"
    if not src.exists():
        pytest.skip(f"real data not available: {src}")
    out = tmp_path_factory.mktemp("mq") / "mq2008.txt"
    with open(out, "wb") as f:
        for k in range(1, 6):
            with gzip.open(src / f"Fold{k}" / "test.txt.gz", "rb") as g:
                shutil.copyfileobj(g, f)
    return out


def _scores(ds):
    """Deterministic scores with many ties (rounded), so tie rules matter."""
    x = np.nan_to_num(ds.features)
    return np.round(x[:, 0] * 3 + x[:, 10] - x[:, 20], 1).astype(np.float64)


# ----------------------------------------------------------------------------- no cluster needed
def test_partition_queries_never_splits_and_balances():
    _, _, b = S.random_lists(0, n_queries=100, max_len=50)
    parts = partition_queries(b, 4)
    assert parts[0][0] == 0 and parts[-1][1] == 100
    assert all(a[1] == c[0] for a, c in itertools.pairwise(parts))  # contiguous, whole queries
    docs = [b[q1] - b[q0] for q0, q1 in parts]
    assert max(docs) - min(docs) <= 2 * 50
    assert partition_queries(b, 1) == [(0, 100)]


def test_local_gradients_are_global_when_queries_are_whole():
    y, s, b = S.random_lists(1, n_queries=40, max_len=30)
    whole = LossObjective(S.ListNet()).bind(y, b).grad_hess(s)
    pieces = []
    for q0, q1 in partition_queries(b, 3):
        lo, hi = b[q0], b[q1]
        pieces.append(
            LossObjective(S.ListNet()).bind(y[lo:hi], b[q0 : q1 + 1] - lo).grad_hess(s[lo:hi])
        )
    np.testing.assert_array_equal(np.concatenate([p[0] for p in pieces]), whole[0])
    np.testing.assert_array_equal(np.concatenate([p[1] for p in pieces]), whole[1])


# ----------------------------------------------------------------------------- evaluation
def test_letor_evaluation_equals_single_process(client, mq2008_all, tmp_path):
    from ndcglab.data import read_letor
    from ndcglab.measures import evaluate

    ds = read_letor(mq2008_all)
    scores = _scores(ds)
    np.savetxt(tmp_path / "scores.txt", scores, fmt="%.17g")
    ref = evaluate(ds, scores, preset="letor4")  # the preset's measures (NDCG@1..10, P, MAP ...)
    # 256 KiB blocks: ~50 blocks, so ~50 queries are cut between two blocks
    got = evaluate_letor_dask(
        mq2008_all, tmp_path / "scores.txt", preset="letor4", client=client, blocksize=1 << 18
    )
    assert got.convention["partitions"] > 20
    assert list(got.query_ids) == list(ref.query_ids)
    assert got.per_query.keys() == ref.per_query.keys()
    for name in ref.per_query:
        np.testing.assert_allclose(got.per_query[name], ref.per_query[name], rtol=0, atol=1e-9)
        assert abs(got.mean[name] - ref.mean[name]) <= 1e-9, name
    assert got.empty_queries == ref.empty_queries == 220


def test_trec_run_evaluation_equals_single_process(client, mq2008_all, tmp_path):
    from ndcglab.data import dataset_to_qrels, read_letor, read_qrels, read_run, write_run
    from ndcglab.measures import evaluate_trec

    ds = read_letor(mq2008_all)
    qrels = dataset_to_qrels(ds)
    run_path = tmp_path / "run.txt"
    write_run(run_path, ds, _scores(ds))
    lines = run_path.read_text().splitlines(keepends=True)
    rng = np.random.default_rng(0)
    shuffled = tmp_path / "run_shuffled.txt"  # queries no longer contiguous
    shuffled.write_text("".join(lines[i] for i in rng.permutation(len(lines))))
    measures = ["ndcg@10", "ndcg", "map", "p@5", "mrr"]
    ref = evaluate_trec(qrels, read_run(run_path), measures)
    got = evaluate_trec_dask(
        qrels, shuffled, measures, client=client, blocksize=1 << 15, n_partitions=5
    )
    assert list(got.query_ids) == list(ref.query_ids)
    for name in ref.per_query:
        np.testing.assert_allclose(got.per_query[name], ref.per_query[name], rtol=0, atol=1e-9)
        assert abs(got.mean[name] - ref.mean[name]) <= 1e-9
    # the qrels may also come from a file
    qpath = tmp_path / "qrels.txt"
    qpath.write_text(
        "".join(f"{q} 0 {d} {int(r)}\n" for q, docs in qrels.items() for d, r in docs.items())
    )
    assert read_qrels(qpath) == {q: {d: float(r) for d, r in v.items()} for q, v in qrels.items()}
    again = evaluate_trec_dask(qpath, run_path, measures, client=client, n_partitions=3)
    assert again.mean == pytest.approx(ref.mean, abs=1e-12)


# ----------------------------------------------------------------------------- training
def test_distributed_training_matches_single_process_quality(client):
    fold = SHARED_DATA / "MQ2008" / "Fold1"
    if not fold.exists():
        pytest.skip(f"real data not available: {fold}")
    from ndcglab.data import read_letor
    from ndcglab.measures import evaluate

    train, test = read_letor(fold / "train.txt.gz"), read_letor(fold / "test.txt.gz")
    settings = {
        "num_boost_round": 30,
        "learning_rate": 0.1,
        "num_leaves": 15,
        "min_data_in_leaf": 20,
    }
    dist = train_gbdt_dask(train, "listnet", client=client, network_timeout=90, **settings)
    # a stalled peer fails the run after 2 minutes (90 s rounded up), not LightGBM's 2 hours
    assert dist.metadata["params"]["time_out"] == 2
    single = train_gbdt(train, "listnet", early_stopping_rounds=None, num_threads=1, **settings)
    assert dist.metadata["training"]["partitions"] == 2
    assert dist.booster.current_iteration() == 30
    n_dist = evaluate(test, dist.predict(test), ["ndcg@10", "map"], preset="letor4").mean
    n_single = evaluate(test, single.predict(test), ["ndcg@10", "map"], preset="letor4").mean
    rng = np.random.default_rng(0)
    n_random = evaluate(test, rng.normal(size=test.n_docs), ["ndcg@10"], preset="letor4").mean
    # same quality within noise (fold-to-fold differences between objectives are ~0.01)
    assert abs(n_dist["ndcg@10"] - n_single["ndcg@10"]) < 0.02, (n_dist, n_single)
    assert abs(n_dist["map"] - n_single["map"]) < 0.02
    assert n_dist["ndcg@10"] > n_random["ndcg@10"] + 0.03


def test_dask_means_follow_each_measure_rule(client, tmp_path):
    """gm_map's mean is geometric; partitions must combine it as the single process does."""
    from ndcglab.data import make_synthetic, write_svmlight
    from ndcglab.measures import evaluate

    ds = make_synthetic("default", seed=4)
    write_svmlight(tmp_path / "d.txt", ds)
    scores = np.round(ds.features[:, 0] + ds.features[:, 1], 1)
    np.savetxt(tmp_path / "scores.txt", scores, fmt="%.17g")
    measures = ["gm_map", "map", "ndcg@10"]
    ref = evaluate(ds, scores, measures)
    got = evaluate_letor_dask(
        tmp_path / "d.txt", tmp_path / "scores.txt", measures, client=client, blocksize=1 << 16
    )
    assert got.convention["partitions"] > 2
    for name in ref.mean:
        assert abs(got.mean[name] - ref.mean[name]) <= 1e-9, name
    # the geometric mean differs from the arithmetic mean of the same per-query logs
    assert abs(ref.mean["gm_map"] - float(np.nanmean(ref.per_query["gm_map"]))) > 1e-3


def test_a_stalled_broadcast_falls_back_to_the_task_graph(client, tmp_path, monkeypatch):
    # distributed's scatter(broadcast=True) can stall on a loaded machine; ndcglab then ships the
    # object with the tasks instead, with the same numbers (here every scatter "times out")
    from ndcglab import _compat
    from ndcglab.data import dataset_to_qrels, make_synthetic, read_run, write_run
    from ndcglab.distributed.evaluate import evaluate_trec_dask
    from ndcglab.measures import evaluate_trec

    calls = []

    def stalled(value, **kw):
        calls.append(kw.get("timeout"))
        raise TimeoutError("scatter did not finish")

    ds = make_synthetic("small", seed=1)
    qrels = dataset_to_qrels(ds)
    run_path = tmp_path / "run.txt"
    write_run(run_path, ds, np.round(ds.features[:, 0], 1))
    measures = ["ndcg@10", "map", "p@5"]
    ref = evaluate_trec(qrels, read_run(run_path), measures)
    monkeypatch.setattr(client, "scatter", stalled)
    got = evaluate_trec_dask(qrels, run_path, measures, client=client, n_partitions=3)
    assert calls == [_compat.BROADCAST_TIMEOUT]
    assert list(got.query_ids) == list(ref.query_ids)
    for name in ref.per_query:
        np.testing.assert_allclose(got.per_query[name], ref.per_query[name], rtol=0, atol=1e-12)


def test_the_same_data_trains_twice_on_one_client(client):
    """Two trainings on equal data with one client: each scatter has keys of its own (with
    distributed's default hashed keys the second scatter reused the first's, whose release
    then cancelled the second training with "lost dependencies")."""
    from ndcglab.data import make_synthetic

    train = make_synthetic("small", seed=3)
    settings = {"num_boost_round": 3, "num_leaves": 7, "min_data_in_leaf": 5, "network_timeout": 60}
    for _ in range(3):
        model = train_gbdt_dask(train, "listnet", client=client, **settings)
        assert model.booster.current_iteration() == 3


def test_a_stalled_scatter_ships_the_blocks_with_the_tasks(client, monkeypatch):
    """distributed's scatter can stall for good (dask/distributed issue 4907): after
    ``BROADCAST_TIMEOUT`` the training blocks go with the tasks instead. Data-parallel trees
    depend on which worker holds which block, so the model is compared by its quality."""
    from ndcglab import _compat
    from ndcglab.data import make_synthetic
    from ndcglab.measures import evaluate

    train, test = make_synthetic("default", seed=3), make_synthetic("default", seed=4)
    settings = {"num_boost_round": 10, "learning_rate": 0.1, "network_timeout": 60}
    ref = train_gbdt_dask(train, "listnet", client=client, **settings)
    calls = []

    def stalled(value, **kw):
        calls.append(kw.get("timeout"))
        raise TimeoutError("scatter did not finish")

    monkeypatch.setattr(client, "scatter", stalled)
    got = train_gbdt_dask(train, "listnet", client=client, **settings)
    assert calls == [_compat.BROADCAST_TIMEOUT]
    for key in ("partitions", "partition_docs"):
        assert got.metadata["training"][key] == ref.metadata["training"][key]
    assert got.booster.current_iteration() == 10

    def ndcg(model) -> float:
        return evaluate(test, model.predict(test), ["ndcg@10"]).mean["ndcg@10"]

    rng = np.random.default_rng(0)
    chance = evaluate(test, rng.normal(size=test.n_docs), ["ndcg@10"]).mean["ndcg@10"]
    assert abs(ndcg(got) - ndcg(ref)) < 0.03 and ndcg(got) > chance + 0.1


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "soon"])
def test_a_network_timeout_that_is_not_a_positive_number_is_refused(bad):
    from ndcglab.data import make_synthetic
    from ndcglab.errors import SpecError

    train = make_synthetic("small", seed=3)
    with pytest.raises(SpecError, match="network_timeout must be a positive number of seconds"):
        train_gbdt_dask(train, "listnet", network_timeout=bad)
