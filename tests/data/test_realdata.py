"""The real LETOR files (the folder ``NDCGLAB_SHARED_DATA`` names, see tests/conftest.py) parse
with their documented counts (cheap checks)."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json

import numpy as np
import pytest

from ndcglab.data import file_sha256, load_letor_folder, read_letor

from .oracle_letor import fill_missing


def manifest_rows(root, prefix):
    """MANIFEST.tsv rows under ``prefix``; ``root`` is the shared data folder."""
    path = root / "MANIFEST.tsv"
    if not path.exists():
        pytest.skip(f"real data manifest not available: {path}")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [r for r in rows if r["path"].startswith(prefix) and r["gz_path"] not in ("", "None")]


def check_against_manifest(root, row):
    gz = root / row["gz_path"]
    raw = gzip.decompress(gz.read_bytes())
    assert hashlib.sha256(raw).hexdigest() == row["sha256"], row["path"]
    ds = read_letor(gz)
    assert ds.n_queries == int(row["queries"]) and ds.n_docs == int(row["docs"])
    assert ds.n_features == int(row["n_features"])
    want = {float(k): v for k, v in json.loads(row["labels"]).items()}
    assert ds.label_counts() == want
    return ds


def test_mq2008_fold1_against_manifest(mq2008):
    root = mq2008.parent
    parts = [check_against_manifest(root, r) for r in manifest_rows(root, "MQ2008/Fold1/")]
    assert len(parts) == 3
    assert sum(p.n_queries for p in parts) == 784
    assert sum(p.n_docs for p in parts) == 15211
    labels = np.concatenate([p.labels for p in parts])
    assert dict(zip(*np.unique(labels, return_counts=True))) == {0: 12279, 1: 2001, 2: 931}
    empty = sum(int((np.add.reduceat(p.labels > 0, p.boundaries[:-1]) == 0).sum()) for p in parts)
    assert empty == 220
    assert parts[0].doc_ids is not None and set(parts[0].extras) == {"inc", "prob"}
    row = manifest_rows(root, "MQ2008/Fold1/test")[0]
    assert file_sha256(root / row["gz_path"], uncompressed=True) == row["sha256"]
    assert file_sha256(root / row["gz_path"]) == row["gz_sha256"]


def test_ohsumed_all_files_against_manifest(ohsumed, ohsumed_null):
    root = ohsumed.parent.parent
    rows = manifest_rows(root, "OHSUMED/")
    assert len(rows) == 30
    done = set()
    for r in rows:  # a fold's vali file is another fold's test file: check each content once
        if r["sha256"] not in done:
            check_against_manifest(root, r)
            done.add(r["sha256"])
    assert len(done) == 20


def test_ohsumed_fold_totals_and_nulls(ohsumed_null):
    (fold, *_) = load_letor_folder(ohsumed_null)
    parts = [fold.train, fold.vali, fold.test]
    assert sum(p.n_queries for p in parts) == 106 and sum(p.n_docs for p in parts) == 16140
    assert sum(int(np.isnan(p.features).any(axis=1).sum()) for p in parts) == 7146
    # the three missing-value options against the slow reference loop, on the test part
    for mode in ("min", "zero"):
        ds = read_letor(fold.test_path, missing=mode)
        ref = fill_missing(fold.test.features, fold.test.boundaries, mode)
        np.testing.assert_array_equal(ds.features, ref)
        assert not np.isnan(ds.features).any()


def test_mq2008_matches_scikit_learn(mq2008):
    sk = pytest.importorskip("sklearn.datasets")
    path = mq2008 / "Fold1" / "vali.txt.gz"
    X, y, qid = sk.load_svmlight_file(io.BytesIO(gzip.decompress(path.read_bytes())),
                                      query_id=True)  # fmt: skip
    ds = read_letor(path)
    np.testing.assert_array_equal(ds.features, X.toarray().astype(np.float32))
    np.testing.assert_array_equal(ds.labels, y)
    np.testing.assert_array_equal(ds.query_ids.astype(int), qid[ds.boundaries[:-1]])
