"""``ndcglab clicks evaluate`` as a user runs it (a subprocess): its numbers equal the library's
estimate on the same log, the examination comes from the log's metadata or the option, and every
bad input is one error line with the fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ndcglab.clicks import write_log
from ndcglab.clicks.estimators import counterfactual_estimate
from ndcglab.clicks.simulate import make_policy, simulate_clicks
from ndcglab.data import load_dataset

from ..test_cli_safety import ndcglab

DATA = "synthetic:default"


def _one_error(res) -> str:
    assert res.returncode != 0
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error:"), res.stderr
    assert "Traceback" not in res.stderr
    return lines[0]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cf")
    ds = load_dataset(DATA)
    rng = np.random.default_rng(0)
    logging = ds.labels + rng.normal(0, 1, ds.n_docs)
    log = simulate_clicks(
        ds, "pbm(eta=1)", make_policy(logging, "pl(temperature=1)"), 2000, k=5, seed=3
    )
    write_log(log, tmp / "log.npz")
    new = ds.labels + rng.normal(0, 0.5, ds.n_docs)
    np.savetxt(tmp / "new.txt", new)
    return tmp, ds, log, new


@pytest.mark.parametrize(("estimator", "measure"), [("dr", "dcg@5"), ("ips", "ndcg@3")])
def test_equals_library(setup, estimator, measure):
    tmp, ds, log, _new = setup
    res = ndcglab("clicks", "evaluate", "log.npz", "--scores", "new.txt", "--measure", measure,
                  "--estimator", estimator, "--format", "json", cwd=tmp)  # fmt: skip
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    want = counterfactual_estimate(
        log, np.loadtxt(tmp / "new.txt"), ds.boundaries, measure=measure, estimator=estimator,
        examination=np.arange(1, 6) ** -1.0,
    )  # fmt: skip
    assert out["value"] == pytest.approx(want.value, rel=1e-12)
    assert out["low"] == pytest.approx(want.low, rel=1e-12)
    assert out["n_sessions"] == 2000


def test_examination_option_overrides_metadata(setup):
    tmp, ds, log, _new = setup
    res = ndcglab("clicks", "evaluate", "log.npz", "--scores", "new.txt", "--estimator", "ips",
                  "--examination", "1,1,1,1,1", "--format", "json", cwd=tmp)  # fmt: skip
    assert res.returncode == 0, res.stderr
    want = counterfactual_estimate(log, np.loadtxt(tmp / "new.txt"), ds.boundaries)
    assert json.loads(res.stdout)["value"] == pytest.approx(want.value, rel=1e-12)


def test_examination_from_a_fitted_click_model_file(setup):
    """``--examination FIT.json`` (``clicks fit --out``) evaluates with the fit's terms: the same
    number as the library given those terms, and as the command given them as numbers."""
    from ndcglab.clicks.click_models import fit_click_model

    tmp, ds, log, _new = setup
    res = ndcglab("clicks", "fit", "log.npz", "--click-model", "pbm", "--out", "pbm.json",
                  cwd=tmp)  # fmt: skip
    assert res.returncode == 0, res.stderr
    saved = json.loads((tmp / "pbm.json").read_text())
    fit = fit_click_model(log, "pbm")
    examination = np.asarray(fit.examination, dtype=float)
    alpha = examination / examination[0]  # relative to the top, as the file's reader gives it
    res = ndcglab("clicks", "evaluate", "log.npz", "--scores", "new.txt", "--estimator", "ips",
                  "--examination", "pbm.json", "--format", "json", cwd=tmp)  # fmt: skip
    assert res.returncode == 0, res.stderr
    want = counterfactual_estimate(log, np.loadtxt(tmp / "new.txt"), ds.boundaries,
                                   estimator="ips", examination=alpha)  # fmt: skip
    assert json.loads(res.stdout)["value"] == pytest.approx(want.value, rel=1e-9)
    np.testing.assert_allclose(saved["examination"], examination, rtol=1e-12)
    res = ndcglab("clicks", "evaluate", "log.npz", "--scores", "new.txt", "--estimator", "ips",
                  "--examination", "missing.json", cwd=tmp)  # fmt: skip
    line = _one_error(res)
    assert "missing.json" in line and "Fix:" in line


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--measure", "dcg@7"], "beyond the 5 positions"),
        (["--examination", "1,x"], "comma-separated"),
        (["--level", "1.5"], "--level"),
    ],
)
def test_errors_are_one_line(setup, extra, needle):
    tmp = setup[0]
    res = ndcglab("clicks", "evaluate", "log.npz", "--scores", "new.txt", *extra, cwd=tmp)
    assert needle in _one_error(res)


def test_scores_of_wrong_length_and_missing_log(setup):
    tmp = setup[0]
    (tmp / "short.txt").write_text("0.5\n0.1\n")
    res = ndcglab("clicks", "evaluate", "log.npz", "--scores", "short.txt", cwd=tmp)
    assert "short.txt" in _one_error(res)
    res = ndcglab("clicks", "evaluate", "nolog.npz", "--scores", "new.txt", cwd=tmp)
    assert "nolog.npz" in _one_error(res)
