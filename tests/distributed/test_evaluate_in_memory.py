"""Dask evaluation reads each block in memory: no temporary file or folder is made while
``evaluate_letor_dask`` / ``evaluate_trec_dask`` run (Dask's in-process scheduler, so the tasks
run where ``tempfile`` is watched), the numbers equal the single-process ones, and a damaged
line is reported against the original file with its line in its block."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("dask")

from ndcglab.data import (
    dataset_to_qrels,
    make_synthetic,
    read_letor,
    read_run,
    write_run,
    write_svmlight,
)
from ndcglab.distributed.evaluate import evaluate_letor_dask, evaluate_trec_dask
from ndcglab.errors import DataFormatError
from ndcglab.measures import evaluate, evaluate_trec

MEASURES = ["ndcg@10", "map", "p@5"]


@pytest.fixture
def watched_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Path]:
    """Every temporary file or folder made through :mod:`tempfile` (with the stack that made it),
    and the empty folder :mod:`tempfile` is pointed at. The tests clear the list just before the
    Dask call (writing their inputs makes temporary files: the atomic writer)."""
    made: list[str] = []
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    for name in ("mkstemp", "mkdtemp"):
        real = getattr(tempfile, name)

        def spy(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
            import traceback

            made.append(_name + "".join(traceback.format_stack(limit=6)))
            return _real(*a, **k)

        monkeypatch.setattr(tempfile, name, spy)
    real_inner = tempfile._mkstemp_inner  # NamedTemporaryFile / TemporaryFile

    def spy_inner(*a: Any, **k: Any) -> Any:
        made.append("_mkstemp_inner")
        return real_inner(*a, **k)

    monkeypatch.setattr(tempfile, "_mkstemp_inner", spy_inner)
    return made, root


def _no_temporary_files(watched: tuple[list[str], Path]) -> None:
    made, root = watched
    assert made == [], made[0]
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_letor_blocks_are_read_in_memory(
    tmp_path: Path, watched_tmp: tuple[list[str], Path], gz: bool
):
    ds = make_synthetic("small", seed=2)
    path = tmp_path / "d.txt"
    write_svmlight(path, ds)
    if gz:
        gzpath = tmp_path / "d.txt.gz"
        gzpath.write_bytes(gzip.compress(path.read_bytes()))
        path = gzpath
    scores = np.round(ds.features[:, 0] - ds.features[:, 3], 1)
    ref = evaluate(read_letor(path), scores, MEASURES)
    watched_tmp[0].clear()
    got = evaluate_letor_dask(path, scores, MEASURES, blocksize=1 << 12)
    _no_temporary_files(watched_tmp)
    if not gz:
        assert got.convention["partitions"] > 2  # several blocks, each read in memory
    assert list(got.query_ids) == list(ref.query_ids)
    for name in ref.per_query:
        np.testing.assert_allclose(got.per_query[name], ref.per_query[name], rtol=0, atol=1e-12)


def test_trec_blocks_are_read_in_memory(tmp_path: Path, watched_tmp: tuple[list[str], Path]):
    ds = make_synthetic("small", seed=5)
    qrels = dataset_to_qrels(ds)
    run_path = tmp_path / "run.txt"
    write_run(run_path, ds, np.round(ds.features[:, 1], 1))
    ref = evaluate_trec(qrels, read_run(run_path), MEASURES)
    watched_tmp[0].clear()
    got = evaluate_trec_dask(qrels, run_path, MEASURES, blocksize=1 << 12, n_partitions=3)
    _no_temporary_files(watched_tmp)
    assert list(got.query_ids) == list(ref.query_ids)
    for name in ref.per_query:
        np.testing.assert_allclose(got.per_query[name], ref.per_query[name], rtol=0, atol=1e-12)


def test_a_damaged_line_names_the_original_file_and_its_line(tmp_path: Path, watched_tmp):
    lines = [f"{k % 2} qid:{k // 4} 1:{k} 2:0.5\n" for k in range(12)]
    lines[6] = "x qid:1 1:6 2:0.5\n"  # line 7 of the file, in its only block
    path = tmp_path / "bad.txt"
    path.write_text("".join(lines))
    with pytest.raises(DataFormatError) as direct:
        read_letor(path)
    watched_tmp[0].clear()
    with pytest.raises(DataFormatError) as dask:
        evaluate_letor_dask(path, np.zeros(12), MEASURES)
    _no_temporary_files(watched_tmp)
    d, e = direct.value, dask.value
    assert e.path == d.path == str(path)
    assert e.reason == f"{d.reason} (line 7 of block 0 of the file)"
    assert (e.token, e.fix) == (d.token, d.fix)
    # a TREC run: the same, against read_run of the file
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 0.5 s\n1 Q0 b x 0.2 s\n")
    with pytest.raises(DataFormatError) as direct:
        read_run(run)
    watched_tmp[0].clear()
    with pytest.raises(DataFormatError) as dask:
        evaluate_trec_dask({"1": {"a": 1}}, run, MEASURES, n_partitions=2)
    _no_temporary_files(watched_tmp)
    d, e = direct.value, dask.value
    assert e.path == d.path == str(run)
    assert e.reason == f"{d.reason} (line 2 of block 0 of the file)"
    assert (e.token, e.fix) == (d.token, d.fix)
