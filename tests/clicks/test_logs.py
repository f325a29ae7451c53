"""Click logs: the types, the sufficient statistics (oracle: a counting loop written here), the
Parquet and .npz files (round trips), and the rules of a valid log."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from ndcglab.clicks import ClickLog, read_log, validate_log, write_log
from ndcglab.errors import DataFormatError


def _log(n_sessions: int = 50, k: int = 4, seed: int = 0) -> ClickLog:
    """Sessions of 3 queries with 6 documents each (rows 6q..6q+5), top-k of a permutation."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list] = {c: [] for c in ("session", "query", "doc", "position", "click")}
    for s in range(n_sessions):
        q = int(rng.integers(3))
        docs = 6 * q + rng.permutation(6)[:k]
        for p, d in enumerate(docs, start=1):
            rows["session"].append(s)
            rows["query"].append(q)
            rows["doc"].append(int(d))
            rows["position"].append(p)
            rows["click"].append(int(rng.random() < 0.5 / p))
    n = len(rows["session"])
    return ClickLog(
        **{c: np.asarray(v) for c, v in rows.items()},
        propensity=np.full(n, 0.5),
        qids=np.array(["q1", "q2", "q3"]),
        meta={"k": k, "click_model": "pbm(eta=1)", "seed": seed},
    )


def test_columns_have_their_dtypes():
    log = _log()
    assert log.session.dtype == np.int64 and log.query.dtype == np.int64
    assert log.doc.dtype == np.int64 and log.position.dtype == np.int32
    assert log.click.dtype == np.int8 and log.propensity.dtype == np.float64
    assert log.k == 4 and log.n_sessions == 50 and len(log) == 200


def test_stats_count_impressions_and_clicks_like_a_loop():
    log = _log(200)
    imp: dict[tuple[int, int, int], int] = {}
    clk: dict[tuple[int, int, int], int] = {}
    for q, d, p, c in zip(log.query, log.doc, log.position, log.click):
        key = (int(q), int(d), int(p))
        imp[key] = imp.get(key, 0) + 1
        clk[key] = clk.get(key, 0) + int(c)
    st = log.stats()
    got = {(int(q), int(d), int(p)): (int(i), int(c)) for q, d, p, i, c in
           zip(st.query, st.doc, st.position, st.impressions, st.clicks)}  # fmt: skip
    assert got == {key: (imp[key], clk[key]) for key in imp}
    per_imp, per_clk = st.per_position()
    for p in range(1, 5):
        assert per_imp[p - 1] == sum(v for key, v in imp.items() if key[2] == p)
        assert per_clk[p - 1] == sum(v for key, v in clk.items() if key[2] == p)


@pytest.mark.parametrize("name", ["log.parquet", "log.npz"])
def test_round_trip(tmp_path, name):
    if name.endswith("parquet"):
        pytest.importorskip("pyarrow")
    log = _log()
    write_log(log, tmp_path / name)
    back = read_log(tmp_path / name)
    for c in ("session", "query", "doc", "position", "click", "propensity"):
        assert np.array_equal(getattr(back, c), getattr(log, c)), c
        assert getattr(back, c).dtype == getattr(log, c).dtype
    assert back.qids.tolist() == ["q1", "q2", "q3"] and back.meta == log.meta


def test_parquet_is_readable_by_pyarrow_alone(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    log = _log()
    write_log(log, tmp_path / "log.parquet")
    table = pq.read_table(tmp_path / "log.parquet")
    assert table.column_names == ["session", "query", "doc", "position", "click", "propensity"]
    assert table.column("click").to_pylist() == log.click.tolist()


def _broken(**change) -> ClickLog:
    log = _log(10)
    cols = {c: getattr(log, c).copy() for c in
            ("session", "query", "doc", "position", "click", "propensity")}  # fmt: skip
    for c, (row, value) in change.items():
        cols[c][row] = value
    return ClickLog(**cols, qids=log.qids, meta=log.meta)


@pytest.mark.parametrize(
    ("change", "row", "words"),
    [
        ({"position": (6, 5)}, 7, "outside 1..k"),
        ({"propensity": (3, 0.0)}, 4, "propensity 0.0"),
        ({"query": (8, 7)}, 9, "query index 7"),
        ({"click": (2, 2)}, 3, "click 2"),
    ],
)
def test_a_bad_row_is_named(change, row, words):
    with pytest.raises(DataFormatError) as e:
        validate_log(_broken(**change), path="x.parquet")
    assert f"x.parquet: row {row}: " in str(e.value) and words in str(e.value)
    assert "Fix:" in str(e.value)


def test_importing_clicks_is_cheap():
    code = "import sys, ndcglab.clicks; print(any(m in sys.modules for m in ('pyarrow', 'torch', 'numba', 'scipy')))"  # noqa: E501
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("name", ["s.parquet", "s.npz"])
def test_stats_files_and_merging(tmp_path, name):
    from ndcglab.clicks import merge_stats, read_stats, write_stats

    if name.endswith("parquet"):
        pytest.importorskip("pyarrow")
    a, b = _log(80, seed=1), _log(60, seed=2)
    b = ClickLog(**{c: getattr(b, c) for c in ("query", "doc", "position", "click",
                                                "propensity")},
                 session=b.session + 1000, qids=b.qids, meta=b.meta)  # fmt: skip
    merged = merge_stats([a.stats(), b.stats()])
    whole = ClickLog(
        **{c: np.concatenate([getattr(a, c), getattr(b, c)]) for c in
           ("session", "query", "doc", "position", "click", "propensity")},
        qids=a.qids, meta=a.meta,
    ).stats()  # fmt: skip
    write_stats(merged, tmp_path / name)
    back = read_stats(tmp_path / name)
    for c in ("query", "doc", "position", "impressions", "clicks"):
        assert np.array_equal(getattr(back, c), getattr(whole, c)), c
    assert back.k == 4 and back.qids.tolist() == ["q1", "q2", "q3"]
    write_log(a, tmp_path / ("l" + name[1:]))
    with pytest.raises(DataFormatError, match="not a click statistics file"):
        read_stats(tmp_path / ("l" + name[1:]))


@pytest.mark.parametrize("name", ["c.parquet", "c.npz"])
def test_chunks_write_as_one_log(tmp_path, name):
    if name.endswith("parquet"):
        pytest.importorskip("pyarrow")
    log = _log(90)
    starts = log.session_starts()
    parts = [log.take(np.arange(starts[i], starts[j])) for i, j in ((0, 30), (30, 31), (31, 90))]
    write_log(iter(parts), tmp_path / name)
    back = read_log(tmp_path / name)
    for c in ("session", "query", "doc", "position", "click", "propensity"):
        assert np.array_equal(getattr(back, c), getattr(log, c)), c


def test_concat_logs_keeps_sessions_apart():
    from ndcglab.clicks import concat_logs

    a, b = _log(20, seed=1), _log(30, seed=2)
    both = concat_logs([a, b])
    assert both.n_sessions == 50 and len(np.unique(both.session)) == 50
    validate_log(both)
    assert len(both.meta["parts"]) == 2


def test_stats_of_a_log_file_read_by_row_groups(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    from ndcglab.clicks import read_log_stats

    log = _log(90)
    starts = log.session_starts()
    cuts = ((0, 30), (30, 31), (31, 90))
    parts = [log.take(np.arange(starts[i], starts[j])) for i, j in cuts]
    write_log(iter(parts), tmp_path / "c.parquet")
    assert pq.ParquetFile(tmp_path / "c.parquet").num_row_groups == 3
    got, want = read_log_stats(tmp_path / "c.parquet"), log.stats()
    for c in ("query", "doc", "position", "impressions", "clicks"):
        assert np.array_equal(getattr(got, c), getattr(want, c)), c
    bad_row = int(starts[40]) + 2  # in the third row group
    prop = parts[2].propensity.copy()
    prop[bad_row - int(starts[31])] = 0.0
    parts[2] = ClickLog(**{c: getattr(parts[2], c) for c in
                           ("session", "query", "doc", "position", "click")},
                        propensity=prop, qids=log.qids, meta=log.meta)  # fmt: skip
    write_log(iter(parts), tmp_path / "bad.parquet")
    with pytest.raises(DataFormatError, match=rf"bad.parquet: row {bad_row + 1}: propensity 0.0"):
        read_log_stats(tmp_path / "bad.parquet")
    with pytest.raises(DataFormatError, match=rf"bad.parquet: row {bad_row + 1}: propensity 0.0"):
        read_log(tmp_path / "bad.parquet")


def test_a_newer_format_version_is_refused(tmp_path):
    import json as _json

    log = _log(5)
    write_log(log, tmp_path / "l.npz")
    with np.load(tmp_path / "l.npz") as z:
        cols = {n: z[n] for n in z.files}
    header = _json.loads(cols["header"].tobytes())
    header["version"] = 99
    cols["header"] = np.frombuffer(_json.dumps(header).encode(), dtype=np.uint8)
    np.savez(tmp_path / "new.npz", **cols)
    with pytest.raises(DataFormatError, match=r"new\.npz: the file is of click-log format ver"):
        read_log(tmp_path / "new.npz")
