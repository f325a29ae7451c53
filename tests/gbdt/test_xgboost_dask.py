"""XGBoost with our objectives on Dask (``xgboost.dask``): blocks of whole queries, each
document's local gradient equal to its global one, and distributed training as good as
single-process training. Skips cleanly without dask/distributed/xgboost."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pytest.importorskip("xgboost")
pytest.importorskip("torch")

import xgboost as xgb  # noqa: E402

from ndcglab.data import load_dataset  # noqa: E402
from ndcglab.distributed.train import partition_queries  # noqa: E402
from ndcglab.distributed.xgboost_train import train_xgboost_dask, xgboost_valid_curve  # noqa: E402
from ndcglab.gbdt.xgboost_objective import XGBoostObjective  # noqa: E402
from ndcglab.gbdt.xgboost_train import train_xgboost  # noqa: E402
from ndcglab.measures import evaluate_arrays  # noqa: E402


def _dmatrix(ds, lo, hi, q0, q1):
    x = np.zeros((hi - lo, 1), dtype=np.float32)
    return xgb.DMatrix(x, label=ds.labels[lo:hi], group=ds.query_lengths[q0:q1])


def test_local_gradients_of_whole_query_blocks_are_the_global_ones() -> None:
    """What makes the distributed objective exact: the derivatives computed on a worker's block
    of whole queries are that block's slice of the derivatives over all the data."""
    ds = load_dataset("synthetic:default:4")
    s = np.random.default_rng(1).normal(size=ds.n_docs)
    b = ds.boundaries
    g_all, h_all = XGBoostObjective("cs_listmle@10")(s, _dmatrix(ds, 0, ds.n_docs, 0, ds.n_queries))
    blocks = partition_queries(b, 3)
    assert len(blocks) == 3
    for q0, q1 in blocks:
        lo, hi = int(b[q0]), int(b[q1])
        g, h = XGBoostObjective("cs_listmle@10")(s[lo:hi], _dmatrix(ds, lo, hi, q0, q1))
        # equal up to the rounding of sums over padded rows of another width
        np.testing.assert_allclose(g, g_all[lo:hi], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h, h_all[lo:hi], rtol=1e-12, atol=1e-15)


@pytest.mark.slow
def test_distributed_training_matches_single_process_quality(client, monkeypatch) -> None:
    train = load_dataset("synthetic:default:1")
    valid = load_dataset("synthetic:default:2")
    test = load_dataset("synthetic:default:3")
    import xgboost.dask as dxgb

    seen, real_train = [], dxgb.train

    def spy(*args, coll_cfg=None, **kw):
        seen.append(coll_cfg)
        return real_train(*args, coll_cfg=coll_cfg, **kw)

    monkeypatch.setattr(dxgb, "train", spy)
    model = train_xgboost_dask(
        train, "listnet", client=client, num_boost_round=20, valid=valid, learning_rate=0.1,
        network_timeout=59.5,
    )  # fmt: skip
    # a stalled peer fails a collective operation after 60 s instead of hanging for good
    assert [(c.timeout, c.tracker_timeout) for c in seen] == [(60, 60)]
    assert model.metadata["training"]["partitions"] == 2
    single = train_xgboost(
        train,
        "listnet",
        num_boost_round=20,
        learning_rate=0.1,
        num_threads=1,
        early_stopping_rounds=None,
        valid=valid,
    )
    # the round chosen from the same curve computation as single-process early stopping
    curve = model.metadata["training"]["valid_curve"]
    assert curve == xgboost_valid_curve(model.booster, valid)
    assert model.best_iteration == int(np.argmax(curve)) + 1

    def ndcg(m) -> float:
        res = evaluate_arrays(test.labels, m.predict(test), test.boundaries, ["ndcg@10"])
        return float(next(iter(res.mean.values())))

    assert abs(ndcg(model) - ndcg(single)) < 0.03
    assert ndcg(model) > 0.6


@pytest.mark.parametrize("bad", [0, -2, float("nan"), "soon"])
def test_a_network_timeout_that_is_not_a_positive_number_is_refused(bad) -> None:
    from ndcglab.errors import SpecError

    with pytest.raises(SpecError, match="network_timeout must be a positive number of seconds"):
        train_xgboost_dask(load_dataset("synthetic:small:1"), "listnet", network_timeout=bad)
