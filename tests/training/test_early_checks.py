"""Issue 44, item 14 (training): a misspelt loss is refused before any data is read, naming the
closest losses; :class:`~ndcglab.training.CVResult`'s repr summarises instead of printing every
array."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from ndcglab.training.crossval import CVResult, FoldResult


@pytest.mark.parametrize("command", ["train", "cv"])
def test_a_misspelt_loss_is_refused_before_the_data_is_read(tmp_path, command) -> None:
    missing = tmp_path / "no-such-folder"  # reading it would fail: the loss must fail first
    argv = [command, str(missing), "--loss", "listnett"]
    if command == "train":
        argv += ["--out", str(tmp_path / "m.zip")]
    out = subprocess.run([sys.executable, "-m", "ndcglab", *argv],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert out.returncode == 2, out.stderr
    (line,) = [x for x in out.stderr.splitlines() if x.strip()]
    assert line.startswith("ndcglab: error: unknown loss 'listnett'"), line
    assert "closest losses are listnet" in line and "no-such-folder" not in line, line


def _fold(run: str, fold: str, ndcg: float, big: np.ndarray) -> FoldResult:
    evaluation = SimpleNamespace(mean={"ndcg@10": ndcg}, per_query={"ndcg@10": big})
    result = SimpleNamespace(weights=big, trained=None)
    return FoldResult(fold=fold, run=run, result=result, evaluation=evaluation, seconds=1.25)


def test_cv_result_repr_is_a_summary() -> None:
    big = np.arange(100_000, dtype=np.float64)
    values = [0.41, 0.47, 0.53]
    cv = CVResult(runs=["listnet"], folds=["Fold1", "Fold2", "Fold3"])
    cv.results = [_fold("listnet", f"Fold{i + 1}", v, big) for i, v in enumerate(values)]
    text = repr(cv)
    mean, std = float(np.mean(values)), float(np.std(values, ddof=1))
    assert f"listnet: ndcg@10 {mean:.4f}±{std:.4f}" in text, text
    assert "3 fold(s)" in text and "Fold1, Fold2, Fold3" in text
    assert "array" not in text and len(text) < 300, text
    one = repr(cv.results[0])
    assert one == "FoldResult('listnet' on 'Fold1', 1.2 s: ndcg@10 0.4100)", one
    cv.results.append(
        FoldResult("Fold4", "listnet", None, None, 0.5, {"fold": "Fold4", "error": "boom"})
    )
    assert "listnet: 1 fold(s) failed" in repr(cv)
