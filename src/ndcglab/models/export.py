"""Exporting a trained linear or MLP ranker to ONNX or TorchScript, normalisation included.

The exported model is one self-contained graph that takes **raw** features — a float32
``(N, F)`` matrix, as read from the data file — and returns ``(N,)`` scores (float32; float64
for a model trained in float64), the numbers :meth:`ndcglab.models.TrainedModel.predict` gives
(as float64). The feature normalisation the model was trained with is folded into the graph,
computed the way :class:`ndcglab.data.Normalizer` computes it:

* ``none`` — ``z = x``;
* ``zscore`` — ``z = float32(float64(x) − μ) · float32(1/σ)`` (the subtraction in double
  precision, the product in single, as the NumPy transform does);
* then, under every method, entries of ``z`` that are NaN (missing) or ±inf become 0;
* ``query_minmax`` needs the query of every document and is refused (a :class:`SpecError`
  naming the fix: retrain with ``normalize=zscore`` or ``none``).

Metadata travel inside the file: ONNX ``metadata_props`` (strings as they are, other values as
JSON) and TorchScript's extra file ``ndcglab.json`` (one JSON object) hold the same keys —
``ndcglab_version``, ``torch_version``, ``n_features``, ``feature_names``, ``normalization``
(method and statistics, and that it is applied inside the graph), ``model`` (the
architecture), ``loss``, ``input`` and ``output`` (names, dtype, shape). The ONNX graph's input
is named ``features`` and its output ``scores``, with a dynamic first dimension; the
TorchScript module's ``forward(features)`` returns the scores. Neither needs ndcglab to run:
``onnxruntime.InferenceSession(path)`` or ``torch.jit.load(path)``.

ONNX export uses torch's TorchScript-based exporter (``torch.onnx.export(..., dynamo=False)``),
which needs the ``onnx`` package (the ``onnx`` extra) but no network and no ``onnxscript``.
"""

from __future__ import annotations

import copy
import io
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._atomic import write_bytes_atomic
from .._compat import require
from .._versions import package_versions
from ..errors import SpecError
from .base import RankModel, torch

if TYPE_CHECKING:
    from .io import TrainedModel

__all__ = [
    "EXPORT_FORMATS",
    "INPUT_NAME",
    "METADATA_FILE",
    "ONNX_OPSET",
    "OUTPUT_NAME",
    "export_metadata",
    "export_model",
    "exportable_module",
]

#: the formats :func:`export_model` writes
EXPORT_FORMATS = ("onnx", "torchscript")
#: the name of the ONNX graph's input (raw features, float32 ``(N, F)``)
INPUT_NAME = "features"
#: the name of the ONNX graph's output (scores, ``(N,)``, the model's dtype)
OUTPUT_NAME = "scores"
#: the TorchScript extra file holding the metadata JSON
METADATA_FILE = "ndcglab.json"
#: the ONNX operator set written
ONNX_OPSET = 17


class _RawFeatureRanker(torch.nn.Module):
    """The trained model with its normalisation in front: raw features in, scores out."""

    def __init__(self, model: RankModel, method: str, mean: Any, scale: Any) -> None:
        super().__init__()
        self.model = model
        self.zscore = method == "zscore"
        self.float64 = _model_dtype(model) == "float64"
        f = model.n_features
        mu = np.zeros(f) if mean is None else np.asarray(mean, dtype=np.float64)
        sd = np.ones(f) if scale is None else np.asarray(scale, dtype=np.float64)
        self.register_buffer("mean", torch.as_tensor(mu, dtype=torch.float64))
        self.register_buffer(
            "inv_scale", torch.as_tensor((1.0 / sd).astype(np.float32), dtype=torch.float32)
        )

    def forward(self, features: Any) -> Any:
        x = features
        if self.zscore:
            x = (x.to(torch.float64) - self.mean).to(torch.float32) * self.inv_scale
        x = torch.where(torch.isfinite(x), x, torch.zeros_like(x))
        if self.float64:
            x = x.to(torch.float64)
        return self.model(x)


def _model_dtype(model: RankModel) -> str:
    """``"float64"`` or ``"float32"``: the dtype of the model's parameters (its scores')."""
    p = next(model.parameters(), None)
    return "float64" if p is not None and p.dtype == torch.float64 else "float32"


def _as_trained(model: Any) -> TrainedModel:
    from .io import TrainedModel, load_model

    if isinstance(model, str | os.PathLike):
        return load_model(model)
    if isinstance(model, TrainedModel):
        return model
    if isinstance(model, RankModel):
        return TrainedModel(model=model)
    raise SpecError(
        f"cannot export a {type(model).__name__}: give a model file, a TrainedModel or a "
        "RankModel (boosted trees: ndcglab.gbdt.export_lightgbm)"
    )


def exportable_module(model: Any) -> Any:
    """The ``torch.nn.Module`` that is exported: ``model``'s normalisation, then the model.

    ``model`` is a model file path, a :class:`~ndcglab.models.TrainedModel` or a bare
    :class:`~ndcglab.models.RankModel` (no normalisation). Only the ``linear`` and ``mlp``
    families are exported; ``query_minmax`` normalisation is refused (see the module
    docstring)."""
    trained = _as_trained(model)
    kind = trained.model.kind
    if kind not in ("linear", "mlp"):
        raise SpecError(
            f"cannot export a model of kind {kind!r}: ONNX and TorchScript export covers the "
            "linear and mlp rankers. Fix: boosted trees export as LightGBM model text "
            "(--format lightgbm); AdaRank is a linear combination of features, score it with "
            "ndcglab predict"
        )
    norm = trained.normalizer
    if norm.method == "query_minmax":
        raise SpecError(
            "the model normalises features per query (query_minmax), which needs every "
            "document's query and cannot be folded into a per-document graph. Fix: retrain with "
            "normalize=zscore or none (e.g. ndcglab train --normalize zscore)"
        )
    inner = copy.deepcopy(trained.model).cpu().requires_grad_(False)
    module = _RawFeatureRanker(inner, norm.method, norm.mean, norm.scale)
    module.eval()
    return module


def export_metadata(model: Any) -> dict[str, Any]:
    """The metadata written into an exported file (see the module docstring)."""
    trained = _as_trained(model)
    norm = trained.normalizer.to_dict()
    norm["applied"] = "inside the exported graph: give it raw features"
    versions = package_versions(("ndcglab", "torch"))
    return {
        "ndcglab_version": versions["ndcglab"],
        "torch_version": versions["torch"],
        "n_features": trained.n_features,
        "feature_names": trained.feature_names,
        "normalization": norm,
        "model": trained.model.config(),
        "loss": trained.metadata.get("loss"),
        "input": {"name": INPUT_NAME, "dtype": "float32", "shape": ["N", trained.n_features]},
        "output": {"name": OUTPUT_NAME, "dtype": _model_dtype(trained.model), "shape": ["N"]},
    }


def _torchscript_bytes(module: Any, meta: dict[str, Any]) -> bytes:
    example = torch.zeros((2, meta["n_features"]), dtype=torch.float32)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch announces TorchScript's successor, torch.export
        scripted = torch.jit.trace(module, (example,), check_trace=False)
        buf = io.BytesIO()
        torch.jit.save(scripted, buf, _extra_files={METADATA_FILE: json.dumps(meta)})
    return buf.getvalue()


def _onnx_bytes(module: Any, meta: dict[str, Any]) -> bytes:
    onnx = require("onnx")
    example = torch.zeros((2, meta["n_features"]), dtype=torch.float32)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript-based exporter announces its successor
        graph = Path(tmp) / "model.onnx"
        torch.onnx.export(
            module,
            (example,),
            graph,
            dynamo=False,
            input_names=[INPUT_NAME],
            output_names=[OUTPUT_NAME],
            dynamic_axes={INPUT_NAME: {0: "n_documents"}, OUTPUT_NAME: {0: "n_documents"}},
            opset_version=ONNX_OPSET,
        )
        proto = onnx.load_model_from_string(graph.read_bytes())
    del proto.metadata_props[:]
    for key, value in meta.items():
        entry = proto.metadata_props.add()
        entry.key = key
        entry.value = value if isinstance(value, str) else json.dumps(value)
    proto.producer_name = "ndcglab"
    proto.producer_version = str(meta["ndcglab_version"])
    proto.doc_string = (
        f"ndcglab {meta['model']['kind']} ranker: raw float32 features ({meta['n_features']} per "
        f"document) in, one float32 score per document out; normalisation "
        f"{meta['normalization']['method']} applied inside the graph"
    )
    onnx.checker.check_model(proto)
    return bytes(proto.SerializeToString())


def export_model(model: Any, out: str | os.PathLike[str], format: str = "onnx") -> Path:
    """Write ``model`` as an ONNX (``format="onnx"``) or TorchScript (``"torchscript"``) file.

    ``model`` is a model file written by ``ndcglab train`` / :func:`ndcglab.models.save_model`,
    a :class:`~ndcglab.models.TrainedModel` or a :class:`~ndcglab.models.RankModel`. The file
    takes raw features (normalisation inside) and carries the metadata of
    :func:`export_metadata`; it is written atomically. Returns the path written.
    """
    fmt = str(format).lower()
    if fmt not in EXPORT_FORMATS:
        raise SpecError(
            f"unknown export format {format!r}; known: {', '.join(EXPORT_FORMATS)} "
            "(boosted trees: lightgbm)"
        )
    trained = _as_trained(model)
    module = exportable_module(trained)
    meta = export_metadata(trained)
    data = _onnx_bytes(module, meta) if fmt == "onnx" else _torchscript_bytes(module, meta)
    return write_bytes_atomic(out, data)
