"""``ndcglab export --format onnx|torchscript``: the exported model, run by onnxruntime and by
``torch.jit.load`` in a process without ndcglab, gives ``ndcglab predict``'s scores from raw
features (normalisation folded in), and carries its metadata."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

import ndcglab
from ndcglab.cli.main import main
from ndcglab.data import load_dataset, read_letor, read_scores
from ndcglab.data.normalize import Normalizer
from ndcglab.models import MLPModel, TrainedModel, export_model, make_model, save_model

#: the score agreement asked of an exported model: max |a − b| ≤ RTOL · max |b|
RTOL = 1e-6

# A process that imports only numpy and the runtime, scores FEATURES.npy and writes OUT.npy,
# and fails unless ndcglab was never imported.
_RUNNER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    fmt, model, features, out = sys.argv[1:5]
    x = np.load(features)
    query = np.load(sys.argv[5]) if len(sys.argv) > 5 else None
    meta = {}
    if fmt == "onnx":
        import onnxruntime as ort
        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        feeds = {"features": x} if query is None else {"features": x, "query": query}
        (scores,) = sess.run(["scores"], feeds)
        meta = dict(sess.get_modelmeta().custom_metadata_map)
    else:
        import torch
        extra = {"ndcglab.json": ""}
        module = torch.jit.load(model, _extra_files=extra)
        args = [torch.from_numpy(x)] + ([] if query is None else [torch.from_numpy(query)])
        with torch.no_grad():
            scores = module(*args).numpy()
        meta = {"ndcglab.json": extra["ndcglab.json"].decode()}
    assert "ndcglab" not in sys.modules, "ndcglab was imported"
    np.save(out, np.asarray(scores))
    print(json.dumps(meta))
    """
)


def run_without_ndcglab(
    fmt: str, model: Path, x: np.ndarray, tmp: Path, query: np.ndarray | None = None
) -> tuple[np.ndarray, dict]:
    """Scores of the exported ``model`` on ``x`` (and ``query`` ids) and its metadata, from a
    fresh interpreter that never imports ndcglab (PYTHONPATH cleared as well)."""
    features = tmp / f"x_{fmt}.npy"
    out = tmp / f"s_{fmt}.npy"
    np.save(features, np.ascontiguousarray(x, dtype=np.float32))
    extra = []
    if query is not None:
        np.save(tmp / "q.npy", np.asarray(query, dtype=np.int64))
        extra = [str(tmp / "q.npy")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, fmt, str(model), str(features), str(out), *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return np.load(out), json.loads(proc.stdout.strip().splitlines()[-1])


def assert_same_scores(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    assert np.isfinite(got).all()
    scale = float(np.abs(want).max())
    assert scale > 0
    err = float(np.abs(got.astype(np.float64) - want).max())
    assert err <= RTOL * scale, f"max error {err:.3g} at score scale {scale:.3g}"


def predict_cli(model: Path, data: str, tmp: Path) -> np.ndarray:
    scores = tmp / "predict.txt"
    assert main(["predict", str(model), data, "--out", str(scores)]) == 0
    return read_scores(scores)


def _model_file(tmp: Path, kind: str, features: np.ndarray, method: str, **params) -> Path:
    torch.manual_seed(7)
    model = make_model(kind, features.shape[1], **params)
    norm = Normalizer.fit(method, features)
    path = tmp / f"{kind}-{method}.ndcglab"
    save_model(path, model, {"loss": "listnet"}, normalizer=norm)
    return path


def _export(model: Path, fmt: str, tmp: Path) -> Path:
    out = tmp / f"exported.{'onnx' if fmt == 'onnx' else 'pt'}"
    assert main(["export", str(model), "--format", fmt, "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
@pytest.mark.parametrize(
    ("kind", "method", "params"),
    [
        ("linear", "zscore", {"init": "normal"}),
        ("linear", "none", {"init": "normal"}),
        ("mlp", "zscore", {"hidden": [16, 8], "activation": "gelu"}),
        ("mlp", "none", {"hidden": [8], "activation": "tanh", "dropout": 0.3}),
    ],
)
def test_exported_model_scores_raw_features_like_predict(
    tmp_path: Path, fmt: str, kind: str, method: str, params: dict
) -> None:
    if fmt == "onnx":
        pytest.importorskip("onnx")
        pytest.importorskip("onnxruntime")
    spec = "synthetic:web40:3"
    ds = load_dataset(spec)
    # features far from standardised, so the folded z-score matters
    model = _model_file(tmp_path, kind, ds.features, method, **params)
    want = predict_cli(model, spec, tmp_path)
    exported = _export(model, fmt, tmp_path)
    got, _ = run_without_ndcglab(fmt, exported, ds.features, tmp_path)
    assert_same_scores(got, want)


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
@pytest.mark.parametrize("kind", ["linear", "mlp"])
def test_per_query_normalisation_takes_the_query_ids(tmp_path: Path, fmt: str, kind: str) -> None:
    """``query_minmax``: the exported model takes the query of each document as a second
    input and scores like ``ndcglab predict`` — with queries given in any order and ids."""
    if fmt == "onnx":
        pytest.importorskip("onnxruntime")
    spec = "synthetic:web40:5"
    ds = load_dataset(spec)
    x = ds.features.copy()
    model = (
        _model_file(tmp_path, kind, x, "query_minmax", hidden=[8])
        if kind == "mlp"
        else (_model_file(tmp_path, kind, x, "query_minmax", init="normal"))
    )
    want = predict_cli(model, spec, tmp_path)
    ids = np.repeat(np.arange(ds.n_queries, dtype=np.int64) * 7 + 3, ds.query_lengths)
    exported = _export(model, fmt, tmp_path)
    got, _ = run_without_ndcglab(fmt, exported, x, tmp_path, query=ids)
    assert_same_scores(got, want)
    # documents shuffled across queries: the same score for each document
    perm = np.random.default_rng(0).permutation(ds.n_docs)
    got_p, _ = run_without_ndcglab(fmt, exported, x[perm], tmp_path, query=ids[perm])
    assert_same_scores(got_p, want[perm])
    # missing values: ignored by the per-query minimum and maximum, then 0
    x[::5, 2] = np.nan
    x[ds.boundaries[0] : ds.boundaries[1], 4] = np.nan  # a whole query without feature 5
    trained = ndcglab.models.load_model(model)
    got_n, _ = run_without_ndcglab(fmt, exported, x, tmp_path, query=ids)
    assert_same_scores(got_n, trained.predict(x, group=ds.query_lengths))


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_missing_values_are_filled_after_normalisation(tmp_path: Path, fmt: str) -> None:
    """NaN and ±inf features become 0 after the z-score, as ``Normalizer.transform`` does."""
    if fmt == "onnx":
        pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(3)
    x = rng.normal(5.0, 3.0, size=(400, 6)).astype(np.float32)
    model = _model_file(tmp_path, "mlp", x, "zscore", hidden=[5])
    x[rng.random(x.shape) < 0.1] = np.nan
    x[0, 0], x[1, 1] = np.inf, -np.inf
    # the oracle: the documented rule written out in NumPy, then the torch model itself
    trained = ndcglab.models.load_model(model)
    norm = trained.normalizer
    z = ((x.astype(np.float64) - norm.mean).astype(np.float32)) * (1.0 / norm.scale).astype(
        np.float32
    )
    z[~np.isfinite(z)] = 0.0
    with torch.no_grad():
        want = trained.model(torch.from_numpy(z)).double().numpy()
    np.testing.assert_array_equal(trained.predict(x), want)
    got, _ = run_without_ndcglab(fmt, _export(model, fmt, tmp_path), x, tmp_path)
    assert_same_scores(got, want)


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_metadata_travels_in_the_file(tmp_path: Path, fmt: str) -> None:
    if fmt == "onnx":
        pytest.importorskip("onnxruntime")
    x = np.random.default_rng(0).normal(size=(50, 4)).astype(np.float32)
    model = _model_file(tmp_path, "linear", x, "zscore", init="normal")
    _, raw = run_without_ndcglab(fmt, _export(model, fmt, tmp_path), x, tmp_path)
    if fmt == "onnx":
        # strings are stored as they are, every other value as JSON
        plain = ("ndcglab_version", "torch_version", "loss")
        meta = {k: (v if k in plain else json.loads(v)) for k, v in raw.items()}
    else:
        meta = json.loads(raw["ndcglab.json"])
    assert meta["ndcglab_version"] == ndcglab.__version__
    assert meta["n_features"] == 4
    assert meta["loss"] == "listnet"
    norm = Normalizer.fit("zscore", x)
    assert meta["normalization"]["method"] == "zscore"
    np.testing.assert_array_equal(meta["normalization"]["mean"], norm.mean)
    np.testing.assert_array_equal(meta["normalization"]["scale"], norm.scale)
    assert meta["model"]["kind"] == "linear"


def test_python_function_accepts_a_model_object(tmp_path: Path) -> None:
    """``export_model`` takes a TrainedModel (or a bare RankModel) as well as a path, and
    leaves the model it was given trainable."""
    x = np.random.default_rng(1).normal(size=(30, 3)).astype(np.float32)
    torch.manual_seed(0)
    mlp = MLPModel(3, hidden=[4])
    trained = TrainedModel(model=mlp, normalizer=Normalizer.fit("zscore", x))
    out = export_model(trained, tmp_path / "m.pt", "torchscript")
    got, _ = run_without_ndcglab("torchscript", out, x, tmp_path)
    assert_same_scores(got, trained.predict(x))
    assert all(p.requires_grad for p in mlp.parameters())
    bare = export_model(mlp, tmp_path / "bare.pt", "torchscript")
    got, _ = run_without_ndcglab("torchscript", bare, x, tmp_path)
    assert_same_scores(got, mlp.predict(x))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_mq2008_trained_model(mq2008: Path, tmp_path: Path, fmt: str) -> None:
    """A model trained by ``ndcglab train`` on MQ2008 Fold1, exported, scores Fold1's test file
    like ``ndcglab predict``."""
    if fmt == "onnx":
        pytest.importorskip("onnxruntime")
    fold = mq2008 / "Fold1"
    model = tmp_path / "mq.ndcglab"
    args = ["train", str(fold), "--model", "mlp", "--hidden", "32,16", "--epochs", "3", "-q"]
    assert main([*args, "--out", str(model), "--normalize", "zscore"]) == 0
    (test,) = fold.glob("test.txt*")
    want = predict_cli(model, str(test), tmp_path)
    exported = _export(model, fmt, tmp_path)
    got, _ = run_without_ndcglab(fmt, exported, read_letor(test).features, tmp_path)
    assert_same_scores(got, want)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", *args], capture_output=True, text=True, timeout=300
    )


def test_cli_refusals_are_one_line(tmp_path: Path) -> None:
    x = np.random.default_rng(2).normal(size=(40, 3)).astype(np.float32)
    lin = _model_file(tmp_path, "linear", x, "zscore")
    proc = _cli("export", str(lin), "--format", "lightgbm", "--out", str(tmp_path / "t.txt"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "onnx or torchscript" in proc.stderr and "Fix:" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "t.txt").exists()

    proc = _cli("export", str(lin), "--format", "pmml", "--out", str(tmp_path / "t.txt"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "pmml" in proc.stderr

    proc = _cli("export", str(tmp_path / "absent"), "--format", "onnx", "--out", "x.onnx")
    assert proc.returncode == 2 and "not found" in proc.stderr


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_adarank_exports_like_predict(tmp_path: Path, fmt: str) -> None:
    """AdaRank is in the kinds table with the torch formats: its export scores like predict."""
    if fmt == "onnx":
        pytest.importorskip("onnx")
        pytest.importorskip("onnxruntime")
    spec = "synthetic:web40:3"
    model = tmp_path / "ada.ndcglab"
    assert main(["train", spec, "--model", "adarank", "--out", str(model)]) == 0
    want = predict_cli(model, spec, tmp_path)
    got, _meta = run_without_ndcglab(
        fmt, _export(model, fmt, tmp_path), load_dataset(spec).features, tmp_path
    )
    assert_same_scores(got, want)
