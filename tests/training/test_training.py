"""The training loop: stopping rule, determinism, resume, model selection, batching, learning."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from ndcglab.errors import NdcglabError, SpecError
from ndcglab.training import TrainConfig, resolve_device, train
from ndcglab.training.checkpoint import CheckpointError

from .conftest import make_ranking_data

FAST = {"epochs": 40, "validation_measure": "ndcg@10", "preset": "letor4"}


def _weights(result) -> np.ndarray:
    return np.concatenate([p.detach().numpy().ravel() for p in result.model.parameters()])


def test_gd_stops_when_the_loss_changes_less_than_tol(split) -> None:
    tr, _ = split
    tol = 1e-3
    r = train(tr, loss="listnet", optimizer="gd", lr=0.5, epochs=500, tol=tol)
    assert r.stop_reason == "converged"
    losses = [h["loss"] for h in r.history]
    assert abs(losses[-1] - losses[-2]) < tol
    assert all(abs(a - b) >= tol for a, b in itertools.pairwise(losses[:-1]))
    assert r.epochs_run < 500
    # without validation the last epoch is kept
    assert r.best_epoch == r.epochs_run and r.best_score is None


def test_max_epochs_cap(split) -> None:
    r = train(split[0], loss="listnet", optimizer="gd", epochs=3, tol=0.0)
    assert r.stop_reason == "max_epochs" and r.epochs_run == 3


@pytest.mark.parametrize("optimizer", ["gd", "adam"])
def test_same_seed_gives_identical_weights(split, optimizer: str) -> None:
    tr, va = split
    kw = dict(
        loss="listmle",
        model="mlp",
        hidden=(8,),
        dropout=0.2,
        optimizer=optimizer,
        lr=0.01,
        batch_size=4,
        batching="random",
        epochs=6,
        seed=5,
    )
    a, b = train(tr, validation=va, **kw), train(tr, validation=va, **kw)
    np.testing.assert_array_equal(_weights(a), _weights(b))
    c = train(tr, validation=va, **{**kw, "seed": 6})
    assert not np.array_equal(_weights(a), _weights(c))


def test_global_rng_is_left_alone(split) -> None:
    torch.manual_seed(123)
    before = torch.get_rng_state().clone()
    train(split[0], loss="listnet", model="mlp", hidden=(4,), epochs=2)
    assert torch.equal(torch.get_rng_state(), before)


@pytest.mark.parametrize("optimizer", ["gd", "adam"])
def test_resume_after_interruption_gives_the_same_result(split, tmp_path, optimizer: str) -> None:
    tr, va = split
    kw = dict(
        loss="listmle",
        model="mlp",
        hidden=(8,),
        dropout=0.1,
        optimizer=optimizer,
        lr=0.02,
        batch_size=4,
        batching="random",
        epochs=8,
        seed=2,
        tol=0.0,
    )
    straight = train(tr, validation=va, **kw)

    class Interrupt(Exception):
        pass

    def stop_at_3(info):
        if info["epoch"] == 3:
            raise Interrupt

    ckpt = tmp_path / "ckpt"
    with pytest.raises(Interrupt):
        train(tr, validation=va, checkpoint_dir=ckpt, callback=stop_at_3, **kw)
    assert (ckpt / "checkpoint.pt").exists()
    seen = []
    resumed = train(
        tr,
        validation=va,
        checkpoint_dir=ckpt,
        resume=True,
        callback=lambda i: seen.append(i["epoch"]),
        **kw,
    )
    assert seen == [4, 5, 6, 7, 8]
    np.testing.assert_array_equal(_weights(resumed), _weights(straight))
    assert resumed.history == [
        {**h, "seconds": r["seconds"]} for h, r in zip(straight.history, resumed.history)
    ]
    assert resumed.best_epoch == straight.best_epoch
    # resuming a finished run changes nothing
    again = train(tr, validation=va, checkpoint_dir=ckpt, resume=True, **kw)
    np.testing.assert_array_equal(_weights(again), _weights(straight))
    # another run's checkpoint is refused
    with pytest.raises(CheckpointError, match="other training options"):
        train(tr, validation=va, checkpoint_dir=ckpt, resume=True, **{**kw, "lr": 0.5})


def test_model_selection_keeps_the_best_validation_epoch(split) -> None:
    tr, va = split
    r = train(
        tr, validation=va, loss="listnet", optimizer="adam", lr=0.3, batch_size=2, epochs=15, seed=0
    )
    valid = [h["valid"] for h in r.history]
    best = int(np.argmax(valid))  # first maximum
    assert r.best_epoch == best + 1
    assert r.best_score == valid[best]
    # the kept weights are those of the best epoch: rescoring the validation set reproduces it
    from ndcglab.measures import MeasureScorer

    scores = r.trained.predict(va)
    assert MeasureScorer("ndcg@10", "letor4").mean(
        va.labels, scores, va.boundaries
    ) == pytest.approx(r.best_score, abs=1e-6)


def test_patience_stops_early(split) -> None:
    tr, va = split
    r = train(
        tr,
        validation=va,
        loss="listnet",
        optimizer="adam",
        lr=0.3,
        batch_size=2,
        epochs=200,
        patience=3,
        seed=0,
    )
    assert r.stop_reason == "early_stopping"
    assert r.epochs_run == r.best_epoch + 3


def test_bucketing_does_not_change_full_batch_gradient_descent(split) -> None:
    """Splitting the full batch into length buckets (gradient accumulation) changes nothing."""
    tr, _ = split
    kw = dict(loss="listnet", optimizer="gd", lr=0.3, epochs=5, tol=0.0, dtype="float64")
    one = train(tr, **kw)
    many = train(tr, max_padded=60, **kw)  # forces many small buckets
    np.testing.assert_allclose(_weights(one), _weights(many), rtol=1e-10, atol=1e-12)
    whole = train(tr, gd_bucket=None, **kw)  # one bucket
    few = train(tr, gd_bucket=3, **kw)
    np.testing.assert_allclose(_weights(one), _weights(whole), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_weights(one), _weights(few), rtol=1e-10, atol=1e-12)


def test_padding_does_not_change_training(split) -> None:
    """The same queries in batches padded differently give the same GD trajectory."""
    tr, _ = split
    kw = dict(loss="listmle", optimizer="gd", lr=0.3, epochs=3, tol=0.0, dtype="float64")
    # a dataset whose queries come in another order pads them with other neighbours
    rev = tr.subset(np.arange(tr.n_queries)[::-1])
    a = train(tr, **kw)
    b = train(rev, **kw)
    # ListMLE's tie-breaking differs with the order, so compare with a tie-free loss as well
    a2, b2 = train(tr, **{**kw, "loss": "listnet"}), train(rev, **{**kw, "loss": "listnet"})
    np.testing.assert_allclose(_weights(a2), _weights(b2), rtol=1e-9, atol=1e-12)
    assert np.isfinite(_weights(a)).all() and np.isfinite(_weights(b)).all()


def test_training_learns(split) -> None:
    """The trained linear model's test NDCG@10 is clearly above random scores' (both measured)."""
    from ndcglab.measures import evaluate

    tr, va = split
    test = make_ranking_data(40, seed=9)
    r = train(tr, validation=va, loss="listnet", optimizer="gd", lr=0.5, epochs=100)
    learned = evaluate(test, r.trained.predict(test), ["ndcg@10"], preset="letor4").mean
    rng = np.random.default_rng(0)
    rand = [
        next(
            iter(
                evaluate(test, rng.random(test.n_docs), ["ndcg@10"], preset="letor4").mean.values()
            )
        )
        for _ in range(5)
    ]
    got = next(iter(learned.values()))
    assert got > max(rand) + 0.15, (got, rand)


@pytest.mark.parametrize("loss", ["listmle", "listnet"])
def test_minibatch_adam_learns_with_both_batchings(split, loss: str) -> None:
    tr, va = split
    for batching in ("bucket", "random"):
        r = train(
            tr,
            validation=va,
            loss=loss,
            optimizer="adam",
            lr=0.05,
            batch_size=8,
            batching=batching,
            epochs=10,
        )
        assert r.best_score > 0.6


def test_uninformative_queries_are_skipped(split) -> None:
    tr, _ = split
    labels = tr.labels.copy()
    labels[tr.boundaries[0] : tr.boundaries[1]] = 1.0  # first query: all one label
    from ndcglab.data import RankingDataset

    ds = RankingDataset(tr.features, labels, tr.boundaries, tr.query_ids)
    r = train(ds, loss="listnet", epochs=1)
    assert r.trained.metadata["n_train_queries_used"] == ds.n_queries - 1
    r = train(ds, loss="listnet", epochs=1, skip_uninformative=False)
    assert r.trained.metadata["n_train_queries_used"] == ds.n_queries


def test_divergence_is_reported(split) -> None:
    with pytest.raises(NdcglabError, match="lower the learning rate"):
        train(split[0], loss="listnet", optimizer="gd", lr=1e38, epochs=20, normalize="none")


def test_bad_options(split) -> None:
    with pytest.raises(SpecError, match="unknown optimizer"):
        TrainConfig(optimizer="sgd")
    with pytest.raises(SpecError, match="unknown normalisation"):
        TrainConfig(normalize="l2")
    with pytest.raises(SpecError, match="boosting"):
        train(split[0], loss="adarank", model="mlp", epochs=1)


def test_device_resolution() -> None:
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(SpecError, match="CUDA is not available"):
            resolve_device("cuda")
    with pytest.raises(SpecError, match="unknown device"):
        resolve_device("tpu9")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu(split) -> None:  # pragma: no cover - needs a GPU
    tr, va = split
    kw = dict(loss="listnet", optimizer="gd", lr=0.3, epochs=5, tol=0.0, dtype="float64")
    cpu = train(tr, validation=va, device="cpu", **kw)
    gpu = train(tr, validation=va, device="cuda", **kw)
    np.testing.assert_allclose(_weights(cpu), _weights(gpu), rtol=1e-6, atol=1e-9)


def test_memory_does_not_grow_with_epochs(split) -> None:
    """The number of live tensors is the same after epoch 3 and after epoch 30."""
    import gc

    tr, va = split
    counts: dict[int, int] = {}

    def count(info):
        if info["epoch"] in (3, 30):
            gc.collect()
            kinds = (torch.Tensor, torch.nn.Parameter)
            counts[info["epoch"]] = sum(1 for o in gc.get_objects() if type(o) in kinds)

    train(
        tr,
        validation=va,
        loss="listnet",
        optimizer="adam",
        lr=0.05,
        batch_size=4,
        epochs=30,
        callback=count,
    )
    assert counts[30] == counts[3]


def test_resume_with_more_epochs_continues(split, tmp_path) -> None:
    """A run that hit its epoch cap can be resumed with a higher cap: same as one longer run."""
    tr, va = split
    kw = dict(loss="listnet", optimizer="adam", lr=0.05, batch_size=4, seed=1)
    long = train(tr, validation=va, epochs=6, **kw)
    train(tr, validation=va, epochs=3, checkpoint_dir=tmp_path, **kw)
    more = train(tr, validation=va, epochs=6, checkpoint_dir=tmp_path, resume=True, **kw)
    np.testing.assert_array_equal(_weights(more), _weights(long))
    assert more.epochs_run == 6


def test_unknown_option(split) -> None:
    with pytest.raises(SpecError, match="unknown training option"):
        train(split[0], learning_rate=0.1)
