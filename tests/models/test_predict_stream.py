"""Scoring a LETOR file as it is read (``TrainedModel.iter_file_scores``, ``predict(path)``,
``ndcglab predict``) against scoring the dataset read whole: the same numbers bit for bit, the
same errors, and memory of a block of rows, not of the matrix.

The reader's blocks are made small here (``letor._CHUNK`` of 16 KiB, every file streamed), so
that queries run across blocks and the model's calls across queries."""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import torch

from ndcglab.data import (
    Normalizer,
    RankingDataset,
    letor,
    letor_stream,
    read_letor,
    write_scores,
    write_svmlight,
)
from ndcglab.errors import DataFormatError, ModelMismatchError
from ndcglab.models import TrainedModel, make_model

N_F = 6


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(letor, "_CHUNK", 1 << 14)
    monkeypatch.setattr(letor_stream, "STREAM_MIN_BYTES", 0)


def _dataset(n_q: int = 300, seed: int = 0, nan: float = 0.05, n_f: int = N_F) -> RankingDataset:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, n_q)
    n = int(sizes.sum())
    x = (rng.normal(0.0, 2.0, (n, n_f)) + np.arange(n_f)).astype(np.float32)
    x[rng.random(x.shape) < nan] = np.nan
    return RankingDataset.from_arrays(x, rng.integers(0, 3, n).astype(np.float64), group=sizes)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("stream") / "data.txt"
    write_svmlight(path, _dataset())
    return path


def _trained(kind: str, method: str, ds: RankingDataset, width: int = N_F) -> TrainedModel:
    torch.manual_seed(2)
    params = {"hidden": (8,), "heads": 2, "blocks": 1, "ff_width": 8} if kind == "attention" else {}
    model = make_model(kind, width, **params)
    x = ds.features[:, :width] if width < ds.n_features else ds.with_n_features(width).features
    return TrainedModel(model, Normalizer.fit(method, np.ascontiguousarray(x)))


@pytest.mark.parametrize("method", ["zscore", "none", "query_minmax"])
@pytest.mark.parametrize("kind", ["linear", "adarank", "mlp", "attention"])
def test_streamed_scores_equal_the_scores_of_the_whole_dataset(
    data_file: Path, kind: str, method: str
) -> None:
    ds = read_letor(data_file)
    tm = _trained(kind, method, ds)
    want = tm.model.predict(tm.normalizer.transform(ds.features, ds.boundaries), boundaries=(
        ds.boundaries if tm.model.listwise else None))  # fmt: skip
    counts: dict[str, int] = {}
    parts = list(tm.iter_file_scores(data_file, counts=counts))
    assert len(parts) > 5  # the file really came in many blocks
    assert np.array_equal(np.concatenate(parts), want)
    assert counts == {"n_docs": ds.n_docs, "n_queries": ds.n_queries}
    assert np.array_equal(tm.predict(str(data_file)), want)


@pytest.mark.parametrize("missing", ["zero", "min"])
def test_read_options_apply_per_block(data_file: Path, missing: str) -> None:
    ds = read_letor(data_file, missing=missing)
    tm = _trained("mlp", "zscore", ds)
    got = np.concatenate(list(tm.iter_file_scores(data_file, missing=missing)))
    assert np.array_equal(got, tm.predict(ds))


def test_a_sparse_file_narrower_than_the_model_has_zeros_in_the_rest(tmp_path: Path) -> None:
    ds = _dataset(n_q=80, nan=0.0)
    path = tmp_path / "sparse.txt"
    write_svmlight(path, ds, sparse=True)
    tm = _trained("linear", "zscore", ds, width=N_F + 3)
    assert np.array_equal(tm.predict(path), tm.predict(ds.with_n_features(N_F + 3)))
    narrow = _trained("linear", "zscore", ds, width=N_F - 1)
    with pytest.raises(ModelMismatchError, match=f"expects {N_F - 1} features"):
        narrow.predict(path)


def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    lines = tmp_path / "x.txt"
    write_svmlight(lines, _dataset(n_q=200))
    text = lines.read_text().splitlines()
    bad = len(text) - 10  # deep in the file, many blocks after the first
    text[bad - 1] = text[bad - 1].replace(" 3:", " 3:zz", 1)
    lines.write_text("\n".join(text) + "\n")
    tm = _trained("linear", "zscore", _dataset(n_q=5))
    with pytest.raises(DataFormatError) as err:
        for _ in tm.iter_file_scores(lines):
            pass
    assert err.value.line == bad and "3:zz" in str(err.value)


def test_a_query_that_comes_back_is_refused_naming_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "split.txt"
    body = [f"{i % 3} qid:{q} 1:{i}.5 2:0.25" for q in range(1, 400) for i in range(3)]
    body.append("1 qid:7 1:0.5 2:0.5")
    path.write_text("\n".join(body) + "\n")
    tm = _trained("linear", "zscore", _dataset(n_q=5), width=2)
    with pytest.raises(DataFormatError, match="starts again on line 1198") as err:
        tm.predict(path)
    assert "line 19" in str(err.value)  # qid:7's first line: 3 lines per query, 6 before it
    sep = np.concatenate(list(tm.iter_file_scores(path, split_queries="separate")))
    assert np.array_equal(sep, tm.predict(read_letor(path, split_queries="separate")))


def test_memory_holds_a_block_not_the_matrix(data_file: Path, tmp_path: Path) -> None:
    """Python-side allocations (NumPy reports its arrays to tracemalloc) while a linear model
    scores a file of about 60,000 rows x 30 features: the peak stays far below the float32
    matrix (what is left: a block of the file, the model's calls, a few numbers per query)."""
    ds = _dataset(n_q=3_000, nan=0.0, n_f=30)
    path = tmp_path / "big.txt"
    write_svmlight(path, ds, comment=False)
    tm = _trained("linear", "zscore", ds, width=30)
    matrix = ds.n_docs * 30 * 4
    for _ in _trained("linear", "zscore", read_letor(data_file)).iter_file_scores(data_file):
        pass  # the first calls (Numba's kernels, torch) out of the count
    tracemalloc.start()
    try:
        total = 0
        for scores in tm.iter_file_scores(path):
            total += len(scores)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        read_letor(path)
        _, whole = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == ds.n_docs and matrix > 6_000_000
    assert peak < matrix / 4 < whole


_CHILD = """
import runpy, sys
from ndcglab.data import letor_stream, letor
letor_stream.STREAM_MIN_BYTES = 0
letor._CHUNK = 1 << 14
runpy.run_module("ndcglab.cli.main", run_name="__main__", alter_sys=True)
"""


def _cli(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", _CHILD, *map(str, args)]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_writes_the_bytes_of_the_whole_read_and_names_a_bad_line(
    data_file: Path, tmp_path: Path
) -> None:
    ds = read_letor(data_file)
    tm = _trained("mlp", "zscore", ds)
    tm.save(tmp_path / "m.ndcg")
    write_scores(tmp_path / "want.txt", tm.predict(ds))
    res = _cli("predict", "m.ndcg", data_file, "--out", "got.txt", "--format", "json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "got.txt").read_bytes() == (tmp_path / "want.txt").read_bytes()
    assert f'"n_docs": {ds.n_docs}' in res.stdout
    text = data_file.read_text().splitlines()
    text[-3] = "x" + text[-3]
    (tmp_path / "bad.txt").write_text("\n".join(text) + "\n")
    res = _cli("predict", "m.ndcg", "bad.txt", "--out", "bad-scores.txt", cwd=tmp_path)
    assert res.returncode != 0
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ndcglab: error:"), res.stderr
    assert f"bad.txt:{len(text) - 2}" in err[0] and "Fix" in err[0]
    assert not (tmp_path / "bad-scores.txt").exists()


@pytest.mark.slow
def test_the_estimator_scores_a_file_as_it_reads_it(data_file: Path) -> None:
    from ndcglab.estimator import NDCGRanker

    ds = read_letor(data_file)
    clean = RankingDataset.from_arrays(
        np.nan_to_num(ds.features), ds.labels, group=np.diff(ds.boundaries)
    )
    est = NDCGRanker(epochs=1, optimizer="gd", lr=0.5).fit(clean.subset(np.arange(20)))
    assert np.array_equal(est.predict(str(data_file)), est.predict(ds))


def _with_docids(path: Path, ds: RankingDataset, seed: int) -> None:
    """``ds`` written with ``#docid`` comments on most lines: some missing, some repeated
    within their query (named ``#2``... in a run), some with bytes that are not UTF-8."""
    rng = np.random.default_rng(seed)
    lines = []
    for i, line in enumerate(write_svmlight_text(ds).splitlines()):
        u = rng.random()
        if u < 0.15:
            lines.append(line)  # no docid: named "{qid}-{i}"
        elif u < 0.25:
            lines.append(f"{line} #docid = same inc = 1")
        elif u < 0.28:
            lines.append(f"{line} #docid = d\\xe9{i}")
        else:
            lines.append(f"{line} #docid = GX{i:06d}-{i % 7}")
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))


def write_svmlight_text(ds: RankingDataset) -> str:
    import io

    buf = io.StringIO()
    for qi in range(ds.n_queries):
        for i in range(int(ds.boundaries[qi]), int(ds.boundaries[qi + 1])):
            feats = " ".join(
                f"{j + 1}:{'NULL' if np.isnan(v) else repr(float(v))}"
                for j, v in enumerate(ds.features[i])
            )
            buf.write(f"{int(ds.labels[i])} qid:{qi + 100} {feats}\n")
    return buf.getvalue()


@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_a_trec_run_written_as_the_file_is_read_is_the_bytes_of_write_run(
    tmp_path: Path, kind: str
) -> None:
    """``predict --format trec --out RUN`` (query by query, as blocks are read and scored)
    against ``write_run`` of the dataset read whole; and against a run named line by line
    here (qid, Q0, name, rank, repr of the score, tag)."""
    from ndcglab.data import RunWriter, write_run

    ds0 = _dataset(n_q=250, seed=5)
    path = tmp_path / "ids.txt"
    _with_docids(path, ds0, seed=6)
    ds = read_letor(path)
    tm = _trained(kind, "zscore", ds)
    tm.save(tmp_path / "m.ndcg")
    write_run(tmp_path / "want.run", ds, tm.predict(ds), tag="t1")
    res = _cli("predict", "m.ndcg", path, "--format", "trec", "--out", "got.run", "--tag", "t1",
               cwd=tmp_path)  # fmt: skip
    assert res.returncode == 0, res.stderr
    got = (tmp_path / "got.run").read_bytes()
    assert got == (tmp_path / "want.run").read_bytes()
    assert f"{ds.n_queries} queries, {ds.n_docs} documents" in res.stderr
    # the names and order by a loop written here
    scores = tm.predict(ds)
    first = int(ds.boundaries[1])
    names, seen = [], {}
    for i in range(first):
        d = str(ds.doc_ids[i]) if ds.doc_ids is not None and ds.doc_ids[i] else f"100-{i}"
        seen[d] = seen.get(d, 0) + 1
        names.append(d if seen[d] == 1 else f"{d}#{seen[d]}")
    order = sorted(range(first), key=lambda i: (-scores[i], i))
    want = "".join(
        f"100 Q0 {names[i]} {r} {float(scores[i])!r} t1\n" for r, i in enumerate(order, 1)
    )
    assert got.decode("utf-8", "surrogateescape").startswith(want)
    assert RunWriter("t1").lines("100", ds.doc_ids[:first], scores[:first]) == want


def test_a_streamed_run_under_separate_queries_and_a_bad_line(tmp_path: Path) -> None:
    """A query id that comes back is named ``Q#2`` under ``--split-queries separate`` as in
    the dataset read whole; a bad line deep in the file leaves no run behind (an earlier file
    of that name is kept)."""
    from ndcglab.data import write_run

    body = [f"{i % 3} qid:{q} 1:{i}.5 2:0.25 #docid = D{q}-{i}" for q in range(1, 300)
            for i in range(4)]  # fmt: skip
    body += ["1 qid:7 1:0.5 2:0.5 #docid = back", "0 qid:7 1:1.5 2:0.5"]
    path = tmp_path / "sep.txt"
    path.write_text("\n".join(body) + "\n")
    ds = read_letor(path, split_queries="separate")
    assert "7#2" in list(ds.query_ids)
    tm = _trained("linear", "zscore", _dataset(n_q=5), width=2)
    tm.save(tmp_path / "m.ndcg")
    write_run(tmp_path / "want.run", ds, tm.predict(ds))
    got = tm.write_file_run(path, tmp_path / "got.run", split_queries="separate")
    assert got == (ds.n_queries, ds.n_docs)
    assert (tmp_path / "got.run").read_bytes() == (tmp_path / "want.run").read_bytes()
    body[-40] = "x" + body[-40]
    (tmp_path / "bad.txt").write_text("\n".join(body) + "\n")
    (tmp_path / "keep.run").write_text("earlier\n")
    res = _cli("predict", "m.ndcg", "bad.txt", "--format", "trec", "--out", "keep.run",
               cwd=tmp_path)  # fmt: skip
    err = res.stderr.strip().splitlines()
    assert res.returncode != 0 and len(err) == 1 and err[0].startswith("ndcglab: error:"), err
    assert f"bad.txt:{len(body) - 39}" in err[0]
    assert (tmp_path / "keep.run").read_text() == "earlier\n"


def test_a_bad_run_tag_is_one_error_line_before_anything_is_read(
    data_file: Path, tmp_path: Path
) -> None:
    _trained("linear", "zscore", read_letor(data_file)).save(tmp_path / "m.ndcg")
    res = _cli("predict", "m.ndcg", data_file, "--format", "trec", "--out", "r.run",
               "--tag", "my run", cwd=tmp_path)  # fmt: skip
    err = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(err) == 1, res.stderr
    assert err[0].startswith("ndcglab: error: run tag 'my run'") and "Fix:" in err[0]
    assert not (tmp_path / "r.run").exists()
