"""The attention kind through the generic front doors (``training.fit``, ``cross_validate``,
``ndcglab train``, ``NDCGRanker``), checkpoints and resume, and the DASALC options
(``log1p_zscore``, ``noise``, ``ensemble``)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("torch")

from ndcglab.data import Normalizer
from ndcglab.errors import SpecError
from ndcglab.estimator import NDCGRanker, load_trained
from ndcglab.training import TrainConfig, fit
from ndcglab.training.crossval import cross_validate

from .conftest import make_ranking_data

#: a small attention model, a few epochs (every option set away from its default)
OPTS = {
    "model": "attention",
    "epochs": 3,
    "hidden": (8,),
    "heads": 2,
    "blocks": 1,
    "ff_width": 12,
    "dropout": 0.1,
    "layer_norm": "post",
    "input_norm": True,
    "seed": 4,
    "lr": 0.01,
}
CLI_OPTS = ["--model", "attention", "--epochs", "3", "--hidden", "8", "--heads", "2",
            "--blocks", "1", "--ff-width", "12", "--dropout", "0.1", "--layer-norm", "post",
            "--input-norm", "--seed", "4", "--lr", "0.01"]  # fmt: skip


@pytest.fixture(scope="module")
def small():
    data = make_ranking_data(24, 5, seed=3, max_len=15)
    q = data.n_queries
    return data.subset(np.arange(q - 8)), data.subset(np.arange(q - 8, q))


def test_fit_trains_and_scores_the_attention_kind(small):
    train, valid = small
    result = fit(train, TrainConfig(**OPTS), validation=valid)
    model = result.model
    assert model.kind == "attention" and model.listwise
    assert model.config()["hidden"] == [8] and model.config()["layer_norm"] == "post"
    scores = result.predict(valid)
    assert scores.shape == (valid.n_docs,) and np.isfinite(scores).all()
    # a query's scores are those of the query scored alone (no batch effect at prediction)
    b = valid.boundaries
    alone = np.concatenate(
        [result.predict(valid.subset(np.array([i]))) for i in range(valid.n_queries)]
    )
    np.testing.assert_allclose(scores, alone, rtol=0, atol=1e-6)
    assert len(result.history) == 3 and result.best_score is not None
    assert b[-1] == valid.n_docs


def test_ndcgranker_gives_the_front_doors_predictions(small):
    train, valid = small
    want = fit(train, TrainConfig(**OPTS)).predict(valid)
    ranker = NDCGRanker(**OPTS).fit(train.features, train.labels, group=np.diff(train.boundaries))
    got = ranker.predict(valid.features, group=np.diff(valid.boundaries))
    np.testing.assert_array_equal(got, want)


@pytest.mark.slow
def test_cli_train_gives_the_front_doors_model(small, tmp_path):
    train, _ = small
    from ndcglab.data.writers import write_svmlight

    path = tmp_path / "train.txt"
    write_svmlight(path, train)
    out = tmp_path / "m.ndcglab"
    proc = subprocess.run(
        [sys.executable, "-m", "ndcglab.cli.main", "train", str(path), "--out", str(out),
         "--quiet", *CLI_OPTS],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    from ndcglab.data import read_letor

    data = read_letor(path)
    want = fit(data, TrainConfig(**OPTS)).predict(data)
    np.testing.assert_array_equal(load_trained(out).predict(data), want)


def test_cli_refuses_bad_attention_options_in_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "ndcglab.cli.main", "train", "synthetic:small", "--out",
         str(tmp_path / "m"), "--model", "attention", "--hidden", "10", "--heads", "3", "-q"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error:"), proc.stderr
    assert "heads" in lines[0] and "Traceback" not in proc.stderr


def test_resume_continues_bit_for_bit(small, tmp_path):
    train, valid = small
    cfg = TrainConfig(**{**OPTS, "epochs": 4, "noise": 0.2})
    straight = fit(train, cfg, validation=valid)
    fit(train, dataclasses.replace(cfg, epochs=2), validation=valid, checkpoint_dir=tmp_path)
    resumed = fit(train, cfg, validation=valid, checkpoint_dir=tmp_path, resume=True)
    np.testing.assert_array_equal(resumed.predict(valid), straight.predict(valid))
    assert [h["loss"] for h in resumed.history] == [h["loss"] for h in straight.history]


def test_cross_validate_runs_the_attention_kind(small):
    train, valid = small
    fold = SimpleNamespace(name="Fold1", train=train, vali=valid, test=valid)
    cfg = TrainConfig(**{**OPTS, "epochs": 1})
    runs = {"attention": cfg, "mlp": TrainConfig(model="mlp", epochs=1)}
    res = cross_validate([fold], runs, measures=["ndcg@10"])
    assert all(r.evaluation is not None for r in res.results)


def test_noise_augmentation(small):
    train, valid = small
    base = fit(train, TrainConfig(**OPTS)).predict(valid)
    zero = fit(train, TrainConfig(**OPTS, noise=0.0)).predict(valid)
    noisy = fit(train, TrainConfig(**OPTS, noise=0.5)).predict(valid)
    again = fit(train, TrainConfig(**OPTS, noise=0.5)).predict(valid)
    np.testing.assert_array_equal(base, zero)
    np.testing.assert_array_equal(noisy, again)  # seeded
    assert np.abs(noisy - base).max() > 1e-4
    with pytest.raises(SpecError, match="noise"):
        TrainConfig(noise=-1.0)


def test_an_ensemble_is_the_mean_of_its_seeds(small, tmp_path):
    train, valid = small
    result = fit(train, TrainConfig(**OPTS, ensemble=3), validation=valid)
    members = [
        fit(train, TrainConfig(**{**OPTS, "seed": OPTS["seed"] + i}), validation=valid)
        for i in range(3)
    ]
    mean = np.mean([m.predict(valid) for m in members], axis=0)
    np.testing.assert_allclose(result.predict(valid), mean, rtol=0, atol=1e-6)
    assert result.trained.metadata["ensemble_seeds"] == [4, 5, 6]
    back = load_trained(result.trained.save(tmp_path / "e.ndcglab"))
    np.testing.assert_array_equal(back.predict(valid), result.predict(valid))
    assert back.model.kind == "attention" and len(back.model.config()["ensemble"]) == 3
    with pytest.raises(SpecError, match="ensemble"):
        fit(train, TrainConfig(model="gbdt", ensemble=2))


def test_log1p_zscore_is_the_sign_preserving_log_then_standardised():
    rng = np.random.default_rng(0)
    x = (rng.normal(size=(50, 4)) * np.array([1, 10, 100, 1000])).astype(np.float32)
    norm = Normalizer.fit("log1p_zscore", x)
    t = [[np.sign(v) * np.log(1 + abs(v)) for v in row] for row in x.astype(np.float64)]
    t = np.array(t)
    want = (t - t.mean(axis=0)) / t.std(axis=0)
    np.testing.assert_allclose(norm.transform(x), want, rtol=1e-5, atol=1e-5)
    assert np.allclose(norm.mean, t.mean(axis=0)) and np.allclose(norm.scale, t.std(axis=0))


def test_cuda_training_scores_as_the_cpu_model_does(small):
    """On a machine with CUDA: trained there, the model file's CPU scores equal the scores the
    same weights give on the GPU; and device='auto' picks CUDA."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    train, valid = small
    result = fit(train, TrainConfig(**OPTS, device="auto", noise=0.1), validation=valid)
    cpu = result.predict(valid)
    model = result.model.to("cuda")
    x = result.trained.transform(valid)
    gpu = model.predict(x, boundaries=valid.boundaries)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5, atol=1e-5)
