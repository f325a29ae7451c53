"""Bad click logs through the command line (a subprocess, as a user runs it): positions past
k, clicks on documents not shown, propensity 0, queries missing from the features, duplicate
sessions — each is exactly one ``ndcglab: error:`` line naming the file and the row, with the
fix, and a non-zero exit; and ``ndcglab clicks fit`` prints what the library fits."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ndcglab.clicks import LOG_COLUMNS, ClickLog, read_log, write_log
from ndcglab.clicks.click_models import fit_click_model
from ndcglab.clicks.propensity import estimate_propensities
from ndcglab.clicks.simulate import simulate_clicks
from ndcglab.data import load_dataset

from ..test_cli_safety import DATA, ndcglab


def _good(tmp_path) -> ClickLog:
    (tmp_path / "d.txt").write_text(DATA)
    ds = load_dataset(tmp_path / "d.txt")
    return simulate_clicks(ds, "pbm(eta=1)", None, 40, k=3, seed=1)


def _changed(log: ClickLog, **changes) -> ClickLog:
    cols = {c: getattr(log, c).copy() for c in LOG_COLUMNS}
    for c, (row, value) in changes.items():
        cols[c][row] = value
    return ClickLog(**cols, qids=log.qids, meta=log.meta)


def _one_error(res) -> str:
    assert res.returncode == 2, res.stderr
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error:"), res.stderr
    assert "Traceback" not in res.stderr and "Fix:" in lines[0]
    return lines[0]


def test_bad_logs_are_one_line_each_naming_file_and_row(tmp_path):
    log = _good(tmp_path)
    qids = log.qids.copy()
    qids[1] = "99"  # query "2" renamed to an id the features do not have
    cases = {
        "past_k.parquet": (_changed(log, position=(5, 4)), "row 6", "outside 1..k"),
        "propensity0.npz": (_changed(log, propensity=(7, 0.0)), "row 8", "propensity 0.0"),
        "duplicate.parquet": (
            _changed(log, session=(np.arange(6, 9), 0)),
            "row 7",
            "session 0 appears again",
        ),
        "unknown_query.parquet": (
            ClickLog(**{c: getattr(log, c) for c in LOG_COLUMNS}, qids=qids, meta=log.meta),
            f"row {int(np.flatnonzero(log.query == 1)[0]) + 1}",
            "query '99' is missing from the features",
        ),
    }
    for name, (bad, row, words) in cases.items():
        write_log(bad, tmp_path / name)
        line = _one_error(ndcglab("clicks", "fit", name, "--data", "d.txt", cwd=tmp_path))
        assert f"{name}: {row}:" in line and words in line, line


def test_a_click_on_a_document_not_shown(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    log = _good(tmp_path)
    write_log(log, tmp_path / "ok.parquet")
    table = pq.read_table(tmp_path / "ok.parquet")
    position = table.column("position").to_pylist()
    click = table.column("click").to_pylist()
    position[4], click[4] = None, 1  # no position: not shown, yet clicked
    table = table.set_column(3, "position", pa.array(position, type=pa.int32()))
    table = table.set_column(4, "click", pa.array(click, type=pa.int8()))
    pq.write_table(table, tmp_path / "bad.parquet")
    line = _one_error(ndcglab("clicks", "fit", "bad.parquet", cwd=tmp_path))
    assert "bad.parquet: row 5:" in line and "not shown" in line


def test_not_a_log_and_a_missing_file(tmp_path):
    write_log(_good(tmp_path), tmp_path / "l.npz")
    res = ndcglab("clicks", "fit", "l.npz", "--propensity", "regression_em", cwd=tmp_path)
    assert "--data" in _one_error(res)
    (tmp_path / "x.parquet").write_text("hello\n")
    assert "x.parquet" in _one_error(ndcglab("clicks", "fit", "x.parquet", cwd=tmp_path))
    res = ndcglab("clicks", "fit", "nope.npz", cwd=tmp_path)
    assert res.returncode != 0 and "nope.npz" in res.stderr and "Traceback" not in res.stderr


def test_fit_prints_what_the_library_fits(tmp_path):
    log = _good(tmp_path)
    write_log(log, tmp_path / "l.npz")
    res = ndcglab("clicks", "fit", "l.npz", "--click-model", "pbm(iterations=30)", "--propensity",
                  "truth", "--format", "json", "--out", "fit.json", cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    want = fit_click_model(read_log(tmp_path / "l.npz"), "pbm(iterations=30)")
    assert np.allclose(out["examination"], want.examination)
    assert np.allclose(out["perplexity"], want.perplexity)
    assert np.isclose(out["log_likelihood"], want.log_likelihood)
    assert np.allclose(out["propensity"], estimate_propensities(log, "truth"))
    saved = json.loads((tmp_path / "fit.json").read_text())
    docs = saved["attractiveness"]["doc"]
    assert np.allclose(saved["attractiveness"]["value"], want.attractiveness[docs])
