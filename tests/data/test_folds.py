"""load_letor_folder on temporary trees and on the real MQ2008 layout."""

from __future__ import annotations

import gzip

import pytest

from ndcglab.data import Fold, load_letor_folder
from ndcglab.errors import DataFormatError

LINE = "1 qid:{q} 1:0.5 2:1\n0 qid:{q} 1:0.25 2:0\n"


def make_tree(root, names=("train.txt", "vali.txt", "test.txt"), folds=(1, 2, 10), gz=False):
    for k in folds:
        d = root / f"Fold{k}"
        d.mkdir(parents=True)
        for i, n in enumerate(names):
            data = LINE.format(q=f"{k}{i}").encode()
            if gz:
                (d / f"{n}.gz").write_bytes(gzip.compress(data))
            else:
                (d / n).write_bytes(data)
    return root


def test_fold_tree_in_numeric_order_and_lazy(tmp_path, monkeypatch):
    folds = load_letor_folder(make_tree(tmp_path / "ds"))
    assert [f.name for f in folds] == ["Fold1", "Fold2", "Fold10"]
    f = folds[2]
    assert isinstance(f, Fold) and f.train_path.name == "train.txt"
    assert f._cache == {}  # nothing read yet
    a = f.train
    assert a is f.train  # cached
    assert a.query_ids.tolist() == ["100"] and f.test.query_ids.tolist() == ["102"]
    assert set(f.paths) == {"train", "vali", "test"}
    f.clear_cache()
    assert f._cache == {}


def test_letor3_names_gz_and_read_options(tmp_path):
    root = make_tree(tmp_path / "x", names=("trainingset.txt", "validationset.txt",
                                            "testset.txt"), folds=(1,), gz=True)  # fmt: skip
    (f,) = load_letor_folder(root, missing="zero")
    assert f.vali_path.name == "validationset.txt.gz"
    assert f.read_options == {"missing": "zero"} and f.vali.n_docs == 2


def test_single_fold_folder_and_missing_part(tmp_path):
    make_tree(tmp_path / "ds", names=("train.txt", "test.txt"), folds=(3,))
    (f,) = load_letor_folder(tmp_path / "ds" / "Fold3")
    assert f.name == "Fold3" and f.vali_path is None
    assert f.train.n_docs == 2
    with pytest.raises(DataFormatError, match="no vali file"):
        _ = f.vali


def test_nothing_found(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    with pytest.raises(DataFormatError) as e:
        load_letor_folder(tmp_path / "empty")
    assert "no LETOR folds" in str(e.value) and "Fix:" in str(e.value)
    with pytest.raises(DataFormatError, match="not a folder"):
        load_letor_folder(tmp_path / "nope")


def test_real_mq2008_layout(mq2008):
    folds = load_letor_folder(mq2008)
    assert [f.name for f in folds] == [f"Fold{i}" for i in range(1, 6)]
    assert all(f.train_path.name == "train.txt.gz" for f in folds)


def test_real_ohsumed_null_layout(ohsumed_null):
    folds = load_letor_folder(ohsumed_null)
    assert len(folds) == 5 and folds[0].test_path.name == "testset.txt.gz"
