"""``ndcglab train DATA --clicks LOG --estimator ...`` as a user runs it: the model equals the
library's :func:`ndcglab.clicks.learn.fit_clicks` with the same options, and bad inputs are one
error line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ndcglab.clicks import ClickLog, write_log
from ndcglab.clicks.learn import fit_clicks
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.data import load_dataset
from ndcglab.training import load_trained

from ..test_cli_safety import ndcglab

DATA = "synthetic:default"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train_clicks")
    ds = load_dataset(DATA)
    scores = ds.labels + np.random.default_rng(0).normal(0, 1, ds.n_docs)
    log = simulate_clicks(
        ds, "trust(eta=1)", make_policy(scores, "pl(temperature=1)"), 3000, k=5, seed=2
    )
    write_log(log, tmp / "log.npz")
    return tmp, ds, log


@pytest.mark.parametrize("estimator", ["affine"])  # reads alpha and beta from the metadata
def test_train_clicks_equals_library(setup, estimator):
    tmp, ds, log = setup
    res = ndcglab("train", DATA, "--clicks", "log.npz", "--estimator", estimator, "--loss",
                  "squared", "--epochs", "2", "--out", f"m_{estimator}.zip", "--format", "json",
                  "--quiet", cwd=tmp)  # fmt: skip
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["clicks"]["estimator"] == estimator and out["clicks"]["sessions"] == 3000
    # trust bias: the log records alpha and beta, which both doors read
    lib = fit_clicks(
        ds, log, estimator=estimator, examination=log.meta["alpha"],
        trust_offset=log.meta["beta"], loss="squared", epochs=2,
    )  # fmt: skip
    model = load_trained(tmp / f"m_{estimator}.zip")
    np.testing.assert_allclose(model.predict(ds), lib.predict(ds), rtol=1e-6, atol=1e-6)


def _one_error(res) -> str:
    assert res.returncode != 0
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error:"), res.stderr
    return lines[0]


def test_errors(setup):
    tmp, _ds, log = setup
    bare = ClickLog(
        **{c: getattr(log, c) for c in ("session", "query", "doc", "position", "click")},
        propensity=log.propensity,
        qids=log.qids,
        meta={"k": 5},
    )
    write_log(bare, tmp / "bare.npz")
    res = ndcglab("train", DATA, "--clicks", "bare.npz", "--out", "m.zip", "--quiet", cwd=tmp)
    assert "no examination" in _one_error(res)
    res = ndcglab(
        "train", DATA, "--clicks", "log.npz", "--tau", "2", "--out", "m.zip", "--quiet", cwd=tmp
    )
    assert "--tau" in _one_error(res)


def test_train_from_a_statistics_file_equals_library(setup):
    import dataclasses

    from ndcglab.clicks.learn import click_labels, statistics_from_counts
    from ndcglab.clicks.logs import write_stats
    from ndcglab.training import fit

    tmp, ds, log = setup
    write_stats(log.stats(), tmp / "stats.npz")
    res = ndcglab("train", DATA, "--clicks", "stats.npz", "--estimator", "snips",
                  "--examination", "1,0.5,0.4,0.3,0.2", "--loss", "squared", "--epochs", "2",
                  "--out", "m_stats.zip", "--quiet", cwd=tmp)  # fmt: skip
    assert res.returncode == 0, res.stderr
    labels = click_labels(
        statistics_from_counts(log.stats(), ds),
        estimator="snips",
        examination=[1, 0.5, 0.4, 0.3, 0.2],
    )
    lib = fit(dataclasses.replace(ds, labels=labels), loss="squared(gain=linear)", epochs=2)
    model = load_trained(tmp / "m_stats.zip")
    np.testing.assert_allclose(model.predict(ds), lib.predict(ds), rtol=1e-6, atol=1e-6)


@pytest.mark.slow
def test_affine_from_a_fitted_trust_model(setup):
    """``clicks fit --click-model trust --out FIT.json`` then ``train --estimator affine
    --examination FIT.json`` trains the model of the library with the fit's affine terms."""
    from ndcglab.clicks.click_models import fit_click_model

    tmp, ds, log = setup
    spec = "trust(iterations=50)"
    res = ndcglab("clicks", "fit", "log.npz", "--click-model", spec, "--out", "trust.json",
                  "--format", "json", cwd=tmp)  # fmt: skip
    assert res.returncode == 0, res.stderr
    alpha, beta = fit_click_model(log, spec).affine()
    saved = json.loads((tmp / "trust.json").read_text())
    np.testing.assert_allclose(saved["alpha"], alpha, rtol=1e-12)
    np.testing.assert_allclose(saved["beta"], beta, rtol=1e-12, atol=1e-15)
    assert saved["alpha"][0] == 1 and saved["beta"][0] == 0
    res = ndcglab("train", DATA, "--clicks", "log.npz", "--estimator", "affine", "--examination",
                  "trust.json", "--loss", "squared", "--epochs", "2", "--out", "m_fit.zip",
                  "--format", "json", "--quiet", cwd=tmp)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["clicks"]["trust_offset"] == saved["beta"]
    lib = fit_clicks(ds, log, estimator="affine", examination=saved["alpha"],
                     trust_offset=saved["beta"], loss="squared", epochs=2)  # fmt: skip
    model = load_trained(tmp / "m_fit.zip")
    np.testing.assert_allclose(model.predict(ds), lib.predict(ds), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ('{"click_model": "dbn", "gamma": 0.9}', "holds no examination per position"),
    ],  # (the other bad files: test_click_models.py::test_read_affine_terms_of_each_kind_of_fit)
)
def test_a_bad_fit_file_is_one_error_line(setup, content, expected):
    tmp, _, _ = setup
    name = f"bad{abs(hash(expected))}.json"
    if content is not None:
        (tmp / name).write_text(content)
    res = ndcglab("train", DATA, "--clicks", "log.npz", "--estimator", "affine", "--examination",
                  name, "--out", "m_bad.zip", "--quiet", cwd=tmp)  # fmt: skip
    line = _one_error(res)
    assert name in line and expected in line and "Fix:" in line, line
    assert not (tmp / "m_bad.zip").exists()


def test_fit_writes_the_trust_swap_terms_that_train_reads(tmp_path):
    from ndcglab.clicks.click_models import read_affine_terms
    from ndcglab.clicks.propensity import swap_affine_terms

    ds = load_dataset(DATA)
    log = simulate_clicks(ds, "trust", make_policy(ds.labels, "swap"), 2000, k=5, seed=3)
    write_log(log, tmp_path / "swap.npz")
    res = ndcglab("clicks", "fit", "swap.npz", "--propensity", "trust_swap", "--out",
                  "swap.json", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "offset" in res.stdout
    alpha, beta = read_affine_terms(str(tmp_path / "swap.json"))
    want_a, want_b = swap_affine_terms(log)
    np.testing.assert_allclose(alpha, want_a, rtol=1e-12)
    np.testing.assert_allclose(beta, want_b, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    ("option", "value"),
    [("--tau", "1"), ("--dla-rounds", "0"), ("--pairwise-p", "-1"), ("--bias-every", "0")],
)
def test_bad_click_options_are_refused_before_the_data_is_read(tmp_path, option, value):
    """A bad click option is the one error line, with its fix, even when the data file does
    not exist (the check comes before any reading)."""
    res = ndcglab("train", "missing.txt", "--clicks", "missing.parquet", "--estimator",
                  "pairwise", option, value, "--out", "m.zip", cwd=tmp_path)  # fmt: skip
    line = _one_error(res)
    assert option in line and "Fix:" in line and "missing" not in line, line
    assert not (tmp_path / "m.zip").exists()
