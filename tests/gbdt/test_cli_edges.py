"""The edges of boosted trees on the command line (issue 44, items 1-6), each run as a child
process: a damaged model file, out-of-range, unknown or ndcglab-owned engine parameters, a loss
the engine cannot use, and the default thread count. Every bad input ends as exit 2 with one
``ndcglab: error:`` line (never exit 70, a signal, or a model trained differently than asked)."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("lightgbm")
xgboost = pytest.importorskip("xgboost")

from ndcglab.data import make_synthetic, write_svmlight  # noqa: E402
from ndcglab.gbdt import fit_gbdt  # noqa: E402
from ndcglab.gbdt.xgboost_train import fit_xgboost  # noqa: E402

from ..conftest import cli_argv  # noqa: E402


def _cli(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_argv(*args), capture_output=True, text=True, timeout=300, cwd=cwd, check=False
    )


#: a child that runs ``ndcglab`` once per argv of its JSON argument and prints, as JSON, the
#: exit status, standard error and standard output of each (one interpreter for many commands;
#: a command that crashes the process fails the whole child, which the caller reports)
_BATCH = """
import contextlib, io, json, sys
from ndcglab.cli.main import main
out = []
for argv in json.loads(sys.argv[1]):
    err, std = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(std):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code
    out.append([rc, err.getvalue(), std.getvalue()])
print(json.dumps(out))
"""


class _Run:
    """What one command of :func:`_batch` gave."""

    def __init__(self, returncode: int, stderr: str, stdout: str) -> None:
        self.returncode, self.stderr, self.stdout = returncode, stderr, stdout


def _batch(*commands: list[object]) -> list[_Run]:
    """Run each command (``ndcglab`` arguments) in one child process."""
    argvs = [[str(a) for a in cmd] for cmd in commands]
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _BATCH, json.dumps(argvs)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    return [_Run(*r) for r in json.loads(proc.stdout.strip().splitlines()[-1])]


def _one_error(proc: subprocess.CompletedProcess[str] | _Run, *words: str) -> str:
    """The one ``ndcglab: error:`` line of a refused command (exit 2), holding ``words``."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("ndcglab: error: "), proc.stderr[-2000:]
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small LETOR file and a LightGBM and an XGBoost model trained on it."""
    d = tmp_path_factory.mktemp("edges")
    ds = make_synthetic("small", seed=5)
    write_svmlight(d / "data.txt", ds)
    opts = {"num_boost_round": 4, "min_data_in_leaf": 2, "num_threads": 1}
    fit_gbdt(ds, "listnet", params=opts).save(d / "lgb.ndcglab")
    fit_xgboost(ds, "listnet", params=opts).save(d / "xgb.ndcglab")
    return {"dir": d, "data": d / "data.txt", "lgb": d / "lgb.ndcglab", "xgb": d / "xgb.ndcglab"}


def _rewrite(src: Path, dst: Path, member: str, edit, *, keep_checksum: bool = True) -> Path:
    """A copy of the model file ``src`` whose ``member`` is ``edit(bytes)``; without
    ``keep_checksum`` the metadata has no checksum, as files written before it was recorded."""
    with zipfile.ZipFile(src) as z:
        parts = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(parts["metadata.json"])
    if not keep_checksum:
        meta["model"].pop("sha256", None)
    parts["metadata.json"] = json.dumps(meta).encode()
    parts[member] = edit(parts[member])
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as z:
        for name, data in parts.items():
            z.writestr(name, data)
    return dst


def _half(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _drop_leaf_value(data: bytes) -> bytes:
    """LightGBM's text, end marker kept, with one number cut from the first ``leaf_value``."""
    text = data.decode()
    start = text.index("leaf_value=")
    end = text.index("\n", start)
    line = text[start:end]
    return (text[:start] + line[: line.rindex(" ")] + text[end:]).encode()


def _change_a_leaf(data: bytes) -> bytes:
    """LightGBM's text with one leaf value changed (the structure is intact)."""
    text = data.decode()
    start = text.index("leaf_value=") + len("leaf_value=")
    return (text[:start] + "9" + text[start:]).encode()


# -- item 1: a damaged model file


_DAMAGE = [
    # (model, member, edit, checksum kept, words the one line must hold)
    ("lgb", "lightgbm.txt", _half, False, ("lightgbm.txt", "end of trees")),
    ("lgb", "lightgbm.txt", _drop_leaf_value, False, ("tree 0", "leaf_value")),
    ("lgb", "lightgbm.txt", _change_a_leaf, True, ("SHA-256",)),
    ("xgb", "xgboost.json", _half, False, ("xgboost.json", "not JSON")),
    ("xgb", "xgboost.json", lambda b: b.replace(b'"1', b'"2', 1), True, ("SHA-256",)),
]


def test_damaged_model_member_is_one_error_line(files: dict[str, Path], tmp_path: Path) -> None:
    """A truncated or edited engine member of a valid model zip: predict and export say so in
    one line (before, LightGBM aborted the process: exit 134/139)."""
    commands, expected = [], []
    for i, (model, member, edit, checksum, words) in enumerate(_DAMAGE):
        bad = _rewrite(files[model], tmp_path / f"bad{i}.ndcglab", member, edit,
                       keep_checksum=checksum)  # fmt: skip
        fmt = "lightgbm" if model == "lgb" else "xgboost"
        commands += [
            ["predict", bad, files["data"], "--out", tmp_path / f"s{i}.txt"],
            ["export", bad, "--format", fmt, "--out", tmp_path / f"e{i}"],
        ]
        expected += [words, words]
    for run, words in zip(_batch(*commands), expected, strict=True):
        _one_error(run, *words)
    assert not list(tmp_path.glob("s*.txt")) and not list(tmp_path.glob("e*"))


def test_a_file_without_checksum_still_predicts(files: dict[str, Path], tmp_path: Path) -> None:
    old = _rewrite(files["lgb"], tmp_path / "old.ndcglab", "lightgbm.txt", bytes,
                   keep_checksum=False)  # fmt: skip
    proc = _cli("predict", old, files["data"], "--out", tmp_path / "s.txt")
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(files["lgb"]) as z:  # and a new file records the checksum
        assert "lightgbm.txt" in json.loads(z.read("metadata.json"))["model"]["sha256"]


# -- items 2, 3, 4, 6: the engine's parameters and the loss, refused before training

_REFUSED = [
    # (engine, extra arguments, words the one line must hold)
    ("xgboost", ["--gbdt-param", "max_depth=-5"], ["--gbdt-param max_depth=-5", "XGBoost"]),
    ("xgboost", ["--gbdt-param", "max_bin=1"], ["--gbdt-param max_bin=1", "max_bin"]),
    ("lightgbm", ["--gbdt-param", "max_bin=1"], ["--gbdt-param max_bin=1", "LightGBM"]),
    ("xgboost", ["--gbdt-param", "eta=-1"], ["--gbdt-param eta=-1", "(0, 1]"]),
    ("xgboost", ["--gbdt-param", "eta=nan"], ["--gbdt-param eta=nan", "finite"]),
    ("xgboost", ["--lr", "1e308"], ["--lr", "(0, 1]"]),
    ("lightgbm", ["--lr", "1e308"], ["--lr", "(0, 1]"]),
    ("xgboost", ["--gbdt-param", "booster=gblinear"], ["booster=gblinear", "gbtree"]),
    ("xgboost", ["--gbdt-param", "lambda_l2=100"], ["lambda_l2=100", "--gbdt-param lambda=100"]),
    ("xgboost", ["--gbdt-param", "frobnicate=1"], ["frobnicate=1", "XGBoost"]),
    ("lightgbm", ["--gbdt-param", "frobnicate=1"], ["frobnicate=1", "LightGBM"]),
    ("lightgbm", ["--gbdt-param", "objective=regression"], ["objective", "--loss"]),
    ("xgboost", ["--loss", "lightgbm:lambdarank"], ["--engine xgboost", "--engine lightgbm"]),
    ("lightgbm", ["--loss", "xgboost:rank:ndcg"], ["--engine xgboost"]),
    ("lightgbm", ["--loss", "adarank"], ["--model gbdt", "--model adarank"]),
    ("lightgbm", ["--gbdt-param", "alpha=1"], ["--gbdt-param alpha=1", "lambda_l1=1"]),
    ("lightgbm", ["--gbdt-param", "sigmoid=2"], ["sigmoid=2", "lightgbm:lambdarank"]),
    (
        "lightgbm",
        ["--loss", "lightgbm:rank_xendcg", "--gbdt-param", "sigmoid=5"],
        ["sigmoid=5", "rank_xendcg"],
    ),
]


def test_bad_tree_option_is_one_error_line_before_training(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """Each bad engine parameter or loss: exit 2 and one line naming the option (before: exit 70
    "internal error", a model trained without the parameter, or a crash at predict time)."""
    out = tmp_path / "m.ndcglab"
    runs = _batch(*(
        ["train", files["data"], "--model", "gbdt", "--engine", engine, "--rounds", "2",
         "--out", out, "-q", *extra]
        for engine, extra, _ in _REFUSED
    ))  # fmt: skip
    for run, (engine, extra, words) in zip(runs, _REFUSED, strict=True):
        line = _one_error(run, *words)
        assert "internal error" not in line, (engine, extra)
    assert not out.exists()


def test_lightgbm_ignores_what_other_objectives_read_so_ndcglab_refuses_it() -> None:
    """The oracle behind the refusal: LightGBM trains the same trees whatever ``alpha`` or
    ``fair_c`` say under a ranking objective; under lambdarank ``sigmoid`` is read (the trees
    change) and so it is accepted there."""
    import lightgbm as lgb

    from ndcglab.errors import SpecError
    from ndcglab.gbdt.params import check_tree_params, lightgbm_known_params

    rng = np.random.default_rng(0)
    x, y = rng.random((60, 3)), rng.integers(0, 3, 60).astype(float)

    def trees(**extra: object) -> str:
        params = {"objective": "lambdarank", "verbosity": -1, "num_threads": 1,
                  "min_data_in_leaf": 2, **extra}  # fmt: skip
        booster = lgb.train(params, lgb.Dataset(x, label=y, group=[20, 20, 20]), 3)
        return booster.model_to_string().split("parameters:")[0]

    assert trees(alpha=0.1) == trees(alpha=0.9) == trees(fair_c=7.0) == trees()
    assert trees(sigmoid=0.5) != trees(sigmoid=2.0)
    check_tree_params("lightgbm", 0.1, {"sigmoid": 0.5}, {"objective": "lambdarank"})
    assert lightgbm_known_params()["reg_alpha"] == "lambda_l1"  # LightGBM's L1 penalty: kept
    check_tree_params("lightgbm", 0.1, {"reg_alpha": 0.5}, {"objective": "lambdarank"})
    with pytest.raises(SpecError, match=r"lambda_l1=0\.5"):
        check_tree_params("lightgbm", 0.1, {"alpha": 0.5}, {"objective": "lambdarank"})


def test_the_help_example_is_a_parameter_of_each_engine_it_names(files: dict[str, Path]) -> None:
    from ndcglab.gbdt.params import lightgbm_known_params

    proc = _cli("train", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "lambda_l2=1 (LightGBM)" in text and "lambda=1 (XGBoost)" in text
    assert "lambda_l2" in lightgbm_known_params()


# -- item 5: one thread rule


def test_trees_train_on_the_default_thread_count(files: dict[str, Path], tmp_path: Path) -> None:
    """Without --threads, small data trains on 1 thread (the rule torch follows), recorded in
    the model's parameters; before, LightGBM was handed 0 = every core."""
    from ndcglab.training.config import auto_threads

    assert auto_threads(100, 5, available=16, load=0.0) == 1  # small data
    assert auto_threads(10**6, 100, available=16, load=3.5) == 12  # idle cores
    assert auto_threads(10**6, 100, available=2, load=7.0) == 1  # a busy machine
    out = tmp_path / "m.ndcglab"
    proc = _cli("train", files["data"], "--model", "gbdt", "--rounds", "2", "--out", out,
                "--format", "json", "-q")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["params"]["num_threads"] == 1
    assert "LightGBM" in " ".join(_cli("train", "--help").stdout.split()).split("--threads")[1]


@pytest.mark.slow
def test_default_and_one_thread_give_the_same_trees(files: dict[str, Path], tmp_path: Path) -> None:
    from ndcglab.data import read_letor
    from ndcglab.gbdt import load_gbdt

    ds = read_letor(files["data"])
    models = []
    for extra in ([], ["--threads", "2"]):
        out = tmp_path / f"m{len(models)}.ndcglab"
        proc = _cli("train", files["data"], "--model", "gbdt", "--rounds", "3", "--out", out,
                    "-q", *extra)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        models.append(load_gbdt(out))
    np.testing.assert_array_equal(models[0].predict(ds), models[1].predict(ds))


# -- item 7: export formats from the table of model kinds; boosted trees to ONNX


def test_export_formats_come_from_the_kinds_table(files: dict[str, Path], tmp_path: Path) -> None:
    from ndcglab.cli import export as export_cli
    from ndcglab.training.kinds import KINDS

    source = Path(export_cli.__file__).read_text()
    assert '"gbdt"' not in source and "'gbdt'" not in source  # no kind-string test left
    assert KINDS["gbdt"].export_formats == ("lightgbm", "xgboost", "onnx")
    assert set(export_cli.FORMATS) == {f for k in KINDS.values() for f in k.export_formats}
    (run,) = _batch(["export", files["lgb"], "--format", "torchscript", "--out", tmp_path / "t"])
    _one_error(run, "gbdt", "lightgbm or xgboost or onnx", "not torchscript")


def test_boosted_trees_export_to_onnx_scored_like_predict(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """LightGBM (ndcglab's objective and LightGBM's lambdarank) and XGBoost trees as ONNX:
    onnxruntime's scores of the raw features equal ``ndcglab predict``'s to float32 precision."""
    ort = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxmltools")
    from ndcglab.data import read_letor, read_scores

    ds = read_letor(files["data"])
    lambdarank = tmp_path / "lambdarank.ndcglab"
    fit_gbdt(ds, "lightgbm:lambdarank",
             params={"num_boost_round": 4, "min_data_in_leaf": 2}).save(lambdarank)  # fmt: skip
    models = {"lgb": files["lgb"], "lambdarank": lambdarank, "xgb": files["xgb"]}
    commands = []
    for name, model in models.items():
        commands += [
            ["export", model, "--format", "onnx", "--out", tmp_path / f"{name}.onnx", "--json"],
            ["predict", model, files["data"], "--out", tmp_path / f"{name}.txt"],
        ]
    runs = _batch(*commands)
    for name, (export, predict) in zip(models, zip(runs[::2], runs[1::2], strict=True),
                                       strict=True):  # fmt: skip
        assert export.returncode == 0 and predict.returncode == 0, (export.stderr, predict.stderr)
        assert json.loads(export.stdout)["format"] == "onnx"
        session = ort.InferenceSession(
            str(tmp_path / f"{name}.onnx"), providers=["CPUExecutionProvider"]
        )
        assert [i.name for i in session.get_inputs()] == ["features"]
        (scores,) = session.run(["scores"], {"features": ds.features.astype(np.float32)})
        assert scores.shape == (ds.n_docs,) and scores.dtype == np.float32
        expected = read_scores(tmp_path / f"{name}.txt", n_expected=ds.n_docs)
        assert np.ptp(expected) > 0, name  # the trees do split
        np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-6, err_msg=name)
