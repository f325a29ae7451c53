"""``ndcglab describe`` and ``ndcglab generate`` through the CLI entry point."""

from __future__ import annotations

import json

import numpy as np

from ndcglab.cli import main as cli_main
from ndcglab.data import make_synthetic, read_letor, write_svmlight


def run(capsys, *argv):
    rc = cli_main.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_describe_json_counts(tmp_path, capsys):
    x = np.array([[1, np.nan], [2, 3], [0, 0], [1, 1], [np.nan, np.nan]], dtype=np.float32)
    from ndcglab.data import RankingDataset

    ds = RankingDataset.from_arrays(x, [0, 2, 0, 0, 1], group=[2, 2, 1])
    p = tmp_path / "d.txt"
    write_svmlight(p, ds)
    rc, out, _ = run(capsys, "describe", str(p), "--format", "json")
    assert rc == 0
    d = json.loads(out)
    assert d["queries"] == 3 and d["documents"] == 5 and d["features"] == 2
    assert d["labels"] == {"0": 3, "1": 1, "2": 1}
    assert d["empty_queries"] == 1
    assert d["list_length"] == {"min": 1, "median": 2.0, "mean": 5 / 3, "max": 2}
    assert d["missing_values"] == 3 and d["source"] == str(p)
    assert "mean" not in d


def test_describe_text_and_synthetic(capsys):
    rc, out, _ = run(capsys, "describe", "synthetic:small")
    assert rc == 0 and "queries" in out and "12" in out and "list length" in out


def test_describe_errors_exit_2(tmp_path, capsys):
    p = tmp_path / "bad.txt"
    p.write_text("1 qid:1 1:x\n")
    rc, _, err = run(capsys, "describe", str(p))
    assert rc == 2 and f"{p}:1:" in err and "Fix:" in err
    rc, _, err = run(capsys, "describe", "synthetic:nope")
    assert rc == 2 and "unknown synthetic set" in err


def test_generate_writes_readable_letor(tmp_path, capsys):
    out_file = tmp_path / "sub" / "small.txt.gz"
    rc, out, _ = run(capsys, "generate", "small", "--out", str(out_file), "--seed", "3")
    assert rc == 0 and "wrote" in out
    ds = read_letor(out_file)
    ref = make_synthetic("small", seed=3)
    np.testing.assert_array_equal(ds.features, ref.features)
    np.testing.assert_array_equal(ds.labels, ref.labels)
    assert ds.doc_ids.tolist() == ref.doc_ids.tolist()
    rc, out, _ = run(capsys, "generate", "default", "--out", str(tmp_path / "d.txt"),
                     "--queries", "7", "--format", "json")  # fmt: skip
    assert rc == 0 and json.loads(out)["queries"] == 7
    assert read_letor(tmp_path / "d.txt").n_queries == 7


def test_generate_states_the_expected_size_before_writing(capsys, tmp_path):
    out = tmp_path / "d.txt"
    assert (
        cli_main.main(
            ["generate", "default", "--queries", "30", "--out", str(out), "--format", "json"]
        )
        == 0
    )
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    assert "writing about" in captured.err and str(out) in captured.err
    size = out.stat().st_size
    assert payload["bytes"] == size
    assert abs(payload["expected_bytes"] - size) <= 0.05 * size
